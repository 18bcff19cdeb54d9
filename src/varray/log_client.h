// LogClient: the client side of the log-structured array's RMA protocol
// (paper §III-D1): every operation is done by the caller with one-sided
// accesses to the owner's log, with a metadata cache whose entries are
// valid (the block was allocated in the current version, so its location
// cannot change before the next version_inc) or maybe-invalid (allocated
// earlier: a put may since have moved the block). A first put to a block
// in a version allocates a block at the log's tail with fetch-and-add,
// copies the previous version's block into it and publishes it with
// compare-and-swap (or, where compare-and-swap is unsafe, after winning
// the block's claim word with fetch-and-add); later puts write in place.
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

// What a client knows of a rank's log between two version changes
// (exchanged by every rank in version_inc, restore and reload).
struct LogEpoch {
  uint64_t start_tail = 0;  // blocks at or past it were allocated in the current version
  uint64_t generation = 0;  // a change drops the rank's cached entries
  uint64_t current_set = 0; // offset of the current version's metadata set
};

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

  // Starts a version: the epochs of every rank, indexed by rank.
  void SetEpochs(std::vector<LogEpoch> epochs);

  // Current version. acc: sum elements of that type instead of writing.
  // Complete when it returns. kNoSpace naming the rank when its log is full.
  Status Write(int target, uint64_t offset, std::span<const uint8_t> data,
               std::optional<RmaElement> acc);
  // Current version, speculative and non-blocking: `into` is filled by
  // FinishReads. `into` must stay valid until then.
  Status StartRead(int target, uint64_t offset, std::span<uint8_t> into);
  Status FinishReads();
  bool reads_pending() const { return !pending_.empty(); }
  // A frozen version whose metadata set starts at `set` (blocking).
  Status ReadFrozen(int target, uint64_t set, uint64_t offset, std::span<uint8_t> into);

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
    std::vector<uint64_t> used;     // locations read speculatively (kUnknown: none)
    std::vector<uint64_t> fetched;  // metadata fetched meanwhile (empty: all were valid)
  };

  static BlockRange Blocks(uint64_t offset, uint64_t length, uint64_t block_size);
  bool Valid(int target, uint64_t loc) const {
    return loc != kUnknown && loc != kUnwrittenBlock && loc >= epochs_[target].start_tail;
  }
  uint64_t& Cached(int target, uint64_t block) { return cache_[target][block]; }
  Status FetchEntries(int target, uint64_t set, BlockRange r, std::vector<uint64_t>* out);
  // Resolves each block of r to its current-version location, allocating
  // and publishing the blocks first written here (the put protocol's
  // steps 1-3).
  Status Locate(int target, BlockRange r, uint64_t offset, uint64_t length, bool acc,
                std::vector<uint64_t>* locs);
  Status Allocate(int target, uint64_t count, uint64_t* first);
  Status CopyForward(int target, uint64_t old_loc, uint64_t new_loc);
  // A block a write is the first to touch in this version: its index in
  // the write's range, its number, its previous version's location, and
  // whether the write covers it whole (no copy forward needed).
  struct FirstBlock {
    uint64_t index, block, old_loc;
    bool covered;
  };
  // Steps 1-3 of the put protocol for all first blocks of a write; sets
  // their entries of locs.
  Status PublishByCas(int target, const std::vector<FirstBlock>& firsts,
                      std::vector<uint64_t>* locs);
  Status PublishByClaims(int target, const std::vector<FirstBlock>& firsts,
                         std::vector<uint64_t>* locs);
  Status WaitForPublished(int target, uint64_t block, uint64_t* loc, bool* released);
  // Moves bytes between the caller's buffer and the blocks at locs, merging
  // runs of blocks that lie back to back in the log into one access.
  enum class Move { kRead, kWrite, kAccumulate };
  Status MoveBytes(Move move, int target, uint64_t offset, std::span<uint8_t> buffer,
                   const std::vector<uint64_t>& locs, std::optional<RmaElement> type,
                   const std::vector<bool>* only);

  RmaWindow* window_;
  LogLayout layout_;
  bool use_cas_;
  std::vector<LogEpoch> epochs_;
  std::vector<std::vector<uint64_t>> cache_;  // [rank][block] location, kUnknown if none
  std::vector<PendingRead> pending_;
  std::vector<uint8_t> scratch_;  // one block, for copies forward
  LogAccessCounts counts_;
};

}  // namespace cairn

#endif  // CAIRN_VARRAY_LOG_CLIENT_H_
