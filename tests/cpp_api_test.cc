// The C++ API over the same engine: typed regions, Status, the session's
// lifetime, a restart round trip, the checkpoint report, durable
// checkpoints, cairn_should_checkpoint, and deleting a checkpoint.
#define CAIRN_NO_MPI
#include "cairn/cairn.hpp"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

namespace {

TEST(CppApiTest, RoundTripAndErrors) {
  // Only the public header here: the library's internals are not visible.
  char tmpl[] = "/tmp/cairn-cpp-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::string config = dir + "/c.toml";
  FILE* f = std::fopen(config.c_str(), "w");
  // keep_at_finalize: the restart below reads the memory copy the first
  // session leaves.
  std::fprintf(f,
               "[general]\ndir = \"%s\"\nlog_level = \"off\"\n[tiers.memory]\npath = "
               "\"%s/shm/{node}\"\nkeep_at_finalize = true\n",
               dir.c_str(), dir.c_str());
  std::fclose(f);
  std::vector<float> field(4096);
  for (size_t i = 0; i < field.size(); ++i) field[i] = static_cast<float>(i) * 0.5f;
  {
    cairn::Status status;
    auto session = cairn::Session::InitSingle(config, &status);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(session->Protect(0, field).ok());
    cairn::Status bad = session->Checkpoint("../escape", 1);
    EXPECT_EQ(bad.code(), CAIRN_E_INVALID_ARGUMENT);
    EXPECT_NE(bad.message().find("../escape"), std::string::npos);
    EXPECT_TRUE(session->Checkpoint("field", 1).ok());
  }  // the destructor finalizes
  std::vector<float> restored(4096, -1.0f);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, restored).ok());
  EXPECT_EQ(session->RestartTest("field"), 1);
  int version = -1;
  ASSERT_TRUE(session->Restart("field", 1, &version).ok());
  EXPECT_EQ(version, 1);
  EXPECT_EQ(restored, field);
  cairn_restart_info info;  // LastRestart sets its size
  ASSERT_TRUE(session->LastRestart(&info).ok());
  EXPECT_EQ(info.size, sizeof info);
  EXPECT_EQ(info.version, 1);
  EXPECT_EQ(info.newest, 1);
  EXPECT_EQ(info.rollback_versions, 0);
  EXPECT_STREQ(info.tier, "memory");
  EXPECT_GE(info.bytes, field.size() * sizeof(float));  // the part file, header included
  EXPECT_TRUE(session->Finalize().ok());
  std::filesystem::remove_all(dir);
}

// A fresh data directory with a config file holding `extra` TOML.
struct Scratch {
  explicit Scratch(const std::string& extra) {
    char tmpl[] = "/tmp/cairn-cpp-XXXXXX";
    dir = ::mkdtemp(tmpl);
    config = dir + "/c.toml";
    FILE* f = std::fopen(config.c_str(), "w");
    std::fprintf(f, "[general]\ndir = \"%s\"\nlog_level = \"off\"\n%s", dir.c_str(),
                 extra.c_str());
    std::fclose(f);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  std::string dir, config;
};

TEST(CppApiTest, ReportSaysWhereEachCheckpointWent) {
  Scratch scratch("[tiers.memory]\npath = \"" + std::string("{dir}") +
                  "/shm/{node}\"\n[placement]\npolicy = \"ratio\"\nratio = 3\n");
  std::vector<double> x(1000, 1.5);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(scratch.config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  cairn_checkpoint_info info;
  EXPECT_EQ(session->LastCheckpoint(&info).code(), CAIRN_E_NOT_FOUND);
  ASSERT_TRUE(session->Protect(0, x).ok());
  const char* expected[] = {"memory", "memory", "ssd", "memory"};
  for (int v = 1; v <= 4; ++v) {
    ASSERT_TRUE(session->Checkpoint("x", v).ok());
    ASSERT_TRUE(session->LastCheckpoint(&info).ok());
    EXPECT_EQ(info.version, v);
    EXPECT_EQ(info.number, v);
    EXPECT_EQ(info.skipped, 0);
    EXPECT_STREQ(info.tier, expected[v - 1]) << "call " << v;
    EXPECT_STREQ(info.rule, "ratio");
    EXPECT_GE(info.bytes, x.size() * sizeof(double));
  }
  // A durable checkpoint goes to the SSD whatever the ratio says.
  ASSERT_TRUE(session->Checkpoint("x", 5, /*durable=*/true).ok());
  ASSERT_TRUE(session->LastCheckpoint(&info).ok());
  EXPECT_STREQ(info.tier, "ssd");
  EXPECT_EQ(info.forced, 1);
  EXPECT_STREQ(info.rule, "forced-flag");
  EXPECT_EQ(cairn_checkpoint_flags("x", 6, 0x8u), CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cairn_error_message(CAIRN_E_INVALID_ARGUMENT)).find("flag"),
            std::string::npos);
  // interval is off by default: asking is an error naming the key.
  bool due = false;
  cairn::Status off = session->ShouldCheckpoint(&due);
  EXPECT_EQ(off.code(), CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(off.message().find("placement.interval"), std::string::npos);
  EXPECT_TRUE(session->Finalize().ok());
}

TEST(CppApiTest, ShouldCheckpointFollowsTheInterval) {
  Scratch fixed("[tiers.memory]\npath = \"{dir}/shm/{node}\"\n[placement]\ninterval = 3600\n");
  std::vector<int> x(10, 7);
  cairn::Status status;
  {
    auto session = cairn::Session::InitSingle(fixed.config, &status);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(session->Protect(0, x).ok());
    bool due = true;
    ASSERT_TRUE(session->ShouldCheckpoint(&due).ok());
    EXPECT_FALSE(due) << "an hour has not passed since init";
  }
  Scratch automatic("[tiers.memory]\npath = \"{dir}/shm/{node}\"\n[placement]\ninterval = "
                    "\"auto\"\n[model]\nmtbf = 86400\n");
  auto session = cairn::Session::InitSingle(automatic.config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, x).ok());
  bool due = false;
  ASSERT_TRUE(session->ShouldCheckpoint(&due).ok());
  EXPECT_TRUE(due) << "nothing measured yet: the first checkpoint is the measurement";
  ASSERT_TRUE(session->Checkpoint("x", 1).ok());
  // A checkpoint of 40 bytes takes well under a second; the optimum for a
  // one-day MTBF is minutes at least (Young: sqrt(2 T_C MTBF)).
  ASSERT_TRUE(session->ShouldCheckpoint(&due).ok());
  EXPECT_FALSE(due);
  EXPECT_TRUE(session->Finalize().ok());
}

// Directories named `name` anywhere under root (a tier's <name>/ level).
int DirsNamed(const std::string& root, const std::string& name) {
  int found = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    found += entry.is_directory() && entry.path().filename() == name;
  }
  return found;
}

TEST(CppApiTest, DeleteRemovesOneNameFromEveryTier) {
  Scratch scratch("[tiers.memory]\npath = \"{dir}/shm/{node}\"\n");
  std::vector<int> a(3000, 1), b(3000, 2);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(scratch.config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, a).ok());
  ASSERT_TRUE(session->Protect(1, b).ok());
  for (int v = 1; v <= 3; ++v) ASSERT_TRUE(session->Checkpoint("a", v).ok());
  ASSERT_TRUE(session->Checkpoint("b", 7).ok());
  ASSERT_TRUE(session->Wait().ok());
  EXPECT_EQ(DirsNamed(scratch.dir, "a"), 3) << "memory, ssd and pfs hold 'a'";

  ASSERT_TRUE(session->Delete("a").ok());
  EXPECT_EQ(session->RestartTest("a"), -1);
  EXPECT_TRUE(cairn::LastError().ok()) << "none left is not an error";
  EXPECT_EQ(DirsNamed(scratch.dir, "a"), 0);
  EXPECT_TRUE(session->Delete("a").ok()) << "deleting is idempotent";
  cairn::Status bad = session->Delete("a/b");
  EXPECT_EQ(bad.code(), CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(bad.message().find("a/b"), std::string::npos);

  // The other name survives, and checkpoints of the deleted one start again.
  std::fill(b.begin(), b.end(), 0);
  EXPECT_EQ(session->RestartTest("b"), 7);
  int restored = -1;
  ASSERT_TRUE(session->Restart("b", 7, &restored).ok());
  EXPECT_EQ(b, std::vector<int>(3000, 2));
  ASSERT_TRUE(session->Checkpoint("a", 1).ok());
  EXPECT_EQ(session->RestartTest("a"), 1);
  EXPECT_TRUE(session->Finalize().ok());
}

// Both drains (ssd, pfs) of a version succeed: LastWait counts them and no
// failure.
TEST(CppApiTest, LastWaitCountsTheDrains) {
  Scratch scratch("[tiers.memory]\npath = \"{dir}/shm/{node}\"\n");
  std::vector<int> a(3000, 1);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(scratch.config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, a).ok());
  ASSERT_TRUE(session->Checkpoint("a", 1).ok());
  ASSERT_TRUE(session->Wait().ok());
  cairn_wait_info info;
  ASSERT_TRUE(session->LastWait(&info).ok());
  EXPECT_EQ(info.size, sizeof info);
  EXPECT_EQ(info.drains_done, 2);
  EXPECT_EQ(info.drains_failed, 0);
  EXPECT_STREQ(info.last_failure, "");
  EXPECT_TRUE(session->Finalize().ok());
}

}  // namespace
