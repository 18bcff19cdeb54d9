#include "redundancy/combiner.h"

#include <algorithm>
#include <cstring>
#include <new>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "base/vector_state.h"
#include "codec/gf256.h"

namespace cairn {

const uint8_t* PaddedPiece(std::span<const uint8_t> part, uint64_t begin, uint64_t length,
                           AlignedBuffer& scratch) {
  const uint8_t* at = part.data() + std::min<uint64_t>(begin, part.size());
  if (begin + length <= part.size() && reinterpret_cast<uintptr_t>(at) % kCombineAlign == 0) {
    return at;
  }
  const uint64_t have = begin < part.size() ? std::min(length, part.size() - begin) : 0;
  if (have > 0) std::memcpy(scratch.data(), at, have);
  if (length > have) std::memset(scratch.data() + have, 0, length - have);
  return scratch.data();
}

namespace {

// ISA-L takes int lengths: work in pieces of 1 GiB (a multiple of
// kCombineAlign, so every piece stays aligned).
constexpr size_t kKernelPiece = size_t{1} << 30;

}  // namespace

AlignedBuffer::AlignedBuffer(size_t size)
    : data_(size == 0 ? nullptr
                      : static_cast<uint8_t*>(::operator new[](size, std::align_val_t{kCombineAlign}))),
      size_(size) {}

void AlignedBuffer::Free::operator()(uint8_t* p) const {
  ::operator delete[](p, std::align_val_t{kCombineAlign});
}

Combiner::Combiner(int sources, int rows, std::vector<uint8_t> coefs)
    : sources_(sources), rows_(rows), coefs_(std::move(coefs)) {
  plain_xor_ = rows_ == 1 && std::all_of(coefs_.begin(), coefs_.end(), [](uint8_t c) { return c == 1; });
  if (!plain_xor_) {
    tables_.resize(static_cast<size_t>(32 * sources_ * rows_));
    ec_init_tables(sources_, rows_, coefs_.data(), tables_.data());
  }
}

void Combiner::Add(int source, const uint8_t* data, uint8_t* const* rows, size_t len,
                   bool first) const {
  if (len == 0) return;  // all parts of the group empty: no buffers at all
  if (plain_xor_) {
    if (first) {
      std::memcpy(rows[0], data, len);
      return;
    }
    for (size_t off = 0; off < len; off += kKernelPiece) {
      const int n = static_cast<int>(std::min(kKernelPiece, len - off));
      // In place: xor_gen reads every source at an offset before it writes
      // the destination there, so the destination may be the first source.
      void* vectors[3] = {rows[0] + off, const_cast<uint8_t*>(data) + off, rows[0] + off};
      xor_gen(3, n, vectors);
      ClearUpperVectorHalves();
    }
    return;
  }
  if (first) {
    for (int i = 0; i < rows_; ++i) std::memset(rows[i], 0, len);
  }
  std::vector<uint8_t*> at(static_cast<size_t>(rows_));
  for (size_t off = 0; off < len; off += kKernelPiece) {
    const int n = static_cast<int>(std::min(kKernelPiece, len - off));
    for (int i = 0; i < rows_; ++i) at[static_cast<size_t>(i)] = rows[i] + off;
    ec_encode_data_update(n, sources_, rows_, source, const_cast<uint8_t*>(tables_.data()),
                          const_cast<uint8_t*>(data) + off, at.data());
    ClearUpperVectorHalves();
  }
}

void Combiner::AddBase(int source, const uint8_t* data, uint8_t* const* rows, size_t len,
                       bool first) const {
  for (int i = 0; i < rows_; ++i) {
    const uint8_t c = Coef(i, source);
    for (size_t b = 0; b < len; ++b) {
      const uint8_t term = gf256::MulBase(c, data[b]);
      rows[i][b] = first ? term : static_cast<uint8_t>(rows[i][b] ^ term);
    }
  }
}

std::vector<uint8_t> ParityGenerator(int data, int parity) {
  if (parity == 1) return std::vector<uint8_t>(static_cast<size_t>(data), 1);
  const int n = data + parity;
  std::vector<uint8_t> full(static_cast<size_t>(n * data));
  gf_gen_cauchy1_matrix(full.data(), n, data);
  return std::vector<uint8_t>(full.begin() + data * data, full.end());
}

Result<std::vector<uint8_t>> RebuildRows(int data, int parity, const std::vector<int>& used,
                                         const std::vector<int>& erased) {
  const std::vector<uint8_t> p = ParityGenerator(data, parity);
  // Row s of the full generator [I; P]: how symbol s depends on the data.
  auto generator_row = [&](int s, int col) -> uint8_t {
    if (s < data) return s == col ? 1 : 0;
    return p[static_cast<size_t>((s - data) * data + col)];
  };
  const auto k = static_cast<size_t>(data);
  std::vector<uint8_t> chosen(k * k), inverse(k * k);
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) chosen[i * k + j] = generator_row(used[i], static_cast<int>(j));
  }
  if (gf_invert_matrix(chosen.data(), inverse.data(), data) != 0) {
    return Error(Code::kInternal, "the {} symbols chosen to rebuild from are not independent",
                 data);
  }
  // symbol e = G_e * data = G_e * inverse * used.
  std::vector<uint8_t> rows(erased.size() * k, 0);
  for (size_t e = 0; e < erased.size(); ++e) {
    for (size_t j = 0; j < k; ++j) {
      uint8_t sum = 0;
      for (size_t i = 0; i < k; ++i) {
        sum ^= gf_mul(generator_row(erased[e], static_cast<int>(i)), inverse[i * k + j]);
      }
      rows[e * k + j] = sum;
    }
  }
  return rows;
}

}  // namespace cairn
