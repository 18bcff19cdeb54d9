// Combiner: adds GF(2^8) multiples of a source buffer into a few row
// buffers, rows[i] ^= coef[i][source] * data: the one kernel behind every
// redundancy scheme's encode and rebuild. A single all-ones row is plain XOR
// and runs ISA-L's xor_gen; anything else runs ISA-L's
// ec_encode_data_update. AddBase is the scalar reference twin
// (codec/gf256.h) the tests compare with. Also the coefficient matrices the
// schemes need: the parity generator and the rebuild rows.
// Thread-safety: a Combiner is immutable after construction.
#ifndef CAIRN_REDUNDANCY_COMBINER_H_
#define CAIRN_REDUNDANCY_COMBINER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"

namespace cairn {

// Buffers the kernels read and write start at multiples of this (xor_gen
// needs 32) and have lengths that are multiples of it.
inline constexpr size_t kCombineAlign = 64;

// A heap buffer aligned to kCombineAlign, not zeroed.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<uint8_t> span() { return {data(), size_}; }
  std::span<const uint8_t> span() const { return {data(), size_}; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], Free> data_;
  size_t size_ = 0;
};

// Bytes [begin, begin + length) of a part padded with zeros to a whole
// number of pieces: the part's own bytes when inside it and aligned, else a
// padded copy in scratch (so only the slice that crosses the part's end, or
// an unaligned part, is copied). REQUIRES: scratch holds at least length
// bytes.
const uint8_t* PaddedPiece(std::span<const uint8_t> part, uint64_t begin, uint64_t length,
                           AlignedBuffer& scratch);

class Combiner {
 public:
  // coefs: rows x sources, row-major. REQUIRES: rows >= 1, sources >= 1.
  Combiner(int sources, int rows, std::vector<uint8_t> coefs);

  int sources() const { return sources_; }
  int rows() const { return rows_; }
  uint8_t Coef(int row, int source) const {
    return coefs_[static_cast<size_t>(row * sources_ + source)];
  }
  // Whether source 0's contribution is a plain copy (one row, coefficient
  // 1): the first contribution may then be used where it lies.
  bool CopiesSource0() const { return rows_ == 1 && coefs_[0] == 1; }
  // rows[i] = coef[i][source] * data when `first`, else rows[i] ^= it; for
  // len bytes. REQUIRES: data and every rows[i] aligned to kCombineAlign,
  // len a multiple of kCombineAlign; rows do not overlap data.
  void Add(int source, const uint8_t* data, uint8_t* const* rows, size_t len, bool first) const;
  void AddBase(int source, const uint8_t* data, uint8_t* const* rows, size_t len,
               bool first) const;

 private:
  int sources_;
  int rows_;
  std::vector<uint8_t> coefs_;
  bool plain_xor_;              // one row of ones
  std::vector<uint8_t> tables_;  // ec_init_tables of coefs_
};

// The parity generator of a stripe of `data` pieces and `parity` rows:
// parity x data, row-major. One row of ones when parity == 1 (XOR, and
// partner's copy), else the parity rows of ISA-L's Cauchy matrix, whose
// every square submatrix of the full generator [I; P] is invertible, so any
// `data` of the data + parity symbols determine the rest.
std::vector<uint8_t> ParityGenerator(int data, int parity);

// The rows that rebuild symbols `erased` of a stripe from symbols `used`
// (symbols 0..data-1 are data pieces, data.. parity rows; generator as
// ParityGenerator): erased.size() x used.size(), row-major, so that symbol
// erased[i] = sum_j rows[i][j] * symbol used[j]. REQUIRES: used.size() ==
// data, distinct symbols. kInternal if the chosen symbols are not
// independent (never, for an MDS generator).
Result<std::vector<uint8_t>> RebuildRows(int data, int parity, const std::vector<int>& used,
                                         const std::vector<int>& erased);

}  // namespace cairn

#endif  // CAIRN_REDUNDANCY_COMBINER_H_
