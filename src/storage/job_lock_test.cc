// Job locks and the ownership rules of tier directories, parked slots and
// temporary files, on the real file system (a private temporary directory).
#include "storage/job_lock.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "env/process_info.h"
#include "storage/tier.h"

namespace cairn {
namespace {

class JobLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cairn-job-lock-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    base_ = pattern;
  }
  void TearDown() override { (void)PosixEnv()->DeleteRecursive(base_); }

  std::unique_ptr<Tier> MakeTier(const std::string& root, const std::string& pattern = "") {
    TierConfig config;
    config.path = pattern.empty() ? root : pattern;
    return std::make_unique<Tier>(PosixEnv(), TierKind::kSsd, root, config);
  }
  static std::string ReadAll(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void WriteText(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  std::string base_;
};

TEST_F(JobLockTest, SecondHolderIsRefusedWithTheFirstOnesHostAndPid) {
  auto tier = MakeTier(base_ + "/ssd");
  ASSERT_TRUE(tier->PrepareRoot().ok());
  auto first = LockTierDirectory(*tier, "");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_NE(*first, nullptr);
  EXPECT_EQ(ReadAll(TierLockPath(*tier)),
            fmt::format("host {} pid {}\n", HostName(), ::getpid()));

  // A second open file description contends like a second process would.
  auto second = LockTierDirectory(*tier, "");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kIo);
  const std::string& message = second.status().message();
  EXPECT_NE(message.find(fmt::format("host {} pid {}", HostName(), ::getpid())), std::string::npos)
      << message;
  EXPECT_NE(message.find(TierLockPath(*tier)), std::string::npos) << message;

  first->reset();  // released, file left behind: the next job takes it
  auto third = LockTierDirectory(*tier, "cairn delete");
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_NE(ReadAll(TierLockPath(*tier)).find("(cairn delete)"), std::string::npos);
  ASSERT_TRUE((*third)->ReleaseAndRemove().ok());
  EXPECT_FALSE(PosixEnv()->FileExists(TierLockPath(*tier)));
}

TEST_F(JobLockTest, KilledHolderLeavesNoStaleLock) {
  auto tier = MakeTier(base_ + "/ssd");
  ASSERT_TRUE(tier->PrepareRoot().ok());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = LockTierDirectory(*tier, "");
    char byte = lock.ok() && *lock ? 'y' : 'n';
    (void)!::write(ready[1], &byte, 1);
    ::pause();  // until killed
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'y');
  auto refused = LockTierDirectory(*tier, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(fmt::format("pid {}", child)), std::string::npos)
      << refused.status().ToString();
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto taken = LockTierDirectory(*tier, "");
  EXPECT_TRUE(taken.ok()) << taken.status().ToString();
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(JobLockTest, RootOpenToOthersIsRefusedNamingPathOwnerAndMode) {
  std::string root = base_ + "/shared";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0755), 0);
  Status s = MakeTier(root)->PrepareRoot();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_NE(s.message().find(root), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("0755"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(fmt::format("uid {}", ::geteuid())), std::string::npos)
      << s.ToString();
  // Not silently repaired: the mode is the user's to change.
  struct stat st;
  ASSERT_EQ(::stat(root.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST_F(JobLockTest, SymlinkedRootIsRefused) {
  std::string target = base_ + "/elsewhere";
  std::string root = base_ + "/cairn-user";
  ASSERT_EQ(::mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(target.c_str(), root.c_str()), 0);
  Status s = MakeTier(root, base_ + "/cairn-{user}")->PrepareRoot();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("symbolic link"), std::string::npos) << s.ToString();
}

TEST_F(JobLockTest, CreatedDirectoriesArePrivate) {
  std::string root = base_ + "/data/ssd/0";
  ASSERT_TRUE(MakeTier(root, "{dir}/ssd/{node}")->PrepareRoot().ok());
  for (const std::string& dir : {root, base_ + "/data/ssd", base_ + "/data"}) {
    struct stat st;
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u) << dir;
  }
}

TEST_F(JobLockTest, OwnedDirsStartBelowTheLiteralPartAndTheDataDirectory) {
  TierConfig config;
  config.path = "/dev/shm/cairn-{user}";
  EXPECT_EQ(Tier(PosixEnv(), TierKind::kMemory, "/dev/shm/cairn-bob", config).OwnedDirs(),
            std::vector<std::string>{"/dev/shm/cairn-bob"});
  config.path = "{dir}/ssd/{node}";
  EXPECT_EQ(Tier(PosixEnv(), TierKind::kSsd, "/home/bob/run/ssd/3", config).OwnedDirs(),
            (std::vector<std::string>{"/home/bob/run/ssd/3", "/home/bob/run/ssd"}));
  config.path = "/scratch/bob/ckpt/";
  EXPECT_EQ(Tier(PosixEnv(), TierKind::kPfs, "/scratch/bob/ckpt/", config).OwnedDirs(),
            std::vector<std::string>{"/scratch/bob/ckpt"});
  config.path = "/tmp/{user}/{dirkey}/mem";
  EXPECT_EQ(Tier(PosixEnv(), TierKind::kMemory, "/tmp/bob/1234abcd/mem", config).OwnedDirs(),
            (std::vector<std::string>{"/tmp/bob/1234abcd/mem", "/tmp/bob/1234abcd", "/tmp/bob"}));
}

// A parked slot that Cairn did not make (a symlink to a victim file, or a
// file open to others) is never written into.
TEST_F(JobLockTest, PlantedSlotsAreNotReused) {
  auto tier = MakeTier(base_ + "/ssd");
  ASSERT_TRUE(tier->PrepareRoot().ok());
  tier->EnableSlots("r0-", 1);
  std::string victim = base_ + "/victim";
  WriteText(victim, "precious");
  std::string loose = base_ + "/ssd/.free/r0-slot7.1";
  ASSERT_TRUE(PosixEnv()->CreateDirs(tier->FreeSlotDir()).ok());
  ASSERT_EQ(::symlink(victim.c_str(), (tier->FreeSlotDir() + "/r0-slot7.0").c_str()), 0);
  WriteText(loose, std::string(2 << 20, 'z'));
  ASSERT_EQ(::chmod(loose.c_str(), 0644), 0);

  const std::string bytes(2 << 20, 'a');
  ASSERT_TRUE(tier->PutFile("heat", 1, "r0-part", bytes).ok());
  EXPECT_EQ(ReadAll(victim), "precious");
  EXPECT_EQ(*tier->GetFile("heat", 1, "r0-part"), bytes);
  struct stat st;
  ASSERT_EQ(::lstat((tier->FreeSlotDir() + "/r0-slot7.0").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // left where it was, unused
  EXPECT_EQ(ReadAll(loose), std::string(2 << 20, 'z'));
}

// A symlink where a temporary or final file goes is replaced, never
// written through; opening one directly fails.
TEST_F(JobLockTest, FilesAreNeverWrittenThroughSymlinks) {
  auto tier = MakeTier(base_ + "/ssd");
  ASSERT_TRUE(tier->PrepareRoot().ok());
  std::string victim = base_ + "/victim";
  WriteText(victim, "precious");
  std::string dir = tier->VersionDir("heat", 1);
  ASSERT_TRUE(PosixEnv()->CreateDirs(dir).ok());
  std::string final_path = tier->FilePath("heat", 1, "manifest");
  std::string tmp = final_path + ".tmp." + std::to_string(::getpid());
  ASSERT_EQ(::symlink(victim.c_str(), tmp.c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), final_path.c_str()), 0);

  ASSERT_TRUE(tier->PutFile("heat", 1, "manifest", "new").ok());
  EXPECT_EQ(ReadAll(victim), "precious");
  EXPECT_EQ(*tier->GetFile("heat", 1, "manifest"), "new");

  std::string link = base_ + "/link";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  auto writable = PosixEnv()->NewWritableFile(link, WriteOptions{});
  ASSERT_FALSE(writable.ok());
  EXPECT_NE(writable.status().message().find("symbolic link"), std::string::npos);
  EXPECT_FALSE(PosixEnv()->NewReadableFile(link).ok());
  EXPECT_FALSE(PosixEnv()->MapFile(link, 4096, true).ok());
  EXPECT_FALSE(PosixEnv()->AppendToFile(link, "x", 1).ok());
  EXPECT_EQ(ReadAll(victim), "precious");
}

}  // namespace
}  // namespace cairn
