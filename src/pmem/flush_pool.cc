#include "pmem/flush_pool.h"

#include <algorithm>

namespace cairn::pmem {

Result<std::unique_ptr<FlushPool>> FlushPool::Start(Env* env, int threads, const FlushOps& ops) {
  if (threads < 1) {
    return Error(Code::kInvalidArgument, "a flush pool needs at least 1 thread, not {}", threads);
  }
  std::unique_ptr<FlushPool> pool(new FlushPool(threads, ops));
  for (int i = 1; i < threads; ++i) {
    auto helper = env->StartThread(ThreadOptions{.name = "cairn-pmem-flush"}, [p = pool.get(), i] { p->HelperLoop(i); });
    if (!helper.ok()) return helper.status();  // the destructor joins those started
    pool->helpers_.push_back(std::move(helper).value());
  }
  return pool;
}

FlushPool::~FlushPool() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  for (auto& helper : helpers_) helper->Join();
}

void FlushPool::FlushShare(int index, const LineSpan& job) const {
  size_t per = (job.count + threads_ - 1) / threads_;
  size_t begin = std::min(job.count, per * static_cast<size_t>(index));
  size_t end = std::min(job.count, begin + per);
  if (end > begin) {
    ops_.flush_lines(reinterpret_cast<const void*>(job.first + begin * kCacheLine),
                     (end - begin) * kCacheLine);
  }
  ops_.drain();
}

void FlushPool::Persist(const void* addr, size_t n) {
  LineSpan job = LinesOf(addr, n);
  if (threads_ == 1 || job.count < static_cast<size_t>(threads_)) {
    ops_.flush_lines(addr, n);
    ops_.drain();
    return;
  }
  {
    MutexLock lock(&mu_);
    job_ = job;
    pending_ = threads_ - 1;
    ++generation_;
    changed_.SignalAll();
  }
  FlushShare(0, job);
  MutexLock lock(&mu_);
  while (pending_ > 0) changed_.Wait();
}

void FlushPool::HelperLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    LineSpan job;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && generation_ == seen) changed_.Wait();
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    FlushShare(index, job);
    MutexLock lock(&mu_);
    if (--pending_ == 0) changed_.SignalAll();
  }
}

}  // namespace cairn::pmem
