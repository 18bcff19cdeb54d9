// HASH_MERGER (Algorithm 2 of the collective-dedup paper): merges two sets
// of (digest, count, owner) tuples into at most `threshold` tuples, the most
// frequent, choosing for each page that both sides hold the less loaded of
// the two owners (PageLoad), after first charging every owner with the
// pages only one side holds (the paper's processing order: pages without a
// choice first, so that the choices balance what is left). Also the wire
// encoding of such a set for the reduction over ranks (dedup/top_k.h).
// Thread-safety: pure functions.
#ifndef CAIRN_DEDUP_HASH_MERGER_H_
#define CAIRN_DEDUP_HASH_MERGER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "format/page_table.h"

namespace cairn {

struct HashFreq {
  PageDigest digest;
  uint64_t count = 0;  // ranks holding the page
  int32_t owner = 0;   // the rank designated to store it
};

// Sorted by digest, digests distinct: the form every function here takes
// and returns.
using HashFreqSet = std::vector<HashFreq>;

// Each function that makes a set puts it in the caller's `*result`,
// replacing what it held in the memory it has: the collective step makes
// sets of a megabyte per 64 MiB of pages in every checkpoint, which,
// allocated afresh, the kernel would fault in page by page (TopKBuffers).

// Algorithm 2. Ties in PageLoad go to the right side's owner (line 15's
// strict "<"); truncation keeps the highest counts, and among equal counts
// the smaller digests, so that the result does not depend on the order of
// a hash table. REQUIRES: both sorted by digest; every owner < nranks;
// `result` is neither side.
void HashMerger(const HashFreqSet& left, const HashFreqSet& right, int nranks, size_t threshold,
                HashFreqSet* result);

// (digest, 1, rank) for each of `digests` (LocalHashes, line 13-15),
// sorted; truncated to the threshold as any merge result would be (a rank
// whose pages are all distinct keeps the smallest digests). Sorts
// `digests` and drops their repeats on the way.
void LocalHashFreq(std::vector<PageDigest>* digests, int rank, size_t threshold,
                   HashFreqSet* result);

// u8 digest bytes, u64 tuples, then per tuple: digest, u64 count, u32 owner.
std::string EncodeHashFreqSet(const HashFreqSet& set, size_t digest_bytes);
// kCorrupt naming `origin` for a truncated or unsorted message, or an owner
// outside [0, nranks); `*result` is then unspecified.
Status DecodeHashFreqSet(std::string_view bytes, size_t digest_bytes, int nranks,
                         const std::string& origin, HashFreqSet* result);

}  // namespace cairn

#endif  // CAIRN_DEDUP_HASH_MERGER_H_
