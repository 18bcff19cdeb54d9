#include "pmem/async_flusher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "env/process_info.h"

namespace cairn::pmem {
namespace {

constexpr size_t kLines = 4096;
alignas(kCacheLine) uint8_t g_buffer[kLines * kCacheLine];
std::atomic<int> g_flushed[kLines];

void CountingFlush(const void* addr, size_t n) {
  LineSpan span = LinesOf(addr, n);
  for (size_t i = 0; i < span.count; ++i) {
    g_flushed[(span.first - reinterpret_cast<uintptr_t>(g_buffer)) / kCacheLine + i]++;
  }
}
void Drain() {}
void NoCopy(void*, const void*, size_t) {}
constexpr FlushOps kCounting{FlushKind::kClflush, CopyKind::kSse2, CountingFlush, Drain, NoCopy};

// Every line's flush count back to zero, and options that flush with `ops`.
AsyncFlushOptions CountingFrom(const FlushOps& ops) {
  for (auto& c : g_flushed) c = 0;
  AsyncFlushOptions options;
  options.ops = &ops;
  return options;
}

TEST(AsyncFlusherTest, BarrierWaitsForEverySubmittedRangeInOrder) {
  AsyncFlushOptions options = CountingFrom(kCounting);
  options.parallel_above = 256 * kCacheLine;
  options.large_threads = 2;
  auto flusher = AsyncFlusher::Start(PosixEnv(), options);
  ASSERT_TRUE(flusher.ok()) << flusher.status().ToString();
  // Small ranges (line by line on the helper) and large ones (parallel).
  (*flusher)->Submit(g_buffer, 100 * kCacheLine);
  (*flusher)->Submit(g_buffer + 100 * kCacheLine, 1000 * kCacheLine);
  (*flusher)->Submit(g_buffer + 1100 * kCacheLine, kLines * kCacheLine - 1100 * kCacheLine);
  // Let the helper take all three (a Barrier would flush queued ranges
  // itself, line by line, and this test is about the helper's paths).
  while ((*flusher)->stats().ranges < 3) std::this_thread::yield();
  (*flusher)->Barrier();
  for (size_t i = 0; i < kLines; ++i) ASSERT_EQ(g_flushed[i].load(), 1) << "line " << i;
  AsyncFlushStats stats = (*flusher)->stats();
  EXPECT_EQ(stats.ranges, 3u);
  EXPECT_EQ(stats.bytes, kLines * kCacheLine);
  EXPECT_EQ(stats.parallel_ranges, 2u);
  EXPECT_EQ(stats.barriers, 1u);
}

// A Barrier whose helper is held up flushes the queued ranges itself and
// then waits for the one the helper holds.
std::atomic<bool> g_gate_open{false};
std::atomic<bool> g_helper_holds_first{false};
void GatedCountingFlush(const void* addr, size_t n) {
  if (addr == g_buffer) {
    g_helper_holds_first = true;
    while (!g_gate_open) std::this_thread::yield();
  }
  CountingFlush(addr, n);
}
constexpr FlushOps kGated{FlushKind::kClflush, CopyKind::kSse2, GatedCountingFlush, Drain,
                          NoCopy};

// The helper holds its range at g_buffer until the gate opens.
AsyncFlushOptions GatedWithPoll(double poll_seconds) {
  g_gate_open = false;
  g_helper_holds_first = false;
  AsyncFlushOptions options = CountingFrom(kGated);
  options.poll_seconds = poll_seconds;
  return options;
}

TEST(AsyncFlusherTest, BarrierFlushesQueuedRangesItselfWhileTheHelperIsBusy) {
  auto flusher = AsyncFlusher::Start(PosixEnv(), GatedWithPoll(-1));
  ASSERT_TRUE(flusher.ok());
  (*flusher)->Submit(g_buffer, 10 * kCacheLine);
  while (!g_helper_holds_first) std::this_thread::yield();
  (*flusher)->Submit(g_buffer + 10 * kCacheLine, 10 * kCacheLine);
  (*flusher)->Submit(g_buffer + 20 * kCacheLine, kLines * kCacheLine - 20 * kCacheLine);
  std::thread opener([&] {
    while ((*flusher)->stats().helped_ranges < 2) std::this_thread::yield();
    g_gate_open = true;
  });
  (*flusher)->Barrier();
  opener.join();
  for (size_t i = 0; i < kLines; ++i) ASSERT_EQ(g_flushed[i].load(), 1) << "line " << i;
  AsyncFlushStats stats = (*flusher)->stats();
  EXPECT_EQ(stats.helped_ranges, 2u);
  EXPECT_EQ(stats.ranges, 3u);
}

// Holds the helper on a range of 10 lines at g_buffer and calls Barrier,
// while another thread opens the gate once open_when(stats) holds; checks
// that each line was flushed once and returns the stats after.
AsyncFlushStats BarrierOnAHeldRange(double poll_seconds,
                                    const std::function<bool(const AsyncFlushStats&)>& open_when) {
  auto flusher = AsyncFlusher::Start(PosixEnv(), GatedWithPoll(poll_seconds));
  if (!flusher.ok()) {
    ADD_FAILURE() << flusher.status().ToString();
    return {};
  }
  (*flusher)->Submit(g_buffer, 10 * kCacheLine);
  while (!g_helper_holds_first) std::this_thread::yield();
  std::thread opener([&] {
    while (!open_when((*flusher)->stats())) std::this_thread::yield();
    g_gate_open = true;
  });
  (*flusher)->Barrier();
  opener.join();
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(g_flushed[i].load(), 1) << "line " << i;
  return (*flusher)->stats();
}

// A Barrier left waiting only for the helper's range polls for its end
// instead of sleeping: being woken would cost the helper a system call and
// the caller an interrupt, once per iteration of a loop.
TEST(AsyncFlusherTest, ABarrierPollsForTheHelpersLastRange) {
  AsyncFlushStats stats =
      BarrierOnAHeldRange(3600, [](const AsyncFlushStats& s) { return s.barriers >= 1; });
  EXPECT_EQ(stats.barrier_waits, 1u);
  EXPECT_EQ(stats.barrier_sleeps, 0u);
}

// Past its poll, a Barrier sleeps until the helper's range is done. (The
// count rises under the lock that the sleep releases: the gate opens only
// once the Barrier sleeps.)
TEST(AsyncFlusherTest, ABarrierSleepsOnceItsPollIsOver) {
  BarrierOnAHeldRange(0, [](const AsyncFlushStats& s) { return s.barrier_sleeps >= 1; });
}

TEST(AsyncFlusherTest, DestructionFlushesWhatIsQueued) {
  AsyncFlushOptions options = CountingFrom(kCounting);
  {
    auto flusher = AsyncFlusher::Start(PosixEnv(), options);
    ASSERT_TRUE(flusher.ok());
    for (size_t i = 0; i < kLines; ++i) (*flusher)->Submit(g_buffer + i * kCacheLine, kCacheLine);
  }
  for (size_t i = 0; i < kLines; ++i) ASSERT_EQ(g_flushed[i].load(), 1) << "line " << i;
}

// SubmitCopy: the helper streams the bytes over with the real primitives,
// in FIFO order with flushes, and Barrier waits for them; a copy is never
// split over the large-range threads.
TEST(AsyncFlusherTest, SubmitCopyCopiesBeforeTheBarrierReturns) {
  constexpr uint32_t kSeed = 1616;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937 rng(kSeed);
  std::vector<uint8_t> src((3 << 20) + 7), dst(src.size() + 64, 0);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  AsyncFlushOptions options;
  options.parallel_above = 1 << 20;
  auto flusher = AsyncFlusher::Start(PosixEnv(), options);
  ASSERT_TRUE(flusher.ok());
  (*flusher)->SubmitCopy(dst.data() + 5, src.data(), 1 << 20);  // unaligned destination
  (*flusher)->Submit(dst.data(), 1 << 20);
  const size_t rest = src.size() - (1 << 20);
  (*flusher)->SubmitCopy(dst.data() + 5 + (1 << 20), src.data() + (1 << 20), rest);
  (*flusher)->Barrier();
  EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin() + 5));
  AsyncFlushStats stats = (*flusher)->stats();
  EXPECT_EQ(stats.copies, 2u);
  EXPECT_EQ(stats.ranges, 3u);
  EXPECT_EQ(stats.parallel_ranges, 0u);  // the 1 MiB flush is not above the threshold
}

// A helper that polls between ranges takes each one without being woken:
// a wake-up costs the submitting thread a system call and the helper's core
// an interrupt, once per batch of a loop.
TEST(AsyncFlusherTest, APollingHelperTakesRangesWithoutBeingWoken) {
  AsyncFlushOptions options = CountingFrom(kCounting);
  options.poll_seconds = 3600;  // the helper never gets to sleep in this test
  auto flusher = AsyncFlusher::Start(PosixEnv(), options);
  ASSERT_TRUE(flusher.ok());
  for (uint64_t i = 0; i < 8; ++i) {
    (*flusher)->Submit(g_buffer + i * kCacheLine, kCacheLine);
    while ((*flusher)->stats().ranges < i + 1) std::this_thread::yield();
  }
  (*flusher)->Barrier();
  for (size_t i = 0; i < 8; ++i) ASSERT_EQ(g_flushed[i].load(), 1) << "line " << i;
  AsyncFlushStats stats = (*flusher)->stats();
  EXPECT_EQ(stats.helper_wakeups, 0u);
  EXPECT_EQ(stats.helped_ranges, 0u);
}

// Without polling the helper sleeps whenever its queue is empty, and a
// Submit that finds it asleep wakes it. (The destructor ends a poll at
// once: the test above finishes without waiting out poll_seconds.)
TEST(AsyncFlusherTest, ASleepingHelperIsWokenForEachRange) {
  AsyncFlushOptions options = CountingFrom(kCounting);
  options.poll_seconds = 0;
  auto flusher = AsyncFlusher::Start(PosixEnv(), options);
  ASSERT_TRUE(flusher.ok());
  for (uint64_t i = 0; i < 16; ++i) {
    // The count rises under the lock that waiting releases: the helper
    // is asleep once the count shows it.
    while ((*flusher)->stats().helper_sleeps < i + 1) std::this_thread::yield();
    (*flusher)->Submit(g_buffer + i * kCacheLine, kCacheLine);
    while ((*flusher)->stats().ranges < i + 1) std::this_thread::yield();
  }
  for (size_t i = 0; i < 16; ++i) ASSERT_EQ(g_flushed[i].load(), 1) << "line " << i;
  EXPECT_EQ((*flusher)->stats().helper_wakeups, 16u);
}

TEST(AsyncFlusherTest, TheHelperPollsOnlyWhereTheProcessHasACpuToSpare) {
  EXPECT_EQ(DefaultHelperPollSeconds() > 0, UsableCpus() > 1);
}

// By default the large ranges go to the CPUs the computation leaves: one
// thread fewer than this process may use, at least the helper.
TEST(AsyncFlusherTest, LargeRangeThreadsFollowTheProcesssCpus) {
  auto by_default = AsyncFlusher::Start(PosixEnv(), {});
  ASSERT_TRUE(by_default.ok());
  EXPECT_EQ((*by_default)->large_threads(), std::max(1, UsableCpus() - 1));
  AsyncFlushOptions three;
  three.large_threads = 3;
  auto explicit_three = AsyncFlusher::Start(PosixEnv(), three);
  ASSERT_TRUE(explicit_three.ok());
  EXPECT_EQ((*explicit_three)->large_threads(), 3);
  AsyncFlushOptions negative;
  negative.large_threads = -1;
  EXPECT_EQ(AsyncFlusher::Start(PosixEnv(), negative).status().code(), Code::kInvalidArgument);
}

TEST(AsyncFlusherTest, LastLevelCacheIsKnown) {
  uint64_t llc = LastLevelCacheBytes(PosixEnv());
  EXPECT_GE(llc, 256u << 10);
  std::printf("last-level cache: %llu bytes\n", static_cast<unsigned long long>(llc));
}

}  // namespace
}  // namespace cairn::pmem
