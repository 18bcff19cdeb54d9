#include "pmem/flush_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace cairn::pmem {
namespace {

// A fake flush that counts, per line of a test buffer, how often it was
// flushed, and how often any thread drained.
constexpr size_t kLines = 1000;
alignas(kCacheLine) uint8_t g_buffer[kLines * kCacheLine];
std::atomic<int> g_flushed[kLines];
std::atomic<int> g_drains{0};

void CountingFlush(const void* addr, size_t n) {
  LineSpan span = LinesOf(addr, n);
  for (size_t i = 0; i < span.count; ++i) {
    size_t line = (span.first - reinterpret_cast<uintptr_t>(g_buffer)) / kCacheLine + i;
    g_flushed[line].fetch_add(1);
  }
}
void CountingDrain() { g_drains.fetch_add(1); }
void NoCopy(void*, const void*, size_t) {}

constexpr FlushOps kCounting{FlushKind::kClflush, CopyKind::kSse2, CountingFlush, CountingDrain,
                             NoCopy};

void Reset() {
  for (auto& c : g_flushed) c = 0;
  g_drains = 0;
}

TEST(FlushPoolTest, EveryLineOnceAndEveryThreadDrains) {
  for (int threads : {1, 2, 3, 4}) {
    auto pool = FlushPool::Start(PosixEnv(), threads, kCounting);
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    for (size_t first : {size_t{0}, size_t{17}}) {
      Reset();
      size_t lines = kLines - first;
      (*pool)->Persist(g_buffer + first * kCacheLine + 5, lines * kCacheLine - 5);
      for (size_t i = 0; i < kLines; ++i) {
        ASSERT_EQ(g_flushed[i].load(), i >= first ? 1 : 0) << "line " << i << ", " << threads
                                                           << " threads";
      }
      EXPECT_EQ(g_drains.load(), threads);
    }
  }
}

TEST(FlushPoolTest, RefusesZeroThreads) {
  auto pool = FlushPool::Start(PosixEnv(), 0);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), Code::kInvalidArgument);
}

TEST(FlushPoolTest, RealFlushKeepsTheBytes) {
  std::vector<uint8_t> buf(1 << 20, 0x5A);
  auto pool = FlushPool::Start(PosixEnv(), 2);
  ASSERT_TRUE(pool.ok());
  (*pool)->Persist(buf.data(), buf.size());
  EXPECT_EQ(buf, std::vector<uint8_t>(1 << 20, 0x5A));
}

}  // namespace
}  // namespace cairn::pmem
