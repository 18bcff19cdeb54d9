// Arithmetic in GF(2^8), the symbol field of Cairn's Reed-Solomon codes.
// The field is ISA-L's: reduction polynomial x^8+x^4+x^3+x^2+1 (0x11D) and
// primitive element alpha = 2, so that parity computed here and parity
// computed by ISA-L's ec_encode_data agree byte for byte. Mul and friends use
// log/antilog tables built at compile time; MulBase is the shift-and-add
// reference twin the tests compare them (and ISA-L's gf_mul) against.
// Thread-safety: pure functions over constant tables.
#ifndef CAIRN_CODEC_GF256_H_
#define CAIRN_CODEC_GF256_H_

#include <array>
#include <cassert>
#include <cstdint>

namespace cairn::gf256 {

inline constexpr unsigned kPolynomial = 0x11D;
inline constexpr int kOrder = 255;  // multiplicative group order

struct Tables {
  // exp[i] = alpha^i for i in [0, 2*255): doubled so that exp[log a + log b]
  // needs no reduction modulo 255.
  std::array<uint8_t, 2 * kOrder> exp{};
  // log[a] for a != 0; log[0] is unused (0 has no logarithm).
  std::array<uint8_t, 256> log{};
};

constexpr Tables MakeTables() {
  Tables t;
  unsigned x = 1;
  for (int i = 0; i < kOrder; ++i) {
    t.exp[i] = static_cast<uint8_t>(x);
    t.exp[i + kOrder] = static_cast<uint8_t>(x);
    t.log[x] = static_cast<uint8_t>(i);
    x <<= 1;
    if (x & 0x100) x ^= kPolynomial;
  }
  return t;
}

inline constexpr Tables kTables = MakeTables();

inline uint8_t Mul(uint8_t a, uint8_t b) {
  if (a == 0 || b == 0) return 0;
  return kTables.exp[kTables.log[a] + kTables.log[b]];
}

// REQUIRES: a != 0.
inline uint8_t Inv(uint8_t a) {
  assert(a != 0);
  return kTables.exp[kOrder - kTables.log[a]];
}

// a / b. REQUIRES: b != 0.
inline uint8_t Div(uint8_t a, uint8_t b) {
  assert(b != 0);
  if (a == 0) return 0;
  return kTables.exp[kTables.log[a] + kOrder - kTables.log[b]];
}

// alpha^e for any e >= 0.
inline uint8_t Exp(unsigned e) { return kTables.exp[e % kOrder]; }

// log_alpha(a) in [0, 255). REQUIRES: a != 0.
inline int Log(uint8_t a) {
  assert(a != 0);
  return kTables.log[a];
}

// Reference twin of Mul: carry-less shift-and-add with reduction by 0x11D,
// written from the definition and sharing nothing with the tables.
uint8_t MulBase(uint8_t a, uint8_t b);

// Reference twin of Exp: alpha^e by e repeated MulBase(., 2).
uint8_t ExpBase(unsigned e);

}  // namespace cairn::gf256

#endif  // CAIRN_CODEC_GF256_H_
