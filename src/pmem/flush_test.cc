#include "pmem/flush.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "base/cpu_features.h"

namespace cairn::pmem {
namespace {

constexpr uint32_t kSeed = 20261124;

std::vector<FlushKind> SupportedFlushes() {
  std::vector<FlushKind> out;
  for (auto k : {FlushKind::kClflush, FlushKind::kClflushopt, FlushKind::kClwb}) {
    if (Supports(k)) out.push_back(k);
  }
  return out;
}

std::vector<CopyKind> SupportedCopies() {
  std::vector<CopyKind> out;
  for (auto k : {CopyKind::kSse2, CopyKind::kAvx2, CopyKind::kAvx512}) {
    if (Supports(k)) out.push_back(k);
  }
  return out;
}

TEST(LinesOfTest, MatchesTheLinesEveryByteFallsIn) {
  std::mt19937_64 rng(kSeed);
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  for (int trial = 0; trial < 2000; ++trial) {
    uintptr_t addr = 4096 + rng() % 512;
    size_t n = rng() % 300;
    std::set<uintptr_t> lines;
    for (size_t i = 0; i < n; ++i) lines.insert((addr + i) / kCacheLine * kCacheLine);
    LineSpan span = LinesOf(reinterpret_cast<const void*>(addr), n);
    ASSERT_EQ(span.count, lines.size()) << "addr " << addr << " n " << n;
    if (n > 0) {
      EXPECT_EQ(span.first, *lines.begin());
    }
  }
}

TEST(FlushOpsTest, BestIsChosenFromCpuid) {
  const FlushOps& ops = Ops();
  const CpuFeatures& f = HostCpuFeatures();
  EXPECT_EQ(ops.flush, f.clwb         ? FlushKind::kClwb
                       : f.clflushopt ? FlushKind::kClflushopt
                                      : FlushKind::kClflush);
  EXPECT_EQ(ops.copy, f.avx512f ? CopyKind::kAvx512 : f.avx2 ? CopyKind::kAvx2 : CopyKind::kSse2);
  std::printf("flush %s, copy %s\n", FlushKindName(ops.flush), CopyKindName(ops.copy));
}

// Every variant copies exactly what memcpy copies, at every alignment and
// size around the streaming thresholds, and touches nothing beside it.
TEST(FlushOpsTest, NonTemporalCopyEqualsReferenceTwin) {
  std::mt19937_64 rng(kSeed);
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  constexpr size_t kMax = 8192;
  std::vector<uint8_t> src(kMax + 128), want(kMax + 256), got(kMax + 256);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  for (FlushKind flush : SupportedFlushes()) {
    for (CopyKind copy : SupportedCopies()) {
      FlushOps ops = OpsFor(flush, copy);
      SCOPED_TRACE(testing::Message() << FlushKindName(flush) << "/" << CopyKindName(copy));
      for (int trial = 0; trial < 300; ++trial) {
        size_t n = trial < 40 ? static_cast<size_t>(trial) * 7 : rng() % kMax;
        size_t dst_off = rng() % 128, src_off = rng() % 128;
        std::fill(want.begin(), want.end(), 0xEE);
        std::fill(got.begin(), got.end(), 0xEE);
        CopyNtReference(want.data() + dst_off, src.data() + src_off, n);
        ops.copy_nt(got.data() + dst_off, src.data() + src_off, n);
        ops.drain();
        ASSERT_EQ(want, got) << "n " << n << " dst_off " << dst_off << " src_off " << src_off;
      }
    }
  }
}

TEST(FlushOpsTest, FlushingKeepsTheBytes) {
  std::mt19937_64 rng(kSeed);
  std::vector<uint8_t> buf(1 << 16);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  const std::vector<uint8_t> before = buf;
  for (FlushKind flush : SupportedFlushes()) {
    FlushOps ops = OpsFor(flush, CopyKind::kSse2);
    ops.flush_lines(buf.data() + 3, buf.size() - 7);
    ops.drain();
    EXPECT_EQ(buf, before) << FlushKindName(flush);
  }
  FlushLinesReference(buf.data(), buf.size());
  DrainReference();
  Persist(buf.data(), buf.size());
  EXPECT_EQ(buf, before);
}

}  // namespace
}  // namespace cairn::pmem
