// Errors that travel: a failure on one rank of a collective call reaches
// every rank with its own code, its message and the rank it happened on, so
// that rank 0 — often the only output a user reads — names the cause.
// Registered with 4 ranks; the damage (or the odd argument) is always on
// the last one.
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

constexpr size_t kWords = 64 * 1024;  // 512 KiB per rank

class MpiErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = SharedDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    config_ = dir_ + ".toml";
    if (Rank() == 0) {
      std::ofstream out(config_);
      out << "[general]\ndir = \"" << dir_ << "\"\nlog_level = \"off\"\n"
          << "[tiers.memory]\npath = \"" << dir_ << "/shm/{node}\"\n"
          << "[topology]\nranks_per_node = 2\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    data_.resize(kWords);
    std::mt19937_64 rng(static_cast<uint64_t>(Rank()) + 1);
    for (auto& w : data_) w = rng();
  }

  int last() const { return Size() - 1; }

  // The config file this rank reads: the shared one, but on the last rank
  // `file` (under dir_), written with `text`.
  std::string ConfigOnTheLastRank(const std::string& file, const std::string& text) const {
    if (Rank() != last()) return config_;
    const std::string path = dir_ + file;
    std::ofstream(path) << text;
    return path;
  }
  std::string RankTag(int rank) const { return "rank " + std::to_string(rank) + ":"; }

  // Every rank's status of a call, gathered on every rank.
  static std::vector<int> AllCodes(int rc) {
    std::vector<int> all(static_cast<size_t>(Size()));
    MPI_Allgather(&rc, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return all;
  }

  // Flips one bit of the last rank's part file of version v on every tier
  // that holds one: no copy of it is recoverable.
  int DamageEveryCopy(int v) {
    char version_dir[32];
    std::snprintf(version_dir, sizeof(version_dir), "v%010d", v);
    char part[32];
    std::snprintf(part, sizeof(part), "r%06d.part", Rank());
    const int node = Rank() / 2;
    int damaged = 0;
    for (const std::string& tier_dir : {dir_ + "/shm/" + std::to_string(node),
                                        dir_ + "/ssd/" + std::to_string(node), dir_ + "/pfs"}) {
      fs::path path = fs::path(tier_dir) / "state" / version_dir / part;
      if (!fs::exists(path)) continue;
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      const std::streamoff at = static_cast<std::streamoff>(fs::file_size(path) / 2);
      char c = 0;
      f.seekg(at);
      f.read(&c, 1);
      c ^= 0x10;
      f.seekp(at);
      f.write(&c, 1);
      ++damaged;
    }
    return damaged;
  }

  std::string dir_;
  std::string config_;
  std::vector<uint64_t> data_;
};

TEST_F(MpiErrorsTest, AConfigErrorOnTheLastRankIsReportedOnRankZero) {
  if (Size() < 2) GTEST_SKIP() << "needs several ranks";
  // The last rank alone reads a config file with a value of the wrong type.
  const std::string config = ConfigOnTheLastRank(
      ".bad.toml", "[general]\ndir = \"" + dir_ + "\"\n[retention]\nkeep = \"two\"\n");
  const int rc = cairn_init(MPI_COMM_WORLD, config.c_str());
  const std::string message = cairn_error_message(rc);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_CONFIG);
  // Every rank, rank 0 included, says where and what.
  EXPECT_NE(message.find(RankTag(last())), std::string::npos) << message;
  EXPECT_NE(message.find("retention.keep"), std::string::npos) << message;
  // Nobody went on alone: Cairn is not initialized anywhere.
  EXPECT_EQ(cairn_finalize(), CAIRN_E_NOT_INITIALIZED);
}

TEST_F(MpiErrorsTest, AKeyTheLastRankSetsOtherwiseFailsInitOnEveryRankNamingIt) {
  if (Size() < 2) GTEST_SKIP() << "needs several ranks";
  // A well-formed config that the last rank alone reads with another
  // retention.keep (as a per-rank wrapper's variable would set), and
  // another log level, which may differ.
  const std::string config = ConfigOnTheLastRank(
      ".other.toml", "[general]\ndir = \"" + dir_ + "\"\nlog_level = \"error\"\n" +
                         "[tiers.memory]\npath = \"" + dir_ + "/shm/{node}\"\n" +
                         "[topology]\nranks_per_node = 2\n[retention]\nkeep = 3\n");
  const int rc = cairn_init(MPI_COMM_WORLD, config.c_str());
  const std::string message = cairn_error_message(rc);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_CONFIG);
  EXPECT_NE(message.find("retention.keep"), std::string::npos) << message;
  EXPECT_EQ(message.find("log_level"), std::string::npos) << message;
  EXPECT_EQ(cairn_finalize(), CAIRN_E_NOT_INITIALIZED);
}

TEST_F(MpiErrorsTest, ACorruptPartOnTheLastRankIsReportedOnRankZero) {
  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  ASSERT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  int rc = cairn_checkpoint("state", 1);
  ASSERT_EQ(rc, CAIRN_SUCCESS) << cairn_error_message(rc);
  ASSERT_EQ(cairn_checkpoint_wait(), CAIRN_SUCCESS);
  ASSERT_EQ(cairn_finalize(), CAIRN_SUCCESS);
  if (Rank() == last()) {
    ASSERT_GT(DamageEveryCopy(1), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  std::vector<uint64_t> restored(kWords, 0);
  ASSERT_EQ(cairn_protect(0, restored.data(), restored.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  rc = cairn_restart("state", 1);
  const std::string message = cairn_error_message(rc);
  // CORRUPT on every rank, not IO or "failed on another rank".
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_CORRUPT);
  char part[32];
  std::snprintf(part, sizeof(part), "r%06d.part", last());
  EXPECT_NE(message.find(RankTag(last())), std::string::npos) << message;
  EXPECT_NE(message.find(part), std::string::npos) << "the last rank's own message: " << message;
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

TEST_F(MpiErrorsTest, ABadArgumentOnOneRankFailsTheCallOnEveryRank) {
  if (Size() < 2) GTEST_SKIP() << "needs several ranks";
  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  ASSERT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  // A name only the last rank gets wrong: without agreement the others
  // would wait for it in the checkpoint's first collective.
  const int rc = cairn_checkpoint(Rank() == last() ? "../state" : "state", 1);
  const std::string message = cairn_error_message(rc);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(message.find(RankTag(last())), std::string::npos) << message;
  EXPECT_NE(message.find("../state"), std::string::npos) << message;
  // The engine is still usable and consistent afterwards.
  EXPECT_EQ(cairn_checkpoint("state", 1), CAIRN_SUCCESS);
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

// Arguments refused before the engine (NULL, unknown flags) on the last
// rank only: every rank fails the call with its cause instead of waiting
// for it, and the next collective call pairs up as it should.
TEST_F(MpiErrorsTest, ANullOrBadFlagOnOneRankFailsTheCallOnEveryRank) {
  if (Size() < 2) GTEST_SKIP() << "needs several ranks";
  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  ASSERT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  const bool odd_one = Rank() == last();
  int rc = cairn_checkpoint(odd_one ? nullptr : "state", 1);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cairn_error_message(rc)).find("NULL"), std::string::npos);
  rc = cairn_checkpoint_flags("state", 1, odd_one ? 0x80u : 0u);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cairn_error_message(rc)).find("flag"), std::string::npos);
  EXPECT_EQ(cairn_checkpoint("state", 2), CAIRN_SUCCESS);
  rc = cairn_restart(odd_one ? nullptr : "state", 2);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_EQ(cairn_restart_test(odd_one ? nullptr : "state", -1), -1);
  for (int code : AllCodes(cairn_last_error())) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  rc = cairn_delete(odd_one ? nullptr : "state");
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_EQ(cairn_restart_test("state", -1), 2);
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

// One collective call naming another version, or another checkpoint, on
// one rank: refused on every rank, nothing committed (a version that the
// ranks wrote under different numbers could never be restored).
TEST_F(MpiErrorsTest, RanksNamingDifferentVersionsAreRefusedOnEveryRank) {
  if (Size() < 2) GTEST_SKIP() << "needs several ranks";
  ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS);
  ASSERT_EQ(cairn_protect(0, data_.data(), data_.size(), sizeof(uint64_t)), CAIRN_SUCCESS);
  ASSERT_EQ(cairn_checkpoint("state", 1), CAIRN_SUCCESS);
  int rc = cairn_checkpoint("state", Rank() == last() ? 3 : 2);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cairn_error_message(rc)).find("different versions"), std::string::npos)
      << cairn_error_message(rc);
  rc = cairn_checkpoint(Rank() == last() ? "other" : "state", 2);
  for (int code : AllCodes(rc)) EXPECT_EQ(code, CAIRN_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cairn_error_message(rc)).find("different checkpoints"), std::string::npos)
      << cairn_error_message(rc);
  EXPECT_EQ(cairn_restart_test("state", -1), 1);
  EXPECT_EQ(cairn_restart_test("other", -1), -1);
  EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
}

}  // namespace
