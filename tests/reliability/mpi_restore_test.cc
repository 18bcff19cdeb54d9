// Issue 10 item 9 through the C API on real MPI ranks: a restart that fails
// because of damage on one rank leaves the protected memory of every rank
// byte for byte as it was before the call, and a restart that gives up the
// damaged newest version restores the older one on every rank, bit-exact.
// Registered with 4 ranks on 2 virtual nodes; the damage is on the last
// rank, in the last block of its part, on the only copy of the version.
#include <algorithm>
#include <cstdint>
#include <cstdio>
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

constexpr size_t kWords = 128 * 1024;  // 1 MiB per rank: 16 blocks of 64 KiB
constexpr uint64_t kSeed = 20261124;   // data of version v on rank r: kSeed + 1000 v + r

std::vector<uint64_t> Pattern(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> words(kWords);
  for (auto& w : words) w = rng();
  return words;
}
std::vector<uint64_t> VersionData(int v) {
  return Pattern(kSeed + 1000 * static_cast<uint64_t>(v) + static_cast<uint64_t>(Rank()));
}

class MpiRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = SharedDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    config_ = dir_ + ".toml";
    if (Rank() == 0) {
      std::printf("seed %llu\n", static_cast<unsigned long long>(kSeed));
      std::ofstream out(config_);
      out << "[general]\ndir = \"" << dir_ << "\"\nlog_level = \"off\"\n"
          << "[tiers.memory]\npath = \"" << dir_ << "/shm/{node}\"\nkeep_at_finalize = true\n"
          << "[topology]\nranks_per_node = 2\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // A run that checkpoints `versions`, then leaves the memory tier's copies
  // the only ones (the ssd and pfs tiers are removed).
  void CheckpointOnlyInMemory(std::initializer_list<int> versions) {
    ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
    std::vector<uint64_t> data(kWords);
    ASSERT_EQ(cairn_protect(0, data.data(), data.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
    for (int v : versions) {
      const std::vector<uint64_t> next = VersionData(v);
      std::copy(next.begin(), next.end(), data.begin());  // in place: the buffer is protected
      int rc = cairn_checkpoint("state", v);
      ASSERT_EQ(rc, CAIRN_SUCCESS) << cairn_error_message(rc);
    }
    ASSERT_EQ(cairn_checkpoint_wait(), CAIRN_SUCCESS);
    ASSERT_EQ(cairn_finalize(), CAIRN_SUCCESS);
    if (Rank() == 0) {
      fs::remove_all(dir_ + "/ssd");
      fs::remove_all(dir_ + "/pfs");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // Flips a bit near the end of the last rank's memory-tier part of v.
  void DamageLastRanksLastBlock(int v) {
    if (Rank() == Size() - 1) {
      char rel[64];
      std::snprintf(rel, sizeof(rel), "state/v%010d/r%06d.part", v, Rank());
      fs::path path = fs::path(dir_) / "shm" / std::to_string(Rank() / 2) / rel;
      ASSERT_TRUE(fs::exists(path)) << path;
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      const auto at = static_cast<std::streamoff>(fs::file_size(path) - 5);
      char c = 0;
      f.seekg(at);
      f.read(&c, 1);
      c ^= 0x01;
      f.seekp(at);
      f.write(&c, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // Whether every rank's `ok` is true.
  static bool Everywhere(bool ok) {
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
  }

  std::string dir_;
  std::string config_;
};

TEST_F(MpiRestoreTest, AFailedRestartLeavesEveryRanksMemoryUntouched) {
  CheckpointOnlyInMemory({1});
  DamageLastRanksLastBlock(1);
  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  const std::vector<uint64_t> before = Pattern(kSeed - 1 - static_cast<uint64_t>(Rank()));
  std::vector<uint64_t> memory = before;
  ASSERT_EQ(cairn_protect(0, memory.data(), memory.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  const int rc = cairn_restart("state", 1);
  EXPECT_EQ(rc, CAIRN_E_CORRUPT) << cairn_error_message(rc);
  EXPECT_TRUE(memory == before) << "rank " << Rank() << ": the failed restart wrote memory";
  EXPECT_TRUE(Everywhere(memory == before));
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

TEST_F(MpiRestoreTest, AVersionDamagedOnOneRankIsGivenUpOnEveryRank) {
  CheckpointOnlyInMemory({1, 2});
  DamageLastRanksLastBlock(2);
  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  std::vector<uint64_t> memory = Pattern(kSeed - 1 - static_cast<uint64_t>(Rank()));
  ASSERT_EQ(cairn_protect(0, memory.data(), memory.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  const int rc = cairn_restart("state", 2);
  EXPECT_EQ(rc, 1) << (rc < 0 ? cairn_error_message(rc) : "");
  EXPECT_TRUE(memory == VersionData(1)) << "rank " << Rank() << " does not hold version 1";
  EXPECT_TRUE(Everywhere(memory == VersionData(1)));
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

}  // namespace
