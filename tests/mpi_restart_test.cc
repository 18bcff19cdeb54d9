// Checkpoint and restart through the C API on 1..8 ranks, with virtual
// nodes of two ranks: bit-exact restore, collective agreement when ranks
// hold different versions, node loss, and corrupted copies.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
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
    if (Rank() == 0) {
      std::ofstream out(config_);
      out << "[general]\ndir = \"" << dir_ << "\"\nlog_level = \"error\"\n"
          << "[tiers.memory]\npath = \"" << dir_ << "/shm/{node}\"\n"
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

  // Restarts and returns the version restored; checks the bytes.
  int Restore() {
    Init();
    data_.assign(kWords, 0);
    EXPECT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
    int v = cairn_restart_test("state", -1);
    int restored = v >= 0 ? cairn_restart("state", v) : v;
    if (restored >= 0) EXPECT_EQ(data_, Expected(Rank(), restored, kWords)) << "version " << restored;
    EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
    return restored;
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
    std::string part = RankFile("memory", 0, 2, "part");
    std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100000);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x04;
    f.seekp(100000);
    f.write(&c, 1);
    f.close();
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

TEST_F(MpiRestartTest, RetentionKeepsTwoVersionsPerTier) {
  WriteVersions(5);
  if (Rank() == 0) {
    for (const char* tier : {"memory", "ssd", "pfs"}) {
      std::vector<std::string> versions;
      for (const auto& e : fs::directory_iterator(TierDir(tier, 0) + "/state")) {
        versions.push_back(e.path().filename());
      }
      std::sort(versions.begin(), versions.end());
      EXPECT_EQ(versions, (std::vector<std::string>{"v0000000004", "v0000000005"})) << tier;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
