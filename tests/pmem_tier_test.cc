// The pmem tier end to end through the public API (docs/pmem.md, "The pmem
// tier"): with the memory tier off, the fast level is the pmem tier; its
// versions are streamed into reused mapped slots, restart reads them back
// bit for bit, and a version kept on memory drains to pmem below it.
#define CAIRN_NO_MPI
#include "cairn/cairn.hpp"

#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

constexpr uint32_t kSeed = 4242;

class PmemTierApiTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/dev/shm/cairn-pmem-api-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string WriteConfig(bool memory) {
    std::string path = dir_ + "/c.toml";
    FILE* f = std::fopen(path.c_str(), "w");
    std::fprintf(f,
                 "[general]\ndir = \"%s\"\nlog_level = \"off\"\n"
                 "[tiers.memory]\nenabled = %s\npath = \"%s/shm/{node}\"\nkeep_at_finalize = true\n"
                 "[tiers.pmem]\nenabled = true\npath = \"%s/pmem/{node}\"\n"
                 "[tiers.ssd]\nenabled = false\n[tiers.pfs]\nenabled = false\n",
                 dir_.c_str(), memory ? "true" : "false", dir_.c_str(), dir_.c_str());
    std::fclose(f);
    return path;
  }
  std::string dir_;
};

TEST_F(PmemTierApiTest, VersionsGoToPmemAndRestartFromIt) {
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937_64 rng(kSeed);
  std::vector<uint64_t> field((6 << 20) / sizeof(uint64_t));  // above the 1 MiB slot size
  std::vector<uint64_t> version3;
  const std::string config = WriteConfig(/*memory=*/false);
  {
    cairn::Status status;
    auto session = cairn::Session::InitSingle(config, &status);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(session->Protect(0, field).ok());
    // The pmem tier, as the fast level, makes its slots ahead: mapped and
    // faulted in before the first checkpoint.
    ASSERT_TRUE(session->Wait().ok());
    EXPECT_GE(std::distance(std::filesystem::directory_iterator(dir_ + "/pmem/0/.free"),
                            std::filesystem::directory_iterator()),
              2);
    for (int v = 1; v <= 3; ++v) {
      for (auto& x : field) x = rng();
      ASSERT_TRUE(session->Checkpoint("field", v).ok());
      cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
      ASSERT_TRUE(session->LastCheckpoint(&info).ok());
      EXPECT_STREQ(info.tier, "pmem") << "version " << v;
    }
    version3 = field;
    ASSERT_TRUE(session->Finalize().ok());
  }
  // Slots: the retired parts were parked and reused, not deleted.
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/pmem/0/.free"));
  std::fill(field.begin(), field.end(), 0);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, field).ok());
  ASSERT_EQ(session->RestartTest("field"), 3);
  int restored = 0;
  ASSERT_TRUE(session->Restart("field", 3, &restored).ok());
  cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
  ASSERT_TRUE(session->LastRestart(&info).ok());
  EXPECT_STREQ(info.tier, "pmem");
  EXPECT_EQ(field, version3);
}

TEST_F(PmemTierApiTest, MemoryVersionsDrainToPmem) {
  std::vector<uint64_t> field((2 << 20) / sizeof(uint64_t), 7);
  const std::string config = WriteConfig(/*memory=*/true);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, field).ok());
  ASSERT_TRUE(session->Checkpoint("field", 1).ok());
  ASSERT_TRUE(session->Wait().ok());
  cairn_wait_info wait = CAIRN_WAIT_INFO_INIT;
  ASSERT_TRUE(session->LastWait(&wait).ok());
  EXPECT_EQ(wait.drains_done, 1);
  EXPECT_EQ(wait.drains_failed, 0) << wait.last_failure;
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/pmem/0/field/v0000000001"));
}

// The clc and ratio policies choose between the fast level and the ssd: with
// memory off, the fast level is pmem. `placement` is the [placement] table's
// body; `pmem_extra` goes into [tiers.pmem].
std::unique_ptr<cairn::Session> StartPlaced(const std::string& dir, const char* placement,
                                            const char* pmem_extra,
                                            std::vector<uint64_t>& field) {
  std::string path = dir + "/placed.toml";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fprintf(f,
               "[general]\ndir = \"%s\"\nlog_level = \"off\"\n"
               "[tiers.memory]\nenabled = false\n"
               "[tiers.pmem]\nenabled = true\npath = \"%s/pmem/{node}\"\n%s\n"
               "[tiers.ssd]\npath = \"%s/ssd/{node}\"\n[tiers.pfs]\nenabled = false\n"
               "[placement]\n%s\n",
               dir.c_str(), dir.c_str(), pmem_extra, dir.c_str(), placement);
  std::fclose(f);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(path, &status);
  EXPECT_TRUE(status.ok()) << status.message();
  if (session && !session->Protect(0, field).ok()) return nullptr;
  return session;
}

// Checkpoints versions 1..n and returns the tier of each ("" if skipped).
std::vector<std::string> TiersOf(cairn::Session& session, int n) {
  std::vector<std::string> tiers;
  for (int v = 1; v <= n; ++v) {
    EXPECT_TRUE(session.Checkpoint("field", v).ok());
    cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
    EXPECT_TRUE(session.LastCheckpoint(&info).ok());
    EXPECT_EQ(info.skipped != 0, info.tier[0] == '\0') << "version " << v;
    tiers.push_back(info.tier);
  }
  return tiers;
}

TEST_F(PmemTierApiTest, RatioPolicyChoosesBetweenPmemAndSsd) {
  std::vector<uint64_t> field((2 << 20) / sizeof(uint64_t), 3);
  auto session = StartPlaced(dir_, "policy = \"ratio\"\nratio = 2", "", field);
  ASSERT_TRUE(session);
  EXPECT_EQ(TiersOf(*session, 4), (std::vector<std::string>{"pmem", "ssd", "pmem", "ssd"}));
}

// The controller (Algorithm 1, docs/clc.md) picks pmem where it would pick
// RAM: the first version goes to the ssd (no checkpoint time measured yet),
// then the slowdown test, with a bound every checkpoint exceeds, sends the
// rest to pmem; and its size test skips a version pmem cannot hold.
TEST_F(PmemTierApiTest, ClcControllerChoosesPmemWhereItWouldChooseMemory) {
  std::vector<uint64_t> field((2 << 20) / sizeof(uint64_t), 5);
  const char* clc = "policy = \"clc\"\nlifetime = false\nslowdown_bound = 0.000001";
  {
    auto session = StartPlaced(dir_, clc, "", field);
    ASSERT_TRUE(session);
    EXPECT_EQ(TiersOf(*session, 3), (std::vector<std::string>{"ssd", "pmem", "pmem"}));
    ASSERT_TRUE(session->Finalize().ok());
  }
  std::filesystem::remove_all(dir_ + "/pmem");
  std::filesystem::remove_all(dir_ + "/ssd");
  auto session = StartPlaced(dir_, clc, "capacity = \"1MiB\"", field);
  ASSERT_TRUE(session);
  EXPECT_EQ(TiersOf(*session, 3), (std::vector<std::string>{"ssd", "", ""}));
}

}  // namespace
