// The vocabulary shared by Cairn's symbol-based ECC codes (rs_code.h,
// chipkill_x4.h): what a syndrome decoder concludes about one codeword, and
// what a check over shards reports.
//
// Shard layout: a code with k data and m parity symbols protects k + m
// shards of equal length L; byte i of every shard, in shard order, forms one
// codeword ("stripe" i). One corrupted shard therefore costs at most one
// symbol per codeword, which is what a single-symbol-correcting code repairs
// (a "software chipkill": a shard plays the part of a DRAM chip).
// Thread-safety: plain values.
#ifndef CAIRN_CODEC_ECC_TYPES_H_
#define CAIRN_CODEC_ECC_TYPES_H_

#include <cstdint>
#include <vector>

namespace cairn {

enum class DecodeState : uint8_t {
  kClean = 0,          // zero syndrome: accepted as is
  kCorrected = 1,      // exactly one symbol was found wrong and can be repaired
  kUncorrectable = 2,  // an error was detected that this decoder cannot repair
};

const char* DecodeStateName(DecodeState state);

// The outcome of decoding one codeword from its syndromes. A decoder can only
// conclude from the syndrome: a clean or corrected verdict on a word with
// more errors than the code's detection capability is silent corruption, and
// only a caller that knows the true error (the fault simulator) can tell.
struct SymbolDecode {
  DecodeState state = DecodeState::kClean;
  int position = -1;  // kCorrected: index of the wrong symbol (= shard index)
  uint8_t error = 0;  // kCorrected: XOR that repairs it (never 0)

  friend bool operator==(const SymbolDecode&, const SymbolDecode&) = default;
};

// Per-stripe outcome of a check over shards: the SymbolDecode of stripe i.
using StripeOutcome = SymbolDecode;

// Summary of a Check or Correct over L stripes.
struct DecodeReport {
  uint64_t clean = 0;
  uint64_t corrected = 0;      // Check: stripes Correct would repair
  uint64_t uncorrectable = 0;
  // corrected_by_shard[s]: stripes whose error was in shard s. A shard that
  // is wrong in many stripes has failed as a whole; rebuilding it as an
  // erasure (RsCode::Rebuild) then keeps the code's full strength for the
  // remaining shards.
  std::vector<uint64_t> corrected_by_shard;

  bool ok() const { return uncorrectable == 0; }
  friend bool operator==(const DecodeReport&, const DecodeReport&) = default;
};

}  // namespace cairn

#endif  // CAIRN_CODEC_ECC_TYPES_H_
