#include "storage/flusher.h"

#include <atomic>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(FlusherTest, RunsJobsInOrderAndWaits) {
  Flusher flusher;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) {
    flusher.Add([&order, i] {
      order.push_back(i);
      return Status::Ok();
    });
  }
  ASSERT_TRUE(flusher.Wait().ok());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(flusher.pending(), 0u);
}

TEST(FlusherTest, WaitReportsFirstErrorOnce) {
  Flusher flusher;
  std::atomic<int> ran{0};
  flusher.Add([&] { ++ran; return Error(Code::kIo, "first"); });
  flusher.Add([&] { ++ran; return Error(Code::kIo, "second"); });
  flusher.Add([&] { ++ran; return Status::Ok(); });
  Status s = flusher.Wait();
  EXPECT_EQ(s.message(), "first");
  EXPECT_EQ(ran, 3);
  EXPECT_TRUE(flusher.Wait().ok());
}

TEST(FlusherTest, ShutdownRunsQueuedJobs) {
  std::atomic<int> ran{0};
  {
    Flusher flusher;
    for (int i = 0; i < 10; ++i) flusher.Add([&] { ++ran; return Status::Ok(); });
    flusher.Shutdown();
    flusher.Shutdown();
  }
  EXPECT_EQ(ran, 10);
}

}  // namespace
}  // namespace cairn
