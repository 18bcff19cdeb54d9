// InPlaceArray: an array in persistent memory that is persisted every
// iteration without copying (in-place versioning, the paper's §4). The file
// holds two copies of the array; in each iteration the application writes
// one (the working version) and reads the other (the consistent version,
// the last committed iteration). Commit() flushes the working version and
// persists an epoch record that names it consistent; the two swap roles.
// A crash at any point leaves one valid epoch record naming a copy whose
// every line was flushed before the record was written: reopening yields
// exactly the last committed iteration. Layout: docs/format.md
// "Persistent arrays".
//
// The post-update version switch (§4, special case I): Read() is the
// consistent version until MarkUpdated() says the iteration's first update
// is done, then the working version. It serves code in phases (a loop that
// updates the array, then loops that read the update). Within one loop
// body that reads the old value and then the updated one (the paper's
// Fig. 9.c), read Consistent() and Working() explicitly.
//
// Arrays whose elements are not all written every iteration (special case
// II, non-uniform updates) cannot alternate copies: an element skipped in
// one iteration would be read back two iterations old. They use copy-based
// persistence instead: the application works on one array in DRAM and
// Commit() copies it with non-temporal stores into the copy that is not
// consistent (§3.2, "cache bypassing"), then flips the record. The choice
// is per array (UpdatePattern); kAuto profiles the first iteration after
// opening in copy mode and switches to in-place if it changed every element.
//
// Thread-safety: one thread uses an array at a time (an AsyncFlusher it
// was given may flush its working version meanwhile).
#ifndef CAIRN_PMEM_IN_PLACE_ARRAY_H_
#define CAIRN_PMEM_IN_PLACE_ARRAY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "env/pmem_map.h"
#include "format/pmem_array_layout.h"
#include "pmem/async_flusher.h"

namespace cairn::pmem {

enum class UpdatePattern {
  kUniform,     // every element written every iteration: in-place versioning
  kNonUniform,  // some elements skipped in some iterations: copy-based
  kAuto,        // profile the first iteration, then choose
};
enum class PersistMode { kProfiling, kInPlace, kCopy };
const char* PersistModeName(PersistMode mode);  // "profiling", "in-place", "copy"

struct InPlaceArrayOptions {
  UpdatePattern pattern = UpdatePattern::kAuto;
  // Flushes the working version in the background between StartFlush()
  // and Commit() (not owned; may be null: Commit flushes itself).
  AsyncFlusher* flusher = nullptr;
};

// No iteration committed yet.
inline constexpr int64_t kNoIteration = -1;

class InPlaceArray {
 public:
  // Opens the array at path, or creates it when there is no file. An
  // existing file must hold `count` elements of `elem_size` bytes
  // (kMismatch naming the path and both shapes) and a valid header
  // (kCorrupt naming the path); it reopens at its last committed iteration.
  static Result<std::unique_ptr<InPlaceArray>> Open(const std::string& path, uint64_t count,
                                                    uint64_t elem_size,
                                                    const InPlaceArrayOptions& options);
  ~InPlaceArray();

  uint64_t count() const { return count_; }
  uint64_t elem_size() const { return elem_size_; }
  // The last committed iteration (kNoIteration before the first Commit).
  int64_t iteration() const { return iteration_; }
  PersistMode mode() const { return mode_; }
  // Why the mode was chosen, for the log and cairn_pmem_array_info.
  const std::string& mode_reason() const { return mode_reason_; }
  bool is_pmem() const { return map_->is_pmem(); }

  // Where this iteration's writes go. Valid until the next Commit.
  void* Working() { return working_; }
  // The last committed iteration's data (read-only; after the first Open
  // of a new file, zeros).
  const void* Consistent() const { return consistent_; }
  // The post-update version switch: Consistent() until MarkUpdated() in
  // this iteration, Working() after it (copy mode: always the working array).
  const void* Read() const { return updated_ ? working_ : consistent_for_reads_; }
  void MarkUpdated() { updated_ = true; }

  // Proactive flushing (§4.2): the iteration's last write to elements
  // [first, first + n) of the working version is done. With a flusher the
  // range is handed to the helper thread, which flushes it (in place) or
  // streams it into the copy the commit will name (copy and profiling
  // modes: the paper's proactive copying). Adjacent ranges are gathered
  // into batches of kFlushBatchBytes, so a caller may report every row or
  // plane, and the work overlaps the computation that follows. Commit does
  // the last batch and what was never reported itself, then waits only for
  // what the helper has not finished. Without a flusher nothing happens
  // here: Commit persists everything. REQUIRES: no write to the range
  // before Commit (a later write may be missed).
  // kInvalidArgument naming the path if the range is outside the array.
  Status DoneWriting(uint64_t first, uint64_t n);
  // The whole working version is done: hands everything not yet handed
  // to the flusher over now, without waiting for a batch to fill.
  void StartFlush();
  // Persists the working version as the next iteration (iteration() + 1)
  // and swaps the versions. kIo naming the path if the medium's persist
  // (msync on an ordinary file) fails; the iteration is not committed then.
  Status Commit();

  // Reported ranges are handed to the flusher once this many adjacent
  // bytes are done: fewer hand-offs (each may wake the helper), and small
  // enough that the last batch, which Commit flushes itself, is short.
  static constexpr uint64_t kFlushBatchBytes = 1ull << 20;

 private:
  InPlaceArray() = default;
  // Lays out a new file (header, no epoch record).
  Status Format(const PmemArrayShape& shape);
  // Reads the header and the newest valid epoch record of an existing file.
  Status Load(uint64_t count, uint64_t elem_size);
  uint8_t* Copy(int index) const;
  // Points working_/consistent_ at the copies for the current state.
  void AssignRoles();
  // Writes and persists the epoch record naming copy `index` consistent at
  // `iteration`.
  Status PersistRecord(int64_t iteration, int index);
  // Copy mode: streams the DRAM array into the non-consistent copy.
  Status PersistCopyMode(int target);
  // In place: makes the working version persistent (flushes what the
  // flusher was not handed, fences, waits for the flusher's share).
  Status PersistInPlace();
  // Hands the gathered batch of done bytes to the flusher.
  void SubmitBatch();
  // Calls fn(begin, end) for each byte range of the working version not
  // handed to the flusher in this iteration.
  template <typename Fn>
  void ForEachUnsubmitted(Fn fn) const;
  // kAuto's decision at the end of the profiled iteration: whether every
  // element differs from the previous iteration's.
  void ChooseModeFromProfile(const uint8_t* previous);

  std::unique_ptr<PmemMap> map_;
  AsyncFlusher* flusher_ = nullptr;
  uint64_t count_ = 0;
  uint64_t elem_size_ = 0;
  uint64_t copy_bytes_ = 0;    // one copy's reserved bytes (page multiple)
  int64_t iteration_ = kNoIteration;
  int consistent_index_ = 1;   // before any commit, copy 0 is the working one
  PersistMode mode_ = PersistMode::kProfiling;
  std::string mode_reason_;
  uint8_t* working_ = nullptr;
  const uint8_t* consistent_ = nullptr;
  const uint8_t* consistent_for_reads_ = nullptr;
  bool updated_ = false;
  // In place with a flusher, this iteration: done bytes not yet handed to
  // the flusher ([begin, end) of the working version), and the sorted,
  // disjoint byte ranges it has been handed.
  struct ByteRange {
    uint64_t begin = 0;
    uint64_t end = 0;
  };
  ByteRange batch_;
  std::vector<ByteRange> submitted_;
  // Copy and profiling modes: the array the application works on.
  std::unique_ptr<uint8_t[]> dram_;
};

}  // namespace cairn::pmem

#endif  // CAIRN_PMEM_IN_PLACE_ARRAY_H_
