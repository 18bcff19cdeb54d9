// Fuzzes the decoder of the top-K sets ranks exchange in the collective
// deduplication's reduction (dedup/hash_merger.h, DecodeHashFreqSet): the
// bytes another rank sent. The input is a byte choosing the digest width,
// a byte choosing the number of ranks, then the message. An accepted set
// must hold HashMerger's invariants (digests strictly ascending, owners
// and counts in range) and encode back to the message, and merging it
// with itself must keep them; a refusal must be kCorrupt naming the sender.
#include <cstdint>
#include <string>

#include "dedup/hash_merger.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

constexpr size_t kWidths[] = {1, 16, 20, 32};  // DigestBytes of each PageHashKind

void CheckSet(const HashFreqSet& set, int nranks, const char* what) {
  for (size_t i = 0; i < set.size(); ++i) {
    CAIRN_FUZZ_CHECK(set[i].owner >= 0 && set[i].owner < nranks, "{}: owner {} of {} ranks",
                     what, set[i].owner, nranks);
    CAIRN_FUZZ_CHECK(i == 0 || set[i - 1].digest < set[i].digest,
                     "{}: digests not strictly ascending at {}", what, i);
  }
}

void FuzzOne(const std::string& input) {
  if (input.size() < 2) return;
  const size_t width = kWidths[static_cast<uint8_t>(input[0]) % 4];
  const int nranks = 1 + static_cast<uint8_t>(input[1]);
  const std::string message = input.substr(2);
  const std::string origin = "rank 3";
  HashFreqSet set;
  Status decoded = DecodeHashFreqSet(message, width, nranks, origin, &set);
  if (!decoded.ok()) {
    CheckRefusal(decoded, Code::kCorrupt, origin);
    return;
  }
  CheckSet(set, nranks, "decoded");
  for (const HashFreq& t : set) {
    CAIRN_FUZZ_CHECK(t.count >= 1 && t.count <= static_cast<uint64_t>(nranks),
                     "a page held by {} of {} ranks", t.count, nranks);
  }
  CAIRN_FUZZ_CHECK(EncodeHashFreqSet(set, width) == message,
                   "the set does not encode back to its message");
  const size_t threshold = 1 + set.size() / 2;
  HashFreqSet merged;
  HashMerger(set, set, nranks, threshold, &merged);
  CheckSet(merged, nranks, "merged");
  CAIRN_FUZZ_CHECK(merged.size() <= threshold, "{} tuples kept of a threshold of {}",
                   merged.size(), threshold);
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
