// DigestIndex: the first page holding each digest of one version (the
// collective-dedup paper's LocalHashes, Algorithm 1 lines 2-11), looked up
// once per page while the pages stream to the tier. An open-addressing
// table with linear probing, sized for every page up front: a lookup costs
// one cache miss, where a node-based map costs a bucket's, a node's and an
// allocation, about as much as hashing the page (docs/results.md).
// Thread-safety: a value, used from one thread.
#ifndef CAIRN_DEDUP_DIGEST_INDEX_H_
#define CAIRN_DEDUP_DIGEST_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "format/page_table.h"

namespace cairn {

class DigestIndex {
 public:
  // Room for `capacity` distinct digests.
  explicit DigestIndex(size_t capacity);

  // The page indexed under `digest` if there is one; otherwise indexes
  // `page` under it and returns nothing. REQUIRES: fewer than capacity
  // digests indexed before, or `digest` among them.
  std::optional<size_t> FindOrAdd(const PageDigest& digest, size_t page);
  bool Contains(const PageDigest& digest) const;
  size_t size() const { return size_; }
  // The digests indexed, in no particular order.
  std::vector<PageDigest> Digests() const;

 private:
  static constexpr size_t kEmpty = SIZE_MAX;
  struct Slot {
    PageDigest digest;
    size_t page = kEmpty;
  };
  // Where probing for `digest` starts: every digest kind is uniform in its
  // first bytes (PageDigestHash).
  size_t Home(const PageDigest& digest) const {
    uint64_t leading;
    std::memcpy(&leading, digest.bytes.data(), sizeof leading);
    return leading & mask_;
  }
  // The slot of `digest`, or the empty slot where it would go.
  size_t Probe(const PageDigest& digest) const;

  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t mask_;
  size_t size_ = 0;
};

}  // namespace cairn

#endif  // CAIRN_DEDUP_DIGEST_INDEX_H_
