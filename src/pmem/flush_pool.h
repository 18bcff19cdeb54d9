// FlushPool: flushes one range over T threads at once (the paper's §3.2,
// "checkpoint par clflush"). A line flush waits on the memory controller,
// not the core, so several threads flushing disjoint lines overlap their
// waits; the paper measures the gain flattening out beyond a few threads.
// The pool keeps T - 1 helper threads (started through the Env) parked
// between calls; the caller flushes the first share itself.
// Thread-safety: Flush may be called from one thread at a time.
#ifndef CAIRN_PMEM_FLUSH_POOL_H_
#define CAIRN_PMEM_FLUSH_POOL_H_

#include <memory>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "env/env.h"
#include "pmem/flush.h"

namespace cairn::pmem {

class FlushPool {
 public:
  // threads >= 1 (1: the caller alone, no helper). ops: the primitives to
  // flush with. kInternal if a helper thread cannot be started.
  static Result<std::unique_ptr<FlushPool>> Start(Env* env, int threads,
                                                  const FlushOps& ops = Ops());
  // Stops and joins the helpers.
  ~FlushPool();
  FlushPool(const FlushPool&) = delete;
  FlushPool& operator=(const FlushPool&) = delete;

  int threads() const { return threads_; }
  // Writes back every line of [addr, addr + n), each thread a contiguous
  // share of whole lines, each share drained by its own thread (a fence
  // orders only its own core's flushes): on return the range is persistent.
  void Persist(const void* addr, size_t n) EXCLUDES(mu_);

 private:
  FlushPool(int threads, const FlushOps& ops) : threads_(threads), ops_(ops) {}
  // Helper `index` (1..T-1): waits for a job, flushes its share, reports.
  void HelperLoop(int index) EXCLUDES(mu_);
  // Flushes and drains share `index` of the current job.
  void FlushShare(int index, const LineSpan& job) const;

  const int threads_;
  const FlushOps ops_;
  Mutex mu_;
  CondVar changed_{&mu_};
  LineSpan job_ GUARDED_BY(mu_);
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped per job
  int pending_ GUARDED_BY(mu_) = 0;          // helper shares not yet done
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Thread>> helpers_;
};

}  // namespace cairn::pmem

#endif  // CAIRN_PMEM_FLUSH_POOL_H_
