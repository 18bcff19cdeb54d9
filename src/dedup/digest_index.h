// DigestIndex: the first page holding each digest of one version (the
// collective-dedup paper's LocalHashes, Algorithm 1 lines 2-11), looked up
// once per page while the pages stream to the tier. An open-addressing
// table with linear probing, sized for every page up front, whose slots
// hold a page's index and 32 bits of its digest, not the digest: the plan's
// records hold the digests, and a slot is 8 bytes where a digest is 32. A
// lookup runs while the page copy streams the checkpoint through the
// caches, which evict the table between chunks; five times smaller, it
// loses fewer lines (docs/results.md).
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
  // The most pages an index holds.
  static constexpr size_t kMaxPages = UINT32_MAX - 1;

  // Room for `capacity` distinct digests, those of `records` (the plan's
  // records, which outlive the index and keep their places).
  // REQUIRES: capacity <= kMaxPages.
  DigestIndex(size_t capacity, const std::vector<PageRecord>& records) {
    Reset(capacity, records);
  }
  // Empty, holding no records until Reset.
  DigestIndex() = default;
  // Empties the index for other records, in the memory it has where that
  // is enough: a planner keeps one index from version to version, whose
  // table, allocated afresh, the kernel would fault in page by page.
  void Reset(size_t capacity, const std::vector<PageRecord>& records);

  // The page indexed under records[page].digest if there is one;
  // otherwise indexes `page` under it and returns nothing. REQUIRES:
  // fewer than capacity digests indexed before, or that digest among them.
  std::optional<size_t> FindOrAdd(size_t page);
  bool Contains(const PageDigest& digest) const;
  // Starts loading where FindOrAdd of `digest` will look first: issued for
  // a chunk's pages at once, their cache misses overlap.
  void Prefetch(const PageDigest& digest) const {
    __builtin_prefetch(&slots_[Home(digest)], /*rw=*/1);
  }
  size_t size() const { return size_; }
  // The digests indexed, in no particular order, into *out (replacing
  // what it held, in its memory).
  void Digests(std::vector<PageDigest>* out) const;

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint32_t tag = 0;
    uint32_t page = kEmpty;
  };
  // Where probing for `digest` starts, and the bits a slot keeps of it:
  // every digest kind is uniform in its first bytes (PageDigestHash), and
  // the tag comes from bytes the start does not use.
  size_t Home(const PageDigest& digest) const { return Word<uint64_t>(digest, 0) & mask_; }
  static uint32_t Tag(const PageDigest& digest) { return Word<uint32_t>(digest, 8); }
  template <typename T>
  static T Word(const PageDigest& digest, size_t at) {
    T w;
    std::memcpy(&w, digest.bytes.data() + at, sizeof w);
    return w;
  }
  // The slot of `digest`, or the empty slot where it would go.
  size_t Probe(const PageDigest& digest) const;

  const std::vector<PageRecord>* records_ = nullptr;
  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace cairn

#endif  // CAIRN_DEDUP_DIGEST_INDEX_H_
