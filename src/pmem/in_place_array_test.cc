#include "pmem/in_place_array.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <vector>

namespace cairn::pmem {
namespace {

constexpr uint64_t kCount = 1000;

class InPlaceArrayTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/dev/shm/cairn-ipv-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/u.ipv";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<InPlaceArray> OpenArray(UpdatePattern pattern, AsyncFlusher* flusher = nullptr) {
    auto a = InPlaceArray::Open(path_, kCount, sizeof(double), {pattern, flusher});
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? std::move(a).value() : nullptr;
  }

  // One iteration of u[i] = u[i] + i + it through the accessors: the
  // updating loop reads the version before the update, and reads after it
  // see the update (the post-update version switch).
  static void Iterate(InPlaceArray& a, int64_t it) {
    auto* w = static_cast<double*>(a.Working());
    const auto* before = static_cast<const double*>(a.Read());
    for (uint64_t i = 0; i < kCount; ++i) w[i] = before[i] + static_cast<double>(i + it);
    a.MarkUpdated();
    EXPECT_EQ(a.Read(), a.Working());
    EXPECT_EQ(static_cast<const double*>(a.Read())[kCount - 1], w[kCount - 1]);
  }
  static std::vector<double> Expected(int64_t iterations) {
    std::vector<double> u(kCount, 0.0);
    for (int64_t it = 1; it <= iterations; ++it) {
      for (uint64_t i = 0; i < kCount; ++i) u[i] += static_cast<double>(i + it);
    }
    return u;
  }
  static std::vector<double> Contents(const InPlaceArray& a) {
    const auto* c = static_cast<const double*>(a.Consistent());
    return std::vector<double>(c, c + kCount);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(InPlaceArrayTest, ReopensAtTheLastCommittedIteration) {
  for (UpdatePattern pattern : {UpdatePattern::kUniform, UpdatePattern::kNonUniform}) {
    std::filesystem::remove(path_);
    {
      auto a = OpenArray(pattern);
      ASSERT_TRUE(a);
      EXPECT_EQ(a->iteration(), kNoIteration);
      std::memset(a->Working(), 0, kCount * sizeof(double));
      ASSERT_TRUE(a->Commit().ok());  // iteration 0: the initial state
      for (int64_t it = 1; it <= 7; ++it) {
        Iterate(*a, it);
        ASSERT_TRUE(a->Commit().ok());
      }
      EXPECT_EQ(a->iteration(), 7);
      Iterate(*a, 8);  // not committed: lost at the "crash" below
    }
    auto a = OpenArray(pattern);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->iteration(), 7);
    EXPECT_EQ(Contents(*a), Expected(7));
    EXPECT_EQ(std::vector<double>(static_cast<const double*>(a->Read()),
                                  static_cast<const double*>(a->Read()) + kCount),
              Expected(7));
  }
}

TEST_F(InPlaceArrayTest, AsyncFlushingCommitsTheSame) {
  auto flusher = AsyncFlusher::Start(PosixEnv(), {});
  ASSERT_TRUE(flusher.ok());
  {
    auto a = OpenArray(UpdatePattern::kUniform, flusher->get());
    std::memset(a->Working(), 0, kCount * sizeof(double));
    ASSERT_TRUE(a->Commit().ok());
    for (int64_t it = 1; it <= 5; ++it) {
      Iterate(*a, it);
      a->StartFlush();
      ASSERT_TRUE(a->Commit().ok());
    }
  }
  EXPECT_GE((*flusher)->stats().ranges, 5u);
  auto a = OpenArray(UpdatePattern::kUniform);
  EXPECT_EQ(a->iteration(), 5);
  EXPECT_EQ(Contents(*a), Expected(5));
}

// Proactive flushing: reported ranges (out of order, with gaps) go to the
// helper thread, adjacent ones as one batch; the last batch and the gaps
// are flushed by the commit; the array commits the same bytes either way.
TEST_F(InPlaceArrayTest, DoneWritingHandsReportedRangesToTheHelper) {
  auto flusher = AsyncFlusher::Start(PosixEnv(), {});
  ASSERT_TRUE(flusher.ok());
  {
    auto a = OpenArray(UpdatePattern::kUniform, flusher->get());
    std::memset(a->Working(), 0, kCount * sizeof(double));
    ASSERT_TRUE(a->Commit().ok());
    Iterate(*a, 1);
    ASSERT_TRUE(a->DoneWriting(0, 100).ok());
    ASSERT_TRUE(a->DoneWriting(100, 100).ok());  // adjacent: the same batch
    ASSERT_TRUE(a->DoneWriting(500, 100).ok());  // a gap before it
    ASSERT_TRUE(a->DoneWriting(300, 100).ok());  // out of order
    // The helper got [0, 200) and [500, 600); the commit flushes the last
    // batch [300, 400) and the gaps [200, 300), [400, 500), [600, 1000).
    ASSERT_TRUE(a->Commit().ok());
    const AsyncFlushStats stats = (*flusher)->stats();
    EXPECT_EQ(stats.ranges, 2u);
    EXPECT_EQ(stats.bytes, 300 * sizeof(double));
    Status outside = a->DoneWriting(kCount - 1, 2);
    EXPECT_EQ(outside.code(), Code::kInvalidArgument);
    EXPECT_NE(outside.message().find(path_), std::string::npos) << outside.ToString();
  }
  auto a = OpenArray(UpdatePattern::kUniform);
  EXPECT_EQ(a->iteration(), 1);
  EXPECT_EQ(Contents(*a), Expected(1));
}

// Copy mode with a flusher: reported ranges are streamed into the next
// consistent copy by the helper (proactive copying), the rest by the
// commit; reopening yields exactly the committed iterations.
TEST_F(InPlaceArrayTest, CopyModeCopiesReportedRangesOnTheHelper) {
  auto flusher = AsyncFlusher::Start(PosixEnv(), {});
  ASSERT_TRUE(flusher.ok());
  {
    auto a = OpenArray(UpdatePattern::kNonUniform, flusher->get());
    std::memset(a->Working(), 0, kCount * sizeof(double));
    ASSERT_TRUE(a->Commit().ok());
    for (int64_t it = 1; it <= 3; ++it) {
      Iterate(*a, it);
      ASSERT_TRUE(a->DoneWriting(0, 400).ok());
      a->StartFlush();  // the rest, [400, 1000), at once
      ASSERT_TRUE(a->Commit().ok());
    }
  }
  const AsyncFlushStats stats = (*flusher)->stats();
  EXPECT_EQ(stats.copies, 6u);  // [0, 400) and [400, 1000) per iteration
  EXPECT_EQ(stats.bytes, 3 * kCount * sizeof(double));
  auto a = OpenArray(UpdatePattern::kNonUniform);
  EXPECT_EQ(a->iteration(), 3);
  EXPECT_EQ(Contents(*a), Expected(3));
}

TEST_F(InPlaceArrayTest, AutoChoosesInPlaceForUniformAndCopyForNonUniform) {
  {
    auto a = OpenArray(UpdatePattern::kAuto);
    EXPECT_EQ(a->mode(), PersistMode::kProfiling);
    std::memset(a->Working(), 0, kCount * sizeof(double));
    ASSERT_TRUE(a->Commit().ok());
    Iterate(*a, 1);
    ASSERT_TRUE(a->Commit().ok());
    EXPECT_EQ(a->mode(), PersistMode::kInPlace) << a->mode_reason();
    Iterate(*a, 2);
    ASSERT_TRUE(a->Commit().ok());
    EXPECT_EQ(Contents(*a), Expected(2));
  }
  std::filesystem::remove(path_);
  auto a = OpenArray(UpdatePattern::kAuto);
  std::memset(a->Working(), 0, kCount * sizeof(double));
  ASSERT_TRUE(a->Commit().ok());
  // Boundaries fixed (the paper's Fig. 10): elements 0 and N-1 never written.
  for (int64_t it = 1; it <= 3; ++it) {
    auto* w = static_cast<double*>(a->Working());
    for (uint64_t i = 1; i + 1 < kCount; ++i) w[i] += 1.0;
    ASSERT_TRUE(a->Commit().ok());
  }
  EXPECT_EQ(a->mode(), PersistMode::kCopy);
  EXPECT_NE(a->mode_reason().find("2 of 1000 elements unchanged"), std::string::npos)
      << a->mode_reason();
  a.reset();
  a = OpenArray(UpdatePattern::kNonUniform);
  EXPECT_EQ(a->iteration(), 3);
  auto c = Contents(*a);
  EXPECT_EQ(c[0], 0.0);
  EXPECT_EQ(c[1], 3.0);
  EXPECT_EQ(c[kCount - 1], 0.0);
}

TEST_F(InPlaceArrayTest, TornRecordFallsBackToThePreviousIteration) {
  {
    auto a = OpenArray(UpdatePattern::kUniform);
    std::memset(a->Working(), 0, kCount * sizeof(double));
    ASSERT_TRUE(a->Commit().ok());
    for (int64_t it = 1; it <= 4; ++it) {
      Iterate(*a, it);
      ASSERT_TRUE(a->Commit().ok());
    }
  }
  {
    // Iteration 4's record lives in slot 4 % 2 = 0, at byte 64: tear it.
    FILE* f = std::fopen(path_.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, 64 + 9, SEEK_SET);
    std::fputc(0x7F, f);
    std::fclose(f);
  }
  auto a = OpenArray(UpdatePattern::kUniform);
  EXPECT_EQ(a->iteration(), 3);
  EXPECT_EQ(Contents(*a), Expected(3));
}

TEST_F(InPlaceArrayTest, ShapeMismatchAndCorruptHeaderNameTheFile) {
  { ASSERT_TRUE(OpenArray(UpdatePattern::kUniform)); }
  auto wrong = InPlaceArray::Open(path_, kCount + 1, sizeof(double), {});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kMismatch);
  EXPECT_NE(wrong.status().message().find(path_), std::string::npos);
  EXPECT_NE(wrong.status().message().find("1000 elements of 8 bytes"), std::string::npos);
  {
    FILE* f = std::fopen(path_.c_str(), "r+b");
    std::fseek(f, 20, SEEK_SET);
    std::fputc(0x01, f);
    std::fclose(f);
  }
  auto corrupt = InPlaceArray::Open(path_, kCount, sizeof(double), {});
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.status().code(), Code::kCorrupt);
  EXPECT_NE(corrupt.status().message().find(path_), std::string::npos);
  auto bad = InPlaceArray::Open(dir_ + "/x", 0, 8, {});
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::pmem
