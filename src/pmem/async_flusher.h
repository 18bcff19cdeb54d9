// AsyncFlusher: asynchronous, proactive cache flushing (the paper's §4.2,
// Fig. 11). The application submits a range as soon as it will not write
// it again in this iteration (cairn_flush_async); a helper thread flushes
// it from a FIFO while the application computes on; the application waits
// (cairn_flush_barrier) only where the range must be persistent, e.g.
// before it becomes the consistent version.
//
// How a range is flushed depends on its size against the last-level cache
// (docs/pmem.md "The size rule"). The paper flushes large objects with
// WBINVD, a privileged instruction that writes back the whole cache
// hierarchy, once the objects exceed ten times the LLC: most of their lines
// are no longer cached, yet a per-line flush costs about the same whether
// the line is cached or not (its Table 1). WBINVD is not available to a
// user process, so Cairn keeps per-line flushing and, for a range larger
// than the LLC, splits it over `large_threads` threads (FlushPool): the
// cost that WBINVD avoided is the serial latency of flushing absent lines,
// and that latency is what parallel flushes overlap.
// The same FIFO carries persistent copies (SubmitCopy) for arrays that are
// persisted by copying, so that their copy overlaps computation too.
// Thread-safety: Submit, SubmitCopy and Barrier may be called from any
// thread.
#ifndef CAIRN_PMEM_ASYNC_FLUSHER_H_
#define CAIRN_PMEM_ASYNC_FLUSHER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>

#include "base/mutex.h"
#include "base/status.h"
#include "env/env.h"
#include "pmem/flush_pool.h"

namespace cairn::pmem {

// The CPUs this process may use (UsableCpus) less one for the application's
// thread, at least 1: more flush threads than that take cores from the
// computation that the flush overlaps.
int DefaultLargeThreads();

struct AsyncFlushOptions {
  // Ranges above this many bytes are flushed by large_threads threads;
  // 0: the last-level cache's size (LastLevelCacheBytes).
  uint64_t parallel_above = 0;
  // >= 1, the helper thread counted; 0: DefaultLargeThreads().
  int large_threads = 0;
  const FlushOps* ops = nullptr;  // the primitives; null: Ops()
  // How long the helper keeps polling an empty queue (yielding its core
  // between polls) before it sleeps; negative: DefaultHelperPollSeconds().
  // A helper that sleeps between ranges must be woken for each one, and a
  // wake-up (an inter-processor interrupt, a VM exit under a hypervisor)
  // costs the submitting thread more than the flush saves it.
  double poll_seconds = -1;
};

// How long the helper polls before it sleeps: kHelperPollSeconds where the
// process has a CPU beside the application's thread, else 0 (polling would
// only take turns with the thread it serves).
double DefaultHelperPollSeconds();

struct AsyncFlushStats {
  uint64_t ranges = 0;           // ranges flushed or copied
  uint64_t bytes = 0;            // bytes of those ranges
  uint64_t copies = 0;           // of them, copies (SubmitCopy)
  uint64_t parallel_ranges = 0;  // of them, flushed over large_threads threads
  uint64_t barriers = 0;         // Barrier calls
  uint64_t barrier_waits = 0;    // Barrier calls that found work still queued
  uint64_t barrier_sleeps = 0;   // Barrier calls that polled in vain and slept
  uint64_t helped_ranges = 0;    // ranges a Barrier's caller flushed itself
  uint64_t helper_sleeps = 0;    // times the helper polled its empty queue in vain and slept
  uint64_t helper_wakeups = 0;   // Submit/SubmitCopy calls that found the helper asleep
};

class AsyncFlusher {
 public:
  // Starts the helper thread (and the pool for large ranges) through env.
  // kInvalidArgument for large_threads < 0; kInternal if a thread cannot
  // be started.
  static Result<std::unique_ptr<AsyncFlusher>> Start(Env* env, const AsyncFlushOptions& options);
  // Finishes what is queued, then stops and joins the helper.
  ~AsyncFlusher();
  AsyncFlusher(const AsyncFlusher&) = delete;
  AsyncFlusher& operator=(const AsyncFlusher&) = delete;

  // Queues [addr, addr + n) for flushing (FIFO). REQUIRES: the range stays
  // mapped until a Barrier after this call returns; writes to it after
  // Submit may or may not be covered (the paper's contract: submit once the
  // iteration's last write to it is done).
  void Submit(const void* addr, size_t n) EXCLUDES(mu_);
  // Queues a persistent copy: n bytes from src to dst with non-temporal
  // stores (copy_nt), fenced by the helper (the paper's proactive,
  // asynchronous copying for arrays persisted by copying, its MG). Copies
  // are not split over large_threads. REQUIRES: both ranges stay mapped,
  // and src unwritten, until a Barrier after this call returns.
  void SubmitCopy(void* dst, const void* src, size_t n) EXCLUDES(mu_);
  // Blocks until every range submitted before the call is persistent. The
  // caller flushes (or copies) what is still queued itself, line by line,
  // instead of waiting for a helper that may have no core; it waits only
  // for the ranges the helper is working on.
  void Barrier() EXCLUDES(mu_);
  AsyncFlushStats stats() const EXCLUDES(mu_);
  // Threads that flush a range above parallel_above, the helper counted.
  int large_threads() const { return pool_->threads(); }
  uint64_t parallel_above() const { return parallel_above_; }

 private:
  struct Range {
    const void* addr;
    size_t n;
    const void* copy_from = nullptr;  // non-null: copy n bytes from here to addr
  };
  AsyncFlusher(uint64_t parallel_above, const FlushOps& ops, double poll_seconds)
      : parallel_above_(parallel_above), ops_(ops), poll_seconds_(poll_seconds) {}
  void HelperLoop() EXCLUDES(mu_);
  // Polls, without the lock and yielding the core, until done() or
  // poll_seconds_ pass: the helper before it sleeps on an empty queue, a
  // Barrier before it sleeps on the helper's last ranges. A sleeper costs
  // its waker a futex call and the sleeper an interrupt to be woken, each
  // a VM exit on a virtual machine.
  template <typename Done>
  void PollUntil(const Done& done) const EXCLUDES(mu_);
  // Queues a range (Submit, SubmitCopy) and wakes the helper if it sleeps.
  void Enqueue(const Range& range) EXCLUDES(mu_);
  // Pops the oldest range and counts it in flight.
  Range TakeFront() REQUIRES(mu_);
  // Counts a range done and wakes the waiters.
  void Finish(const Range& range, bool parallel) REQUIRES(mu_);
  // Flushes or copies one range, then fences; over the pool if allowed and
  // the range is above parallel_above_ (returns whether it was).
  bool FlushOne(const Range& range, bool may_use_pool);

  const uint64_t parallel_above_;
  const FlushOps ops_;
  const double poll_seconds_;
  std::unique_ptr<FlushPool> pool_;  // flushes ranges above parallel_above_
  mutable Mutex mu_;
  CondVar changed_{&mu_};
  std::deque<Range> queue_ GUARDED_BY(mu_);
  // Ranges taken off the queue, not yet done. Each of these atomics is set
  // under mu_ (a wait on changed_ depends on it) and also read without it
  // (PollUntil).
  std::atomic<int> in_flight_{0};
  std::atomic<bool> stopping_{false};
  bool helper_asleep_ GUARDED_BY(mu_) = false;  // Enqueue must wake it
  std::atomic<uint64_t> submitted_{0};          // ranges ever queued
  AsyncFlushStats stats_ GUARDED_BY(mu_);
  std::unique_ptr<Thread> helper_;
};

// The size of the largest CPU cache (the LLC) from sysfs
// (/sys/devices/system/cpu/cpu0/cache/index*/), or 32 MiB when it cannot be
// read (a container without sysfs).
uint64_t LastLevelCacheBytes(Env* env);

}  // namespace cairn::pmem

#endif  // CAIRN_PMEM_ASYNC_FLUSHER_H_
