// LogClient: the client side of the log-structured array's RMA protocol
// (paper §III-D1): every operation is done by the caller with one-sided
// accesses to the owner's log, with a metadata cache whose entries are
// valid (the entry names the current version, so the block's location
// cannot change before the next version_inc) or maybe-invalid (written
// earlier: a put may since have replaced the block). Entries carry their
// version, so no rank needs another's log tail to tell the two apart. A first put to a block
// in a version allocates a block at the log's tail with fetch-and-add,
// copies the previous version's block into it and publishes it with
// compare-and-swap (or, where compare-and-swap is unsafe, after winning
// the block's claim word with an atomic swap); later puts write in place.
// The new block's link names the entry it replaced, which is how frozen
// versions are read.
// get is speculative: it reads where the cache points and fetches the
// metadata at once; only blocks whose metadata changed are read again.
// The message protocol's server uses a LogClient over its own memory.
// Thread-safety: one thread at a time.
#ifndef CAIRN_VARRAY_LOG_CLIENT_H_
#define CAIRN_VARRAY_LOG_CLIENT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"
#include "comm/rma_window.h"
#include "varray/geometry.h"

namespace cairn {

// How each kind of access went, for the benchmark's sub-cases (paper
// §IV-A2: miss, hit, first, ow-miss, ow-hit), counted per block.
struct LogAccessCounts {
  uint64_t get_hit = 0, get_miss = 0;
  uint64_t put_first = 0, put_ow_miss = 0, put_ow_hit = 0;
  uint64_t claims_lost = 0;  // first puts that found another rank's block published
};

class LogClient {
 public:
  // window outlives the client; use_cas picks compare-and-swap (else the
  // claim words) for publishing first puts.
  LogClient(RmaWindow* window, const LogLayout& layout, bool use_cas);

  // The open version, the same on every rank (set after each collective
  // step).
  void SetVersion(int64_t version) { version_ = version; }
  // Drops every cached entry (after a restart refilled the logs).
  void ForgetCache();

  // Current version. acc: sum elements of that type instead of writing.
  // Complete when it returns. kNoSpace naming the rank when its log is full.
  Status Write(int target, uint64_t offset, std::span<const uint8_t> data,
               std::optional<RmaElement> acc);
  // Current version, speculative and non-blocking: `into` is filled by
  // FinishReads. `into` must stay valid until then.
  Status StartRead(int target, uint64_t offset, std::span<uint8_t> into);
  Status FinishReads();
  bool reads_pending() const { return !pending_.empty(); }
  // A frozen (or the open) version, through the links (blocking).
  Status ReadFrozen(int target, int64_t version, uint64_t offset, std::span<uint8_t> into);

  const LogAccessCounts& counts() const { return counts_; }

 private:
  static constexpr uint64_t kUnknown = ~uint64_t{0};
  struct BlockRange {
    uint64_t first = 0, count = 0;
  };
  struct PendingRead {
    int target = 0;
    uint64_t offset = 0;
    std::span<uint8_t> into;
    std::vector<uint64_t> used;     // entries read speculatively (kUnknown: none)
    std::vector<uint64_t> fetched;  // entries fetched meanwhile (empty: all were valid)
  };

  static BlockRange Blocks(uint64_t offset, uint64_t length, uint64_t block_size);
  bool Valid(uint64_t entry) const {
    return entry != kUnknown && entry != kUnwrittenBlock && EntryVersion(entry) == version_;
  }
  uint64_t& Cached(int target, uint64_t block) { return cache_[target][block]; }
  Status FetchEntries(int target, BlockRange r, std::vector<uint64_t>* out);
  // Follows the links of entries written after `version` (one round trip
  // per step back, for all blocks at once).
  Status ResolveVersion(int target, int64_t version, std::vector<uint64_t>* entries);
  // Resolves each block of r to its current-version entry, allocating
  // and publishing the blocks first written here (the put protocol's
  // steps 1-3).
  Status Locate(int target, BlockRange r, uint64_t offset, uint64_t length, bool acc,
                std::vector<uint64_t>* entries);
  Status Allocate(int target, uint64_t count, uint64_t* first_slot);
  // A block a write is the first to touch in this version: its index in
  // the write's range, its number, the entry it replaces, and whether the
  // write covers it whole (no copy forward needed).
  struct FirstBlock {
    uint64_t index, block, old_entry;
    bool covered;
  };
  // Step 2 for the blocks of firsts[pick[k]] going to slots first_slot + k:
  // their links, and their old bytes where the write does not cover them.
  Status Prepare(int target, const std::vector<FirstBlock>& firsts,
                 const std::vector<size_t>& pick, uint64_t first_slot);
  // Steps 1-3 of the put protocol for all first blocks of a write; sets
  // their entries of `entries`.
  Status PublishByCas(int target, const std::vector<FirstBlock>& firsts,
                      std::vector<uint64_t>* entries);
  Status PublishByClaims(int target, const std::vector<FirstBlock>& firsts,
                         std::vector<uint64_t>* entries);
  Status WaitForPublished(int target, uint64_t block, uint64_t* entry, bool* released);
  // Moves bytes between the caller's buffer and the blocks of entries,
  // merging runs of blocks that lie back to back in the log into one
  // access.
  enum class Move { kRead, kWrite, kAccumulate };
  Status MoveBytes(Move move, int target, uint64_t offset, std::span<uint8_t> buffer,
                   const std::vector<uint64_t>& entries, std::optional<RmaElement> type,
                   const std::vector<bool>* only);

  RmaWindow* window_;
  LogLayout layout_;
  bool use_cas_;
  int64_t version_ = 0;
  std::vector<std::vector<uint64_t>> cache_;  // [rank][block] entry, kUnknown if none
  std::vector<PendingRead> pending_;
  std::vector<uint8_t> scratch_;  // old bytes of first blocks, for copies forward
  LogAccessCounts counts_;
};

}  // namespace cairn

#endif  // CAIRN_VARRAY_LOG_CLIENT_H_
