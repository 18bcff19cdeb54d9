// RmaWindow: memory that every rank exposes for one-sided access (MPI-3
// RMA in passive-target mode), the transport of the versioned arrays
// (varray/). Each rank allocates the same number of bytes; any rank reads,
// writes, accumulates into and atomically updates any rank's bytes without
// the owner taking part. NewRmaWindow gives the MPI implementation over an
// MPI Comm and a local one (plain memory, std::atomic_ref) for a one-rank
// Comm, so that varray/ runs and unit-tests without MPI.
//
// Completion: Put, Get and Accumulate are non-blocking; they complete (the
// source may be reused, the destination read) at Flush(target) or
// FlushAll(). The atomics complete before they return. Accumulate, the
// atomics and CompareAndSwap on one word are atomic with respect to each
// other (MPI's accumulate rule), not to Put.
//
// Thread-safety: a window is used by one thread at a time.
#ifndef CAIRN_COMM_RMA_WINDOW_H_
#define CAIRN_COMM_RMA_WINDOW_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "comm/comm.h"

namespace cairn {

// Element types an Accumulate sums.
enum class RmaElement { kInt32, kInt64, kUint64, kFloat, kDouble };
uint64_t RmaElementSize(RmaElement type);

class RmaWindow {
 public:
  virtual ~RmaWindow() = default;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank's bytes of the window. Local loads and stores meet remote
  // accesses only across SyncLocal and a barrier.
  virtual std::span<uint8_t> local() = 0;

  // REQUIRES (all calls): 0 <= target < size(), the byte range within the
  // window; kInvalidArgument otherwise. Word offsets are 8-aligned.
  virtual Status Put(int target, uint64_t offset, std::span<const uint8_t> bytes) = 0;
  virtual Status Get(int target, uint64_t offset, std::span<uint8_t> into) = 0;
  // Element-wise sum of values into the target's elements of `type`.
  virtual Status Accumulate(int target, uint64_t offset, std::span<const uint8_t> values,
                            RmaElement type) = 0;
  virtual Status Flush(int target) = 0;
  virtual Status FlushAll() = 0;

  // Atomics on one 64-bit word; each completes before it returns.
  // FetchAdd returns the word before the addition.
  virtual Result<uint64_t> FetchAdd(int target, uint64_t offset, uint64_t add) = 0;
  virtual Result<uint64_t> AtomicLoad(int target, uint64_t offset) = 0;
  virtual Status AtomicStore(int target, uint64_t offset, uint64_t value) = 0;
  // Replaces the word with desired if it equals expected; returns the word
  // found. kUnsupported when !compare_and_swap_safe() (never crashes).
  virtual Result<uint64_t> CompareAndSwap(int target, uint64_t offset, uint64_t expected,
                                          uint64_t desired) = 0;
  // Whether CompareAndSwap works here. False under Open MPI 4.x with a
  // one-sided component other than osc/sm, where MPI_Compare_and_swap
  // crashes (Open MPI issue 11349); the same answer on every rank.
  bool compare_and_swap_safe() const { return cas_safe_; }
  // Why CompareAndSwap is not safe ("" when it is).
  const std::string& compare_and_swap_note() const { return cas_note_; }

  // The same atomics, non-blocking: they complete at Flush(target) or
  // FlushAll(), when *before / *found hold the word found. The operands
  // are read from the caller's memory until then (MPI's rule), so they
  // are passed by pointer and must stay valid; so must the results.
  // StartCompareAndSwap is kUnsupported where CompareAndSwap is.
  virtual Status StartFetchAdd(int target, uint64_t offset, const uint64_t* add,
                               uint64_t* before) = 0;
  virtual Status StartCompareAndSwap(int target, uint64_t offset, const uint64_t* expected,
                                     const uint64_t* desired, uint64_t* found) = 0;
  virtual Status StartAtomicStore(int target, uint64_t offset, const uint64_t* value) = 0;
  // Replaces the word with *value; *before gets the word found. Works with
  // every one-sided component (MPI_Fetch_and_op with MPI_REPLACE).
  virtual Status StartSwap(int target, uint64_t offset, const uint64_t* value,
                           uint64_t* before) = 0;

  // Makes this rank's local stores visible to remote accesses and remote
  // accesses visible to local loads (MPI_Win_sync). Pair with a barrier.
  virtual Status SyncLocal() = 0;

 protected:
  RmaWindow(int rank, int size, bool cas_safe, std::string cas_note)
      : rank_(rank), size_(size), cas_safe_(cas_safe), cas_note_(std::move(cas_note)) {}
  // The argument check every call shares.
  Status CheckRange(int target, uint64_t offset, uint64_t length, uint64_t window_bytes) const;

 private:
  int rank_;
  int size_;
  bool cas_safe_;
  std::string cas_note_;
};

// Collective over comm: a window of `bytes` on every rank (the same on
// all). Its contents are undefined: pages the caller never touches need
// no memory. An MPI Comm gives an MPI window; a one-rank Comm
// without MPI a local one; any other Comm kUnsupported.
Result<std::unique_ptr<RmaWindow>> NewRmaWindow(Comm& comm, uint64_t bytes);
// A one-rank window over `bytes` of this process's memory, whatever the
// Comm: for code that runs the RMA protocol on memory only it accesses.
std::unique_ptr<RmaWindow> NewLocalRmaWindow(uint64_t bytes);

}  // namespace cairn

#endif  // CAIRN_COMM_RMA_WINDOW_H_
