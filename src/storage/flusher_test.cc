#include "storage/flusher.h"

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "env/env.h"

namespace cairn {
namespace {

std::unique_ptr<Flusher> StartFlusher() {
  auto flusher = Flusher::Start(PosixEnv(), {});
  EXPECT_TRUE(flusher.ok()) << flusher.status().ToString();
  return std::move(flusher).value();
}

// A job that appends `name` to *ran, and a `dropped` that appends it to
// *dropped.
Flusher::Job Recording(std::vector<std::string>* ran, std::string name) {
  return [ran, name] {
    ran->push_back(name);
    return Status::Ok();
  };
}
Flusher::Dropped RecordingDrop(std::vector<std::string>* dropped, std::string name) {
  return [dropped, name] { dropped->push_back(name); };
}

// Adds job "a0" of key "a" (queued limit `limit`), which records itself in
// *ran once `release` is fulfilled, and returns once it has started: from
// then on nothing may supersede it.
void AddStartedJob(Flusher& flusher, std::shared_future<void> release,
                   std::vector<std::string>* ran, std::vector<std::string>* dropped,
                   size_t limit) {
  auto running = std::make_shared<std::promise<void>>();
  std::future<void> started = running->get_future();
  flusher.AddSuperseding("a", [running, release, ran] {
    running->set_value();
    release.wait();
    ran->push_back("a0");
    return Status::Ok();
  }, RecordingDrop(dropped, "a0"), limit);
  started.wait();
}

TEST(FlusherTest, RunsJobsInOrderAndWaits) {
  auto started = StartFlusher();
  Flusher& flusher = *started;
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
  auto started = StartFlusher();
  Flusher& flusher = *started;
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
    auto started = StartFlusher();
  Flusher& flusher = *started;
    for (int i = 0; i < 10; ++i) flusher.Add([&] { ++ran; return Status::Ok(); });
    flusher.Shutdown();
    flusher.Shutdown();
  }
  EXPECT_EQ(ran, 10);
}

// A keyed job supersedes a queued job of the same key, never a running one
// and never one of another key; the superseded job's `dropped` runs.
TEST(FlusherTest, ANewerJobSupersedesAQueuedOneOfTheSameKey) {
  auto started = StartFlusher();
  Flusher& flusher = *started;
  std::promise<void> release;
  std::vector<std::string> ran, dropped;
  AddStartedJob(flusher, release.get_future().share(), &ran, &dropped, 1);
  flusher.AddSuperseding("a", Recording(&ran, "a1"), RecordingDrop(&dropped, "a1"));
  flusher.AddSuperseding("b", Recording(&ran, "b1"), RecordingDrop(&dropped, "b1"));
  flusher.AddSuperseding("a", Recording(&ran, "a2"), RecordingDrop(&dropped, "a2"));
  flusher.Add(Recording(&ran, "plain"));
  EXPECT_EQ(dropped, (std::vector<std::string>{"a1"}));  // before AddSuperseding returned
  release.set_value();
  ASSERT_TRUE(flusher.Wait().ok());
  EXPECT_EQ(ran, (std::vector<std::string>{"a0", "b1", "a2", "plain"}));
  EXPECT_EQ(dropped, (std::vector<std::string>{"a1"}));
}

// With a limit of 2, a key keeps its two newest queued jobs: the target
// tier keeps two versions, so an older one would be deleted on arrival.
TEST(FlusherTest, AKeyKeepsAsManyQueuedJobsAsItsLimit) {
  auto started = StartFlusher();
  Flusher& flusher = *started;
  std::promise<void> release;
  std::vector<std::string> ran, dropped;
  AddStartedJob(flusher, release.get_future().share(), &ran, &dropped, 2);
  for (const char* name : {"a1", "a2", "a3", "a4"}) {
    flusher.AddSuperseding("a", Recording(&ran, name), RecordingDrop(&dropped, name), 2);
  }
  EXPECT_EQ(dropped, (std::vector<std::string>{"a1", "a2"}));
  release.set_value();
  ASSERT_TRUE(flusher.Wait().ok());
  EXPECT_EQ(ran, (std::vector<std::string>{"a0", "a3", "a4"}));
}

// A checkpoint call holds the jobs it adds until it returns. Held jobs
// cannot start, so a newer job of the same key always supersedes them; a
// job added before the hold runs meanwhile (else the test hangs); Wait
// releases the held jobs (else it hangs).
TEST(FlusherTest, HeldJobsStartOnlyWhenReleasedOrWaitedFor) {
  auto flusher = StartFlusher();
  std::vector<std::string> ran, dropped;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  AddStartedJob(*flusher, released, &ran, &dropped, 1);  // "a0", running
  flusher->HoldNewJobs();
  flusher->AddSuperseding("b", Recording(&ran, "b1"), RecordingDrop(&dropped, "b1"), 1);
  release.set_value();  // a0 finishes while b1 is held
  flusher->AddSuperseding("b", Recording(&ran, "b2"), RecordingDrop(&dropped, "b2"), 1);
  EXPECT_EQ(dropped, std::vector<std::string>{"b1"});
  flusher->ReleaseHeld();
  ASSERT_TRUE(flusher->Wait().ok());
  EXPECT_EQ(ran, (std::vector<std::string>{"a0", "b2"}));

  flusher->HoldNewJobs();
  flusher->Add(Recording(&ran, "c"));
  ASSERT_TRUE(flusher->Wait().ok());  // without ReleaseHeld
  EXPECT_EQ(ran.back(), "c");
  flusher->ReleaseHeld();
}

// Jobs run on a thread the Env started, so an Env that cannot start one
// makes Start fail instead of throwing.
class NoThreadEnv final : public EnvWrapper {
 public:
  NoThreadEnv() : EnvWrapper(PosixEnv()) {}
  Result<std::unique_ptr<Thread>> StartThread(const ThreadOptions& options,
                                              std::function<void()>) override {
    ++starts;
    asked = options;
    return Error(Code::kInternal, "cannot start a thread: refused by the test");
  }
  int starts = 0;
  ThreadOptions asked;
};

TEST(FlusherTest, StartsItsThreadThroughTheEnv) {
  NoThreadEnv env;
  auto flusher = Flusher::Start(&env, ThreadOptions{.name = "cairn-flush", .nice = 7});
  EXPECT_EQ(env.starts, 1);
  EXPECT_EQ(env.asked.name, "cairn-flush");
  EXPECT_EQ(env.asked.nice, 7);
  ASSERT_FALSE(flusher.ok());
  EXPECT_EQ(flusher.status().code(), Code::kInternal);
  EXPECT_NE(flusher.status().message().find("refused by the test"), std::string::npos);
}

}  // namespace
}  // namespace cairn
