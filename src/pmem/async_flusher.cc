#include "pmem/async_flusher.h"

#include <algorithm>
#include <thread>

#include "base/clock.h"
#include "env/process_info.h"
#include "env/sysfs.h"

namespace cairn::pmem {
namespace {
constexpr uint64_t kDefaultLlcBytes = 32ull << 20;
constexpr int kMaxCacheIndex = 8;

// "32768K", "1M", "512" -> bytes; 0 if unreadable.
uint64_t ParseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  uint64_t multiplier = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': multiplier = 1ull << 10; digits.pop_back(); break;
    case 'M': multiplier = 1ull << 20; digits.pop_back(); break;
    case 'G': multiplier = 1ull << 30; digits.pop_back(); break;
    default: break;
  }
  uint64_t value = 0;
  return ParseSysfsU64(digits, &value) ? value * multiplier : 0;
}
}  // namespace

uint64_t LastLevelCacheBytes(Env* env) {
  uint64_t best_level = 0, best_size = 0;
  for (int i = 0; i < kMaxCacheIndex; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    auto level = ReadSysfsValue(env, dir + "/level");
    auto size = ReadSysfsValue(env, dir + "/size");
    uint64_t level_value = 0;
    if (!level.ok() || !size.ok() || !ParseSysfsU64(*level, &level_value)) continue;
    uint64_t bytes = ParseCacheSize(*size);
    if (level_value > best_level) {
      best_level = level_value;
      best_size = bytes;
    } else if (level_value == best_level) {
      best_size = std::max(best_size, bytes);
    }
  }
  return best_size > 0 ? best_size : kDefaultLlcBytes;
}

int DefaultLargeThreads() { return std::max(1, UsableCpus() - 1); }

namespace {
// Longer than the gap between an application's hand-offs (a 1 MiB batch
// of a stencil takes ~0.2 ms to compute here) and between an iteration's
// last hand-off and the next one's first, so that a helper serving a loop
// never sleeps; short enough that a finished loop costs its core nothing
// noticeable.
constexpr double kHelperPollSeconds = 2e-3;
}  // namespace

double DefaultHelperPollSeconds() { return UsableCpus() > 1 ? kHelperPollSeconds : 0; }

Result<std::unique_ptr<AsyncFlusher>> AsyncFlusher::Start(Env* env,
                                                          const AsyncFlushOptions& options) {
  uint64_t above = options.parallel_above > 0 ? options.parallel_above : LastLevelCacheBytes(env);
  const FlushOps& ops = options.ops != nullptr ? *options.ops : Ops();
  const double poll = options.poll_seconds >= 0 ? options.poll_seconds : DefaultHelperPollSeconds();
  std::unique_ptr<AsyncFlusher> flusher(new AsyncFlusher(above, ops, poll));
  const int threads = options.large_threads != 0 ? options.large_threads : DefaultLargeThreads();
  CAIRN_ASSIGN_OR_RETURN(flusher->pool_, FlushPool::Start(env, threads, ops));
  CAIRN_ASSIGN_OR_RETURN(flusher->helper_, env->StartThread(ThreadOptions{.name = "cairn-pmem-async"},
                                                                   [f = flusher.get()] {
    f->HelperLoop();
  }));
  return flusher;
}

template <typename Done>
void AsyncFlusher::PollUntil(const Done& done) const {
  if (poll_seconds_ <= 0) return;
  const double deadline = Clock::Real()->MonotonicSeconds() + poll_seconds_;
  while (!done() && Clock::Real()->MonotonicSeconds() < deadline) std::this_thread::yield();
}

AsyncFlusher::~AsyncFlusher() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  if (helper_) helper_->Join();
}

void AsyncFlusher::Submit(const void* addr, size_t n) {
  if (n > 0) Enqueue({addr, n});
}

void AsyncFlusher::SubmitCopy(void* dst, const void* src, size_t n) {
  if (n > 0) Enqueue({dst, n, src});
}

void AsyncFlusher::Enqueue(const Range& range) {
  MutexLock lock(&mu_);
  queue_.push_back(range);
  submitted_.fetch_add(1, std::memory_order_release);
  // A polling helper sees the range without a signal.
  if (!helper_asleep_) return;
  ++stats_.helper_wakeups;
  changed_.SignalAll();
}

void AsyncFlusher::Barrier() {
  MutexLock lock(&mu_);
  ++stats_.barriers;
  if (!queue_.empty() || in_flight_ > 0) ++stats_.barrier_waits;
  // Rather than idle while the helper may have no core (a loaded node),
  // the caller flushes what is still queued itself, line by line; then it
  // waits only for the ranges already in the helper's hands.
  while (!queue_.empty()) {
    const Range range = TakeFront();
    mu_.Unlock();
    FlushOne(range, /*may_use_pool=*/false);
    mu_.Lock();
    ++stats_.helped_ranges;
    Finish(range, /*parallel=*/false);
  }
  if (in_flight_ == 0) return;
  mu_.Unlock();
  PollUntil([this] { return in_flight_.load(std::memory_order_acquire) == 0; });
  mu_.Lock();
  if (in_flight_ > 0) ++stats_.barrier_sleeps;
  while (in_flight_ > 0) changed_.Wait();
}

AsyncFlushStats AsyncFlusher::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

AsyncFlusher::Range AsyncFlusher::TakeFront() {
  Range range = queue_.front();
  queue_.pop_front();
  ++in_flight_;
  return range;
}

void AsyncFlusher::Finish(const Range& range, bool parallel) {
  --in_flight_;
  ++stats_.ranges;
  stats_.bytes += range.n;
  if (range.copy_from != nullptr) ++stats_.copies;
  if (parallel) ++stats_.parallel_ranges;
  changed_.SignalAll();
}

bool AsyncFlusher::FlushOne(const Range& range, bool may_use_pool) {
  if (range.copy_from != nullptr) {
    // addr came to SubmitCopy as a writable destination.
    ops_.copy_nt(const_cast<void*>(range.addr), range.copy_from, range.n);
  } else if (may_use_pool && range.n > parallel_above_) {
    pool_->Persist(range.addr, range.n);  // each thread fences its share
    return true;
  } else {
    ops_.flush_lines(range.addr, range.n);
  }
  ops_.drain();
  return false;
}

void AsyncFlusher::HelperLoop() {
  for (;;) {
    Range range;
    {
      MutexLock lock(&mu_);
      if (queue_.empty() && !stopping_) {
        const uint64_t seen = submitted_.load(std::memory_order_relaxed);
        mu_.Unlock();
        PollUntil([this, seen] {
          return submitted_.load(std::memory_order_acquire) != seen ||
                 stopping_.load(std::memory_order_acquire);
        });
        mu_.Lock();
      }
      // Stopping still drains the queue: a range submitted must not be
      // dropped silently.
      while (queue_.empty() && !stopping_) {
        ++stats_.helper_sleeps;
        helper_asleep_ = true;
        changed_.Wait();
        helper_asleep_ = false;
      }
      if (queue_.empty()) return;
      range = TakeFront();
    }
    // Only the helper uses the pool (FlushPool takes one caller at a time).
    const bool parallel = FlushOne(range, /*may_use_pool=*/true);
    MutexLock lock(&mu_);
    Finish(range, parallel);
  }
}

}  // namespace cairn::pmem
