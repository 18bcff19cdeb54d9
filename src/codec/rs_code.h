// Reed-Solomon codes over GF(2^8) that protect data held in memory against
// symbol errors (hybrid-dram-ssd-clc-ecc.txt, section 4): the "normal" ECC
// RS(36,32), and the "strong" two-layer ECC RS(18,16) embedded in RS(19,16).
//
//   code       n   k  m  decoder                              distance
//   RS(36,32)  36  32 4  single-symbol-correct, triple-detect  5 (SSC-TSD)
//   RS(18,16)  18  16 2  detect only (up to 2 symbols)         3
//   RS(19,16)  19  16 3  single-symbol-correct, double-detect  4 (SSC-DSD)
//
// Construction (docs/ecc.md has the proofs). Symbols are GF(2^8) elements
// (gf256.h, ISA-L's field). Positions 0..k-1 hold data, k..n-1 parity.
//  - RS(36,32) and RS(18,16) are shortened narrow-sense RS codes with
//    generator polynomial g(x) = prod_{i<m} (x - alpha^i): roots alpha^0 ..
//    alpha^(m-1). Position j carries the coefficient of x^(n-1-j), so its
//    error locator is X_j = alpha^(n-1-j) and syndrome i is S_i = c(alpha^i)
//    = sum_j c_j X_j^i.
//  - RS(19,16) is RS(18,16) extended by one parity symbol p2 whose parity
//    check column is (0, 0, 1): p2 = c(alpha^2), where c(x) is the RS(18,16)
//    codeword. Its syndromes are S_0, S_1 of RS(18,16) unchanged, plus
//    S_2 = c(alpha^2) + p2. So an RS(18,16) codeword plus p2 is an RS(19,16)
//    codeword, the RS(18,16) decoder is the first layer of the RS(19,16) one,
//    and p2 may live elsewhere (another rank, an ECC cache, another tier)
//    until the first layer finds an error. (A plain cyclic RS(19,16) with
//    roots alpha^0..alpha^2 could not do this: every one of its positions
//    enters S_0, so no RS(18,16) codeword would stay one when a 19th symbol
//    is added.) Any 3 columns of its check matrix are independent, so the
//    distance is 4 and the code is MDS: any 3 erasures are recoverable.
//
// Shards (ecc_types.h): the codes work over k + m shards of equal length L,
// byte i of every shard forming codeword i, so encoding and checking run at
// ISA-L speed: parity is ec_encode_data with the parity generator matrix
// derived from g(x); a check re-encodes the data, compares with the stored
// parity, and only stripes that differ get syndromes (S = H_p * difference)
// and reach our scalar decoder.
// Every optimized routine has a `...Base` reference twin (scalar, written
// from the definitions, no ISA-L, no log tables) that the tests compare with.
//
// Thread-safety: every method is const and may be called from several
// threads at once. The code itself is immutable after construction; the one
// piece of mutable state, a bounded cache of erasure decoders (Rebuild),
// locks internally.
#ifndef CAIRN_CODEC_RS_CODE_H_
#define CAIRN_CODEC_RS_CODE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "codec/ecc_types.h"

namespace cairn {

enum class RsCodeId : uint8_t {
  kRs36_32,  // normal ECC: SSC-TSD
  kRs18_16,  // strong ECC, first layer: detect only
  kRs19_16,  // strong ECC, second layer: SSC-DSD (RS(18,16) + p2)
};

class RsCode {
 public:
  static constexpr int kMaxN = 36;
  static constexpr int kMaxM = 4;
  // Erasure decoders Rebuild keeps, least recently used dropped first: a
  // decoder costs a k x k inversion to make and 32 k rows bytes (<= 4 KiB) to
  // keep, and a damaged part repeats few erasure patterns across its stripes.
  static constexpr size_t kDecoderCacheCapacity = 64;

  explicit RsCode(RsCodeId id);
  ~RsCode();
  RsCode(RsCode&&) noexcept;
  RsCode& operator=(RsCode&&) noexcept;

  RsCodeId id() const { return id_; }
  const char* name() const;  // "RS(36,32)"
  int n() const { return n_; }
  int k() const { return k_; }
  int m() const { return m_; }  // parity symbols = syndromes per codeword
  // Symbol errors per codeword the decoder repairs (1, 0, 1) and detects
  // without fail (3, 2, 2).
  int correctable() const { return correctable_; }
  int detectable() const { return detectable_; }

  // H[row][col] of the parity-check matrix (m x n): c is a codeword iff
  // H c = 0, and the syndrome of a received word r is H r.
  uint8_t ParityCheck(int row, int col) const { return h_[row * n_ + col]; }
  // P[row][col] of the parity generator (m x k): parity symbol `row` is
  // sum_col P[row][col] * data[col].
  uint8_t ParityGenerator(int row, int col) const { return p_[row * k_ + col]; }

  // ---- Shards: shards.size() == n(), shards[0..k) data, [k..n) parity,
  // each at least len bytes (null only if len == 0); byte i of every shard
  // is codeword i. Pointers may point anywhere (e.g. RS(19,16)'s last parity
  // shard kept apart) but the shards must not overlap.
  // Argument errors return kInvalidArgument and touch nothing.

  // Computes the m parity shards from the k data shards.
  Status Encode(std::span<uint8_t* const> shards, size_t len) const;
  Status EncodeBase(std::span<uint8_t* const> shards, size_t len) const;

  // Decodes every stripe without modifying anything. outcomes is empty or
  // holds at least len entries; outcome i is what Correct would do to
  // stripe i. Returns the summary.
  Result<DecodeReport> Check(std::span<const uint8_t* const> shards, size_t len,
                             std::span<StripeOutcome> outcomes = {}) const;
  Result<DecodeReport> CheckBase(std::span<const uint8_t* const> shards, size_t len,
                                 std::span<StripeOutcome> outcomes = {}) const;

  // As Check, and repairs every correctable stripe in place. Uncorrectable
  // stripes are left as they were: the caller must not trust them (restart
  // from another copy, or Rebuild if it knows which shards are bad).
  Result<DecodeReport> Correct(std::span<uint8_t* const> shards, size_t len,
                               std::span<StripeOutcome> outcomes = {}) const;
  Result<DecodeReport> CorrectBase(std::span<uint8_t* const> shards, size_t len,
                                   std::span<StripeOutcome> outcomes = {}) const;

  // Recomputes the shards listed in `erased` (known bad or lost; distinct,
  // in [0, n), at most m of them, in any order) from the others, which must
  // be intact: erasure decoding does not check them (Check afterwards does,
  // while fewer than m shards were erased). The decoder of an erasure
  // pattern is made once and cached (kDecoderCacheCapacity patterns).
  Status Rebuild(std::span<uint8_t* const> shards, size_t len,
                 std::span<const int> erased) const;
  Status RebuildBase(std::span<uint8_t* const> shards, size_t len,
                     std::span<const int> erased) const;

  // ---- One codeword of n symbols.

  // syndromes[0..m) of codeword[0..n): table-driven / from the definition
  // S_i = c(alpha^i) evaluated by Horner's rule.
  void Syndromes(const uint8_t* codeword, uint8_t* syndromes) const;
  void SyndromesBase(const uint8_t* codeword, uint8_t* syndromes) const;

  // Locates and sizes an unknown single-symbol error from syndromes[0..m).
  // The optimized decoder solves for the locator X = S_1 / S_0 with log
  // tables and checks S_{i+1} = S_i X; the reference twin tries every
  // position and every nonzero error value against the check matrix.
  SymbolDecode DecodeSyndromes(const uint8_t* syndromes) const;
  SymbolDecode DecodeSyndromesBase(const uint8_t* syndromes) const;

  // Erasure patterns whose decoder is cached (at most kDecoderCacheCapacity).
  size_t cached_decoders() const;

 private:
  struct ErasureDecoder;
  class DecoderCache;

  // The cached decoder of the erasure pattern (bit j: shard j erased), made
  // on a miss. REQUIRES: the pattern passed ValidateErased and is not empty.
  Result<std::shared_ptr<const ErasureDecoder>> DecoderFor(uint64_t pattern) const;

  // Checks the arguments of Decode/DecodeBase; an empty report for n shards.
  Result<DecodeReport> StartDecode(uint8_t* const* shards, size_t len,
                                   std::span<StripeOutcome> outcomes) const;
  Result<DecodeReport> Decode(uint8_t* const* shards, size_t len,
                              std::span<StripeOutcome> outcomes, bool repair) const;
  Result<DecodeReport> DecodeBase(uint8_t* const* shards, size_t len,
                                  std::span<StripeOutcome> outcomes, bool repair) const;

  RsCodeId id_;
  int n_ = 0;
  int k_ = 0;
  int m_ = 0;
  int cyclic_n_ = 0;  // positions with a finite locator (n, or n-1 if extended)
  int cyclic_m_ = 0;  // roots of g(x) (m, or m-1 if extended)
  bool extended_ = false;
  int correctable_ = 0;
  int detectable_ = 0;
  std::vector<uint8_t> h_;  // m x n parity-check matrix
  std::vector<uint8_t> p_;  // m x k parity generator
  // ISA-L expanded tables (ec_init_tables) for p_.
  std::vector<uint8_t> encode_tables_;
  std::unique_ptr<DecoderCache> decoders_;
};

}  // namespace cairn

#endif  // CAIRN_CODEC_RS_CODE_H_
