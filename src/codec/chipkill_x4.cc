#include "codec/chipkill_x4.h"

#include <cassert>
#include <cstddef>
#include <utility>

namespace cairn {

namespace {

constexpr unsigned kGf16Polynomial = 0x13;  // x^4 + x + 1

constexpr std::array<uint8_t, 256> MakeGf16Products() {
  std::array<uint8_t, 256> t{};
  for (unsigned a = 0; a < 16; ++a) {
    for (unsigned b = 0; b < 16; ++b) {
      unsigned x = a, p = 0;
      for (unsigned y = b; y != 0; y >>= 1) {
        if (y & 1) p ^= x;
        x <<= 1;
        if (x & 0x10) x ^= kGf16Polynomial;
      }
      t[a << 4 | b] = static_cast<uint8_t>(p);
    }
  }
  return t;
}

constexpr std::array<uint8_t, 256> kGf16Products = MakeGf16Products();

uint8_t Gf16Inv(uint8_t a) {
  for (uint8_t y = 1; y < 16; ++y) {
    if (Gf16Mul(a, y) == 1) return y;
  }
  return 0;
}

using Vec4 = std::array<uint8_t, 4>;  // a point of PG(3,16), coordinates x0..x3
using Mat4 = std::array<Vec4, 4>;     // row-major

uint16_t Pack(const Vec4& v) {
  return static_cast<uint16_t>(v[0] | v[1] << 4 | v[2] << 8 | v[3] << 12);
}

// Scales v so that its first nonzero coordinate is 1 (the canonical
// representative of the projective point).
Vec4 Normalize(Vec4 v) {
  for (uint8_t x : v) {
    if (x != 0) {
      uint8_t inv = Gf16Inv(x);
      for (auto& y : v) y = Gf16Mul(y, inv);
      break;
    }
  }
  return v;
}

// Rank of the given vectors (Gaussian elimination on a copy).
int Rank(std::vector<Vec4> rows) {
  int rank = 0;
  for (int col = 0; col < 4 && rank < static_cast<int>(rows.size()); ++col) {
    size_t pivot = rank;
    while (pivot < rows.size() && rows[pivot][col] == 0) ++pivot;
    if (pivot == rows.size()) continue;
    std::swap(rows[pivot], rows[rank]);
    uint8_t inv = Gf16Inv(rows[rank][col]);
    for (auto& x : rows[rank]) x = Gf16Mul(x, inv);
    for (size_t r = 0; r < rows.size(); ++r) {
      if (static_cast<int>(r) == rank || rows[r][col] == 0) continue;
      uint8_t f = rows[r][col];
      for (int c = 0; c < 4; ++c) rows[r][c] ^= Gf16Mul(f, rows[rank][c]);
    }
    ++rank;
  }
  return rank;
}

// Inverse of m. REQUIRES: m invertible.
Mat4 Invert(Mat4 m) {
  Mat4 inv{};
  for (int i = 0; i < 4; ++i) inv[i][i] = 1;
  for (int col = 0; col < 4; ++col) {
    int pivot = col;
    while (m[pivot][col] == 0) ++pivot;
    std::swap(m[pivot], m[col]);
    std::swap(inv[pivot], inv[col]);
    uint8_t s = Gf16Inv(m[col][col]);
    for (int c = 0; c < 4; ++c) {
      m[col][c] = Gf16Mul(m[col][c], s);
      inv[col][c] = Gf16Mul(inv[col][c], s);
    }
    for (int r = 0; r < 4; ++r) {
      if (r == col || m[r][col] == 0) continue;
      uint8_t f = m[r][col];
      for (int c = 0; c < 4; ++c) {
        m[r][c] ^= Gf16Mul(f, m[col][c]);
        inv[r][c] ^= Gf16Mul(f, inv[col][c]);
      }
    }
  }
  return inv;
}

Vec4 Apply(const Mat4& m, const Vec4& v) {
  Vec4 out{};
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) out[r] ^= Gf16Mul(m[r][c], v[c]);
  }
  return out;
}

}  // namespace

uint8_t Gf16Mul(uint8_t a, uint8_t b) { return kGf16Products[(a & 0xF) << 4 | (b & 0xF)]; }

uint8_t Gf16MulBase(uint8_t a, uint8_t b) {
  unsigned x = a & 0xF, p = 0;
  for (unsigned y = b & 0xF; y != 0; y >>= 1) {
    if (y & 1) p ^= x;
    x <<= 1;
    if (x & 0x10) x ^= kGf16Polynomial;
  }
  return static_cast<uint8_t>(p);
}

ChipkillX4Code::ChipkillX4Code() {
  // c with absolute trace 1 makes x^2 + x + c irreducible, and then the
  // quadric below is elliptic: an ovoid of q^2 + 1 = 257 points.
  uint8_t c = 1;
  for (; c < 16; ++c) {
    uint8_t c2 = Gf16Mul(c, c), c4 = Gf16Mul(c2, c2), c8 = Gf16Mul(c4, c4);
    if ((c ^ c2 ^ c4 ^ c8) == 1) break;
  }
  std::vector<Vec4> points;
  for (unsigned v = 1; v < 0x10000; ++v) {
    Vec4 x{static_cast<uint8_t>(v >> 12), static_cast<uint8_t>(v >> 8 & 0xF),
           static_cast<uint8_t>(v >> 4 & 0xF), static_cast<uint8_t>(v & 0xF)};
    if (Normalize(x) != x) continue;  // one representative per projective point
    uint8_t q = Gf16Mul(x[0], x[1]) ^ Gf16Mul(x[2], x[2]) ^ Gf16Mul(x[2], x[3]) ^
                Gf16Mul(c, Gf16Mul(x[3], x[3]));
    if (q == 0) points.push_back(x);
  }
  assert(points.size() == 257);

  // The first four independent points (in enumeration order) become the
  // check columns e0..e3; the next 32 points are the data columns.
  std::vector<Vec4> basis;
  std::vector<Vec4> rest;
  for (const Vec4& p : points) {
    if (basis.size() < 4) {
      std::vector<Vec4> trial = basis;
      trial.push_back(p);
      if (Rank(trial) == static_cast<int>(trial.size())) {
        basis = std::move(trial);
        continue;
      }
    }
    if (rest.size() < kDataSymbols) rest.push_back(p);
  }
  assert(basis.size() == 4 && rest.size() == static_cast<size_t>(kDataSymbols));
  Mat4 b{};  // basis points as columns
  for (int r = 0; r < 4; ++r) {
    for (int col = 0; col < 4; ++col) b[r][col] = basis[col][r];
  }
  const Mat4 t = Invert(b);  // maps basis point i to unit vector e_i
  for (int j = 0; j < kDataSymbols; ++j) columns_[j] = Pack(Normalize(Apply(t, rest[j])));
  for (int i = 0; i < kCheckSymbols; ++i) {
    columns_[kDataSymbols + i] = static_cast<uint16_t>(1u << (4 * i));
  }

  for (int j = 0; j < kSymbols; ++j) {
    for (uint8_t v = 0; v < 16; ++v) {
      uint16_t s = 0;
      for (int i = 0; i < 4; ++i) {
        s |= static_cast<uint16_t>(Gf16Mul(v, columns_[j] >> (4 * i) & 0xF) << (4 * i));
      }
      contributions_[j][v] = s;
    }
  }
  decode_table_.assign(size_t{1} << 16, kUncorrectable);
  for (int j = 0; j < kSymbols; ++j) {
    for (uint8_t v = 1; v < 16; ++v) {
      uint16_t& slot = decode_table_[contributions_[j][v]];
      assert(slot == kUncorrectable);  // distinct, else distance < 3
      slot = static_cast<uint16_t>(j << 4 | v);
    }
  }
}

void ChipkillX4Code::Encode(uint8_t* codeword) const {
  // H (d, p) = A d + p = 0, so p = A d = the syndrome of (d, 0).
  uint16_t s = 0;
  for (int j = 0; j < kDataSymbols; ++j) s ^= contributions_[j][codeword[j] & 0xF];
  for (int i = 0; i < kCheckSymbols; ++i) codeword[kDataSymbols + i] = s >> (4 * i) & 0xF;
}

void ChipkillX4Code::EncodeBase(uint8_t* codeword) const {
  for (int i = 0; i < kCheckSymbols; ++i) {
    uint8_t p = 0;
    for (int j = 0; j < kDataSymbols; ++j) {
      p ^= Gf16MulBase(codeword[j], columns_[j] >> (4 * i) & 0xF);
    }
    codeword[kDataSymbols + i] = p;
  }
}

uint16_t ChipkillX4Code::Syndrome(const uint8_t* codeword) const {
  uint16_t s = 0;
  for (int j = 0; j < kSymbols; ++j) s ^= contributions_[j][codeword[j] & 0xF];
  return s;
}

uint16_t ChipkillX4Code::SyndromeBase(const uint8_t* codeword) const {
  uint16_t s = 0;
  for (int i = 0; i < 4; ++i) {
    uint8_t row = 0;
    for (int j = 0; j < kSymbols; ++j) {
      row ^= Gf16MulBase(codeword[j], columns_[j] >> (4 * i) & 0xF);
    }
    s |= static_cast<uint16_t>(row << (4 * i));
  }
  return s;
}

SymbolDecode ChipkillX4Code::DecodeSyndrome(uint16_t syndrome) const {
  if (syndrome == 0) return {};
  uint16_t e = decode_table_[syndrome];
  if (e == kUncorrectable) return {DecodeState::kUncorrectable, -1, 0};
  return {DecodeState::kCorrected, e >> 4, static_cast<uint8_t>(e & 0xF)};
}

SymbolDecode ChipkillX4Code::DecodeSyndromeBase(uint16_t syndrome) const {
  if (syndrome == 0) return {};
  SymbolDecode found{DecodeState::kUncorrectable, -1, 0};
  int matches = 0;
  for (int j = 0; j < kSymbols; ++j) {
    for (uint8_t v = 1; v < 16; ++v) {
      uint16_t s = 0;
      for (int i = 0; i < 4; ++i) {
        s |= static_cast<uint16_t>(Gf16MulBase(v, columns_[j] >> (4 * i) & 0xF) << (4 * i));
      }
      if (s == syndrome) {
        ++matches;
        found = {DecodeState::kCorrected, j, v};
      }
    }
  }
  return matches == 1 ? found : SymbolDecode{DecodeState::kUncorrectable, -1, 0};
}

SymbolDecode ChipkillX4Code::Correct(uint8_t* codeword) const {
  SymbolDecode d = DecodeSyndrome(Syndrome(codeword));
  if (d.state == DecodeState::kCorrected) codeword[d.position] ^= d.error;
  return d;
}

}  // namespace cairn
