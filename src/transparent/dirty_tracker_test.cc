// Each tracking method the kernel offers reports exactly the pages written
// since the last collection, including writes from another thread and by
// the kernel (read(2) into the range, uffd-wp and soft-dirty only).
#include "transparent/dirty_tracker.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

namespace cairn {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kPages = 1024;

class DirtyTrackerTest : public ::testing::TestWithParam<DirtyMethod> {
 protected:
  void SetUp() override {
    if (!DirtyTracker::Available(GetParam())) {
      GTEST_SKIP() << DirtyMethodName(GetParam()) << " tracking: not offered by this kernel";
    }
    base_ = static_cast<char*>(mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(base_, MAP_FAILED);
    auto t = DirtyTracker::Create(GetParam(), base_, kPages * kPage);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    tracker_ = std::move(t).value();
  }
  void TearDown() override {
    tracker_.reset();
    if (base_ != nullptr) munmap(base_, kPages * kPage);
  }
  std::set<uint64_t> Collect() {
    DirtyPageSet set;
    Status s = tracker_->Collect(&set);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::set<uint64_t> pages;
    for (const auto& run : set.runs) {
      for (uint64_t p = run.first; p < run.first + run.count; ++p) pages.insert(p);
    }
    EXPECT_EQ(set.pages(), pages.size());
    return pages;
  }

  char* base_ = nullptr;
  std::unique_ptr<DirtyTracker> tracker_;
};

TEST_P(DirtyTrackerTest, ReportsExactlyTheWrittenPagesEachRound) {
  EXPECT_EQ(tracker_->method(), GetParam());
  const unsigned seed = 17;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int round = 0; round < 4; ++round) {
    std::set<uint64_t> written;
    for (int i = 0; i < 100; ++i) {
      uint64_t page = rng() % kPages;
      base_[page * kPage + rng() % kPage] = static_cast<char>(round + 1);
      written.insert(page);
    }
    if (GetParam() == DirtyMethod::kNone) {
      EXPECT_EQ(Collect().size(), kPages) << "round " << round;
    } else {
      EXPECT_EQ(Collect(), written) << "round " << round << ", seed " << seed;
    }
  }
}

TEST_P(DirtyTrackerTest, SeesWritesFromAnotherThread) {
  if (GetParam() == DirtyMethod::kNone) GTEST_SKIP() << "none reports every page";
  Collect();
  std::thread([&] { base_[7 * kPage] = 1; base_[900 * kPage + 5] = 2; }).join();
  EXPECT_EQ(Collect(), (std::set<uint64_t>{7, 900}));
  EXPECT_TRUE(Collect().empty());
}

TEST_P(DirtyTrackerTest, KernelWritesAreTrackedExceptUnderMprotect) {
  if (GetParam() == DirtyMethod::kNone) GTEST_SKIP() << "none reports every page";
  Collect();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "abc", 3), 3);
  ssize_t got = read(fds[0], base_ + 33 * kPage, 3);
  close(fds[0]);
  close(fds[1]);
  if (GetParam() == DirtyMethod::kMprotect) {
    // The documented limit: the kernel does not fault, it fails the call.
    EXPECT_EQ(got, -1);
    EXPECT_TRUE(Collect().empty());
  } else {
    EXPECT_EQ(got, 3);
    EXPECT_EQ(Collect(), (std::set<uint64_t>{33}));
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, DirtyTrackerTest,
                         ::testing::Values(DirtyMethod::kUffdWp, DirtyMethod::kSoftDirty,
                                           DirtyMethod::kMprotect, DirtyMethod::kNone),
                         [](const auto& info) {
                           std::string name = DirtyMethodName(info.param);
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(DirtyTracker, AutoPicksTheBestOfferedMethod) {
  void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  auto t = DirtyTracker::Create(DirtyMethod::kAuto, p, kPage);
  ASSERT_TRUE(t.ok());
  DirtyMethod expected = DirtyTracker::Available(DirtyMethod::kUffdWp)      ? DirtyMethod::kUffdWp
                         : DirtyTracker::Available(DirtyMethod::kSoftDirty) ? DirtyMethod::kSoftDirty
                                                                            : DirtyMethod::kMprotect;
  EXPECT_EQ((*t)->method(), expected);
  std::printf("auto: %s\n", DirtyMethodName((*t)->method()));
  t->reset();
  munmap(p, kPage);
}

TEST(DirtyTracker, RefusesARangeThatIsNotWholePages) {
  auto t = DirtyTracker::Create(DirtyMethod::kNone, reinterpret_cast<void*>(4097), kPage);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("whole pages"), std::string::npos);
}

TEST(DirtyPageSet, ContainsFindsPagesInRuns) {
  DirtyPageSet set;
  for (uint64_t p : {1, 2, 3, 10, 12}) set.Add(p);
  EXPECT_EQ(set.runs.size(), 3u);
  EXPECT_EQ(set.pages(), 5u);
  EXPECT_TRUE(set.Contains(2));
  EXPECT_TRUE(set.Contains(12));
  EXPECT_FALSE(set.Contains(0));
  EXPECT_FALSE(set.Contains(11));
  EXPECT_FALSE(set.Contains(13));
}

TEST(DirtyPageSet, MergeIsTheUnionOfOverlappingAndAdjacentRuns) {
  DirtyPageSet a;
  for (uint64_t p : {1, 2, 3, 10, 20}) a.Add(p);
  DirtyPageSet b;
  for (uint64_t p : {0, 4, 9, 11, 30}) b.Add(p);
  a.Merge(b);
  ASSERT_EQ(a.runs.size(), 4u);  // 0-4, 9-11, 20, 30
  EXPECT_EQ(a.runs[0].first, 0u);
  EXPECT_EQ(a.runs[0].count, 5u);
  EXPECT_EQ(a.runs[1].first, 9u);
  EXPECT_EQ(a.runs[1].count, 3u);
  EXPECT_EQ(a.pages(), 10u);
  EXPECT_TRUE(a.Contains(30));
}

}  // namespace
}  // namespace cairn
