#include "env/fault_env.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace cairn {
namespace {

class FaultEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = NewMemEnv();
    ASSERT_TRUE(base_->CreateDirs("/d").ok());
    env_ = std::make_unique<FaultEnv>(base_.get());
  }
  std::unique_ptr<Env> base_;
  std::unique_ptr<FaultEnv> env_;
};

TEST_F(FaultEnvTest, FailsNthOperationWithChosenCode) {
  env_->FailAt(3, Code::kNoSpace);
  auto file = env_->NewWritableFile("/d/f", WriteOptions{});  // op 1
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE((*file)->Append("a", 1).ok());                  // op 2
  Status s = (*file)->Append("b", 1);                         // op 3
  EXPECT_EQ(s.code(), Code::kNoSpace);
  EXPECT_NE(s.message().find("/d/f"), std::string::npos);
  EXPECT_EQ((*file)->Sync().code(), Code::kNoSpace);          // op 4: still failing
  env_->ClearFaults();
  EXPECT_TRUE((*file)->Sync().ok());
}

TEST_F(FaultEnvTest, FailOnceFailsOnlyThatCall) {
  env_->FailAt(2, Code::kIo, /*once=*/true);
  auto file = env_->NewWritableFile("/d/f", WriteOptions{});
  EXPECT_EQ((*file)->Append("a", 1).code(), Code::kIo);
  EXPECT_TRUE((*file)->Append("a", 1).ok());
}

TEST_F(FaultEnvTest, PowerLossDropsUnsyncedBytes) {
  auto file = env_->NewWritableFile("/d/f", WriteOptions{});
  ASSERT_TRUE((*file)->Append("synced", 6).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Append("-lost", 5).ok());
  ASSERT_TRUE(env_->SyncDir("/d").ok());
  ASSERT_TRUE(env_->DropUnsyncedData().ok());
  EXPECT_EQ(*base_->ReadFileToString("/d/f"), "synced");
}

TEST_F(FaultEnvTest, PowerLossDropsNamesInUnsyncedDirectory) {
  ASSERT_TRUE(env_->WriteFileAtomic("/d/durable", "x", 1, /*sync=*/true).ok());
  ASSERT_TRUE(env_->WriteFileAtomic("/d/volatile", "y", 1, /*sync=*/false).ok());
  ASSERT_TRUE(env_->DropUnsyncedData().ok());
  EXPECT_TRUE(base_->FileExists("/d/durable"));
  EXPECT_FALSE(base_->FileExists("/d/volatile"));
}

TEST_F(FaultEnvTest, KillAtTerminatesTheProcess) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    env_->KillAt(2);
    auto file = env_->NewWritableFile("/d/f", WriteOptions{});
    (void)(*file)->Append("a", 1);  // killed here
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

}  // namespace
}  // namespace cairn
