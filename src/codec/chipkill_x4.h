// The x4 Chipkill-Correct baseline of the ECC comparison (paper section 4
// and Table 4): 4-bit symbols, 32 data + 4 check symbols per codeword,
// decoded single-symbol-correct / double-symbol-detect (SSC-DSD). With two
// lock-stepped ranks of 18 x4 chips, each beat delivers one 4-bit symbol per
// chip, so a whole-chip failure is one symbol error per codeword.
//
// Construction. A Reed-Solomon code over GF(16) is at most 17 symbols long,
// so the 36-symbol code is not RS: it is the linear [36,32,4] code over
// GF(16) (polynomial x^4+x+1) whose parity-check columns are 36 points of an
// elliptic quadric (ovoid) of PG(3,16): x0 x1 + x2^2 + x2 x3 + c x3^2 = 0
// with x^2+x+c irreducible. No three points of an ovoid are collinear, so no
// three columns are linearly dependent and the minimum distance is 4. A
// projective change of coordinates maps four of the points to the unit
// vectors, making H = [A | I] systematic (check = A * data); collinearity,
// hence the distance, is unchanged. The decoder maps each of the 2^16
// syndromes to its single-symbol error (table), the reference twin searches
// all 36 x 15 single errors.
//
// Symbols are passed one per byte, in the low nibble.
// Thread-safety: immutable after construction; all methods are const.
#ifndef CAIRN_CODEC_CHIPKILL_X4_H_
#define CAIRN_CODEC_CHIPKILL_X4_H_

#include <array>
#include <cstdint>
#include <vector>

#include "codec/ecc_types.h"

namespace cairn {

// GF(16) with reduction polynomial x^4+x+1, alpha = 2. REQUIRES: a, b < 16.
uint8_t Gf16Mul(uint8_t a, uint8_t b);
uint8_t Gf16MulBase(uint8_t a, uint8_t b);  // shift-and-add reference twin

class ChipkillX4Code {
 public:
  static constexpr int kDataSymbols = 32;
  static constexpr int kCheckSymbols = 4;
  static constexpr int kSymbols = 36;

  ChipkillX4Code();

  // Column j of the check matrix H (4 x 36), row i in bits 4i..4i+3; the
  // syndrome of a word r is the XOR over j of r_j * column j, packed alike.
  uint16_t Column(int position) const { return columns_[position]; }
  // Syndrome of a lone error `value` (< 16) at `position`.
  uint16_t SyndromeOfError(int position, uint8_t value) const {
    return contributions_[position][value];
  }

  // codeword[0..36): fills the check symbols 32..35 from the data 0..31.
  void Encode(uint8_t* codeword) const;
  void EncodeBase(uint8_t* codeword) const;

  uint16_t Syndrome(const uint8_t* codeword) const;
  uint16_t SyndromeBase(const uint8_t* codeword) const;

  SymbolDecode DecodeSyndrome(uint16_t syndrome) const;
  SymbolDecode DecodeSyndromeBase(uint16_t syndrome) const;

  // Decodes codeword[0..36) and repairs it in place when correctable.
  SymbolDecode Correct(uint8_t* codeword) const;

 private:
  static constexpr uint16_t kUncorrectable = 0xFFFF;

  std::array<uint16_t, kSymbols> columns_{};
  std::array<std::array<uint16_t, 16>, kSymbols> contributions_{};
  // syndrome -> (position << 4 | value) of its single error, or
  // kUncorrectable. 128 KiB, shared read-only by all threads.
  std::vector<uint16_t> decode_table_;
};

}  // namespace cairn

#endif  // CAIRN_CODEC_CHIPKILL_X4_H_
