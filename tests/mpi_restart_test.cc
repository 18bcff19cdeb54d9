// Checkpoint and restart through the C API on 1..8 ranks, with virtual
// nodes of two ranks: bit-exact restore, collective agreement when ranks
// hold different versions, node loss, corrupted copies, and the rollback
// distance a restart reports.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cairn/cairn.h"
#include "mpi_test_main.h"

namespace {

using cairn_test::Rank;
using cairn_test::SharedDir;
using cairn_test::Size;
namespace fs = std::filesystem;

// Rank r's data at version v: reproducible, different for every (r, v).
std::vector<uint64_t> Expected(int rank, int version, size_t n) {
  std::vector<uint64_t> data(n);
  std::mt19937_64 rng(static_cast<uint64_t>(rank) * 1000003u + static_cast<uint64_t>(version));
  for (auto& x : data) x = rng();
  return data;
}

class MpiRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = SharedDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    config_ = dir_ + ".toml";
    WriteConfig("error");
  }

  // Collective.
  void WriteConfig(const char* log_level) {
    if (Rank() == 0) {
      std::ofstream out(config_);
      out << "[general]\ndir = \"" << dir_ << "\"\nlog_level = \"" << log_level << "\"\n"
          << "[tiers.memory]\npath = \"" << dir_ << "/shm/{node}\"\n"
          // Restarts find memory copies after a finalize, as after a crash.
          << "keep_at_finalize = true\n"
          << "[topology]\nranks_per_node = 2\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  void Init() { ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS) << cairn_error_message(-4); }

  // Writes versions 1..n with Expected data, then finalizes.
  void WriteVersions(int n) {
    Init();
    data_.assign(kWords, 0);
    ASSERT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
    for (int v = 1; v <= n; ++v) {
      auto next = Expected(Rank(), v, kWords);
      std::copy(next.begin(), next.end(), data_.begin());  // the protected buffer stays put
      int rc = cairn_checkpoint("state", v);
      ASSERT_EQ(rc, CAIRN_SUCCESS) << cairn_error_message(rc);
    }
    ASSERT_EQ(cairn_checkpoint_wait(), CAIRN_SUCCESS);
    ASSERT_EQ(cairn_finalize(), CAIRN_SUCCESS);
  }

  // Restarts and returns the version restored; checks the bytes. With
  // info, also what cairn_last_restart says about it.
  int Restore(cairn_restart_info* info = nullptr) {
    Init();
    data_.assign(kWords, 0);
    EXPECT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
    int v = cairn_restart_test("state", -1);
    int restored = v >= 0 ? cairn_restart("state", v) : v;
    if (info != nullptr) {
      EXPECT_EQ(cairn_last_restart(info), CAIRN_SUCCESS);
    }
    if (restored >= 0) {
      EXPECT_EQ(data_, Expected(Rank(), restored, kWords)) << "version " << restored;
    }
    EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
    return restored;
  }

  // Flips one bit of rank's part file of version v on tier.
  void FlipBit(const std::string& tier, int rank, int v) {
    std::string part = RankFile(tier, rank, v, "part");
    std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open()) << part;
    f.seekg(100000);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x04;
    f.seekp(100000);
    f.write(&c, 1);
  }

  std::string TierDir(const std::string& tier, int node) {
    if (tier == "memory") return dir_ + "/shm/" + std::to_string(node);
    if (tier == "ssd") return dir_ + "/ssd/" + std::to_string(node);
    return dir_ + "/pfs";
  }
  std::string VersionDir(const std::string& tier, int node, int v) {
    char name[32];
    std::snprintf(name, sizeof(name), "v%010d", v);
    return TierDir(tier, node) + "/state/" + name;
  }
  std::string RankFile(const std::string& tier, int rank, int v, const char* suffix) {
    char name[32];
    std::snprintf(name, sizeof(name), "r%06d.%s", rank, suffix);
    return VersionDir(tier, rank / 2, v) + "/" + name;
  }

  static constexpr size_t kWords = 70000;  // 560 KB: several CRC blocks
  std::string dir_, config_;
  std::vector<uint64_t> data_;
};

TEST_F(MpiRestartTest, RestoresNewestVersionBitExact) {
  WriteVersions(4);
  EXPECT_EQ(Restore(), 4);
}

TEST_F(MpiRestartTest, AgreesOnVersionEveryRankHas) {
  WriteVersions(3);
  // The last rank loses version 3 everywhere (its manifests): every rank
  // must then restore version 2, although the others still have 3.
  if (Rank() == Size() - 1) {
    for (const char* tier : {"memory", "ssd", "pfs"}) fs::remove(RankFile(tier, Rank(), 3, "manifest"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(Restore(), 2);
}

TEST_F(MpiRestartTest, SurvivesLossOfANodesMemoryTier) {
  WriteVersions(2);
  if (Rank() == 0) fs::remove_all(TierDir("memory", (Size() - 1) / 2));
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(Restore(), 2);
}

TEST_F(MpiRestartTest, CorruptCopiesFallBackToIntactOnes) {
  WriteVersions(2);
  // Rank 0's memory copy gets a flipped bit, its ssd copy is truncated: the
  // pfs copy must be used, and nobody rolls back.
  if (Rank() == 0) {
    FlipBit("memory", 0, 2);
    fs::resize_file(RankFile("ssd", 0, 2, "part"), 5000);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(Restore(), 2);
}

TEST_F(MpiRestartTest, NewestVersionDamagedEverywhereRollsBack) {
  WriteVersions(3);
  if (Rank() == 0) {
    for (const char* tier : {"memory", "ssd", "pfs"}) fs::resize_file(RankFile(tier, 0, 3, "part"), 100);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(Restore(), 2);
}

// Recovery order (paper section 3.4): the newest version's only copy on the
// last rank, in memory, is damaged, and no slower tier holds that version:
// every rank rolls back to the version before, and says how far.
TEST_F(MpiRestartTest, DamagedNewestMemoryCopyWithoutSsdCopyRollsBackOneVersion) {
  WriteVersions(2);
  if (Rank() == 0) {
    for (int node = 0; node <= (Size() - 1) / 2; ++node) fs::remove_all(VersionDir("ssd", node, 2));
    fs::remove_all(VersionDir("pfs", 0, 2));
  }
  if (Rank() == Size() - 1) FlipBit("memory", Rank(), 2);
  cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
  EXPECT_EQ(Restore(&info), 1);
  EXPECT_EQ(info.version, 1);
  EXPECT_STREQ(info.tier, "memory");
  EXPECT_EQ(info.newest, 2);
  EXPECT_EQ(info.rollback_versions, 1);
  EXPECT_GT(info.rollback_seconds, 0.0);
  EXPECT_EQ(info.versions_failed, 1) << "version 2 was agreed on and failed on the last rank";
}

// The same damage with an ssd copy of the newest version: the last rank
// reads that one, and nobody rolls back.
TEST_F(MpiRestartTest, DamagedNewestMemoryCopyWithSsdCopyDoesNotRollBack) {
  WriteVersions(2);
  if (Rank() == Size() - 1) FlipBit("memory", Rank(), 2);
  cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
  EXPECT_EQ(Restore(&info), 2);
  EXPECT_EQ(info.version, 2);
  EXPECT_STREQ(info.tier, Rank() == Size() - 1 ? "ssd" : "memory");
  EXPECT_EQ(info.newest, 2);
  EXPECT_EQ(info.rollback_versions, 0);
  EXPECT_EQ(info.rollback_seconds, 0.0);
  EXPECT_EQ(info.versions_failed, 0);
}

TEST_F(MpiRestartTest, RegionMismatchIsAnErrorOnEveryRank) {
  WriteVersions(1);
  Init();
  std::vector<uint64_t> other(kWords + (Rank() == 0 ? 1 : 0), 7);
  ASSERT_EQ(cairn_protect(0, other.data(), other.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  int rc = cairn_restart("state", 1);
  EXPECT_EQ(rc, CAIRN_E_MISMATCH) << cairn_error_message(rc);
  EXPECT_EQ(other, std::vector<uint64_t>(other.size(), 7)) << "memory must stay untouched";
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

TEST_F(MpiRestartTest, NothingToRestartIsMinusOne) {
  Init();
  EXPECT_EQ(cairn_restart_test("state", -1), -1);
  EXPECT_EQ(cairn_restart("state", 5), CAIRN_E_NOT_FOUND);
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

// Which versions reach the lower tiers depends on timing (a queued drain is
// superseded once `keep` newer ones are queued behind it), but each tier
// ends with the newest version, at most `keep` versions, and only versions
// that every rank of the node holds complete: none a restart could not use.
TEST_F(MpiRestartTest, RetentionKeepsTwoVersionsPerTier) {
  WriteVersions(5);
  if (Rank() == 0) {
    for (const char* tier : {"memory", "ssd", "pfs"}) {
      // Node 0 holds ranks 0 and 1; the pfs tier is every rank's.
      const int holders = std::string(tier) == "pfs" ? Size() : std::min(Size(), 2);
      std::vector<std::string> versions;
      for (const auto& e : fs::directory_iterator(TierDir(tier, 0) + "/state")) {
        versions.push_back(e.path().filename());
        int manifests = 0;
        for (const auto& f : fs::directory_iterator(e.path())) {
          manifests += f.path().extension() == ".manifest";
        }
        EXPECT_EQ(manifests, holders) << tier << " " << e.path();
      }
      std::sort(versions.begin(), versions.end());
      ASSERT_FALSE(versions.empty()) << tier;
      EXPECT_EQ(versions.back(), "v0000000005") << tier;
      EXPECT_LE(versions.size(), 2u) << tier;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
