// [dedup] through the C API under real MPI on 1..8 ranks, two ranks to a
// virtual node: every mode restores bit-exact (references fetched from
// other ranks and nodes over MPI), cairn_last_checkpoint reports the
// pages, and losing a virtual node's memory tier falls back to the pfs.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

constexpr size_t kPage = 4096;
constexpr size_t kPages = 64;

// Most pages equal on every rank, a quarter per rank, one page per version.
std::vector<uint8_t> State(int rank, int version) {
  std::vector<uint8_t> s(kPages * kPage + 52);
  for (size_t p = 0; p < kPages; ++p) {
    int tag = p % 4 == 0 ? 100 + rank : static_cast<int>(p % 16);
    std::memset(s.data() + p * kPage, tag, kPage);
  }
  std::memset(s.data() + kPages * kPage, rank, 52);
  std::memset(s.data() + (static_cast<size_t>(version) % kPages) * kPage + 64, 200 + version, 64);
  return s;
}

class MpiDedupTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string mode = GetParam();
    for (char& c : mode) c = c == '+' ? '_' : c;
    dir_ = SharedDir() + "/" + mode;
    config_ = dir_ + ".toml";
    if (Rank() == 0) {
      std::ofstream out(config_);
      out << "[general]\ndir = \"" << dir_ << "\"\nlog_level = \"error\"\n"
          << "[tiers.memory]\npath = \"" << dir_ << "/shm/{node}\"\nkeep_at_finalize = true\n"
          << "[tiers.ssd]\nenabled = false\n"
          << "[dedup]\nmode = \"" << GetParam() << "\"\nfull_every = 3\n"
          << "[topology]\nranks_per_node = 2\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  void Init() { ASSERT_EQ(cairn_init(MPI_COMM_WORLD, config_.c_str()), CAIRN_SUCCESS); }

  // Ends the instance, removes the last virtual node's memory tier, and
  // checks that a new one restores `version` of `name` into `state` as
  // `expected`: its ranks read their pfs copies, and still serve the pages
  // other ranks refer to.
  void ExpectRestoredAfterLosingTheLastNode(const char* name, int version,
                                            const std::vector<uint8_t>& expected,
                                            std::vector<uint8_t>& state) {
    ASSERT_EQ(cairn_checkpoint_wait(), CAIRN_SUCCESS);
    ASSERT_EQ(cairn_finalize(), CAIRN_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (Rank() == 0) fs::remove_all(dir_ + "/shm/" + std::to_string((Size() - 1) / 2));
    MPI_Barrier(MPI_COMM_WORLD);
    Init();
    std::fill(state.begin(), state.end(), 0);
    ASSERT_EQ(cairn_protect(0, state.data(), state.size(), 1), CAIRN_SUCCESS);
    ASSERT_EQ(cairn_restart(name, version), version) << cairn_error_message(CAIRN_LAST_ERROR);
    EXPECT_TRUE(state == expected) << "rank " << Rank() << " restored other bytes";
    ASSERT_EQ(cairn_finalize(), CAIRN_SUCCESS);
  }

  std::string dir_;
  std::string config_;
};

TEST_P(MpiDedupTest, RestoresBitExactAfterLosingANode) {
  const std::string mode = GetParam();
  std::vector<uint8_t> state;
  Init();
  for (int v = 0; v < 4; ++v) {
    state = State(Rank(), v);
    ASSERT_EQ(cairn_protect(0, state.data(), state.size(), 1), CAIRN_SUCCESS);
    ASSERT_EQ(cairn_checkpoint("dd", v), CAIRN_SUCCESS) << cairn_error_message(CAIRN_LAST_ERROR);
    cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
    ASSERT_EQ(cairn_last_checkpoint(&info), CAIRN_SUCCESS);
    const unsigned long long pages = info.pages_unique + info.pages_local_dup +
                                     info.pages_remote_ref + info.pages_unchanged;
    if (mode == "off") {
      EXPECT_EQ(pages, 0u);
    } else {
      EXPECT_EQ(pages, kPages + 1);
      EXPECT_GT(info.pages_local_dup + info.pages_remote_ref + info.pages_unchanged, 0u);
    }
    if (mode.rfind("collective", 0) == 0 && Size() > 1 && v == 0) {
      EXPECT_GT(info.pages_remote_ref, 0u);
    }
  }
  ExpectRestoredAfterLosingTheLastNode("dd", 3, State(Rank(), 3), state);
}

// Pages nothing deduplicates: each rank's own, all new in every version.
std::vector<uint8_t> UniqueState(int rank, int version) {
  std::vector<uint8_t> s(kPages * kPage + 52);
  for (size_t at = 0; at < s.size(); at += kPage) {
    const size_t n = std::min(kPage, s.size() - at);
    std::memset(s.data() + at, (rank * 31 + version) & 0xFF, n);
    const uint64_t words[3] = {static_cast<uint64_t>(rank), at, static_cast<uint64_t>(version)};
    std::memcpy(s.data() + at, words, std::min(n, sizeof words));
  }
  return s;
}

// Versions after one that saved nothing are written whole (dedup.min_saving,
// probe_every 3), on the schedule docs/dedup.md gives for each mode, and
// the newest restores bit-exact after a virtual node loses its memory tier.
TEST_P(MpiDedupTest, VersionsWrittenWholeWhereNothingIsSaved) {
  const std::string mode = GetParam();
  if (Rank() == 0) {
    std::ifstream in(config_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string key = "full_every = 3\n";
    text.replace(text.find(key), key.size(), key + "probe_every = 3\n");
    std::ofstream(config_) << text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // The versions written whole (1) of versions 0-6.
  std::vector<int> expected = {0, 1, 1, 0, 1, 1, 0};  // local, collective
  if (mode == "off") expected.assign(7, 0);
  if (mode == "incremental" || (mode == "collective+incremental" && Size() == 1)) {
    // A full version (0, and the one after whole ones) does not judge.
    expected = {0, 0, 1, 1, 0, 0, 1};
  } else if (mode == "collective+incremental") {
    // Judged where the step was skipped, and whole only until it is due.
    expected = {0, 0, 1, 0, 0, 1, 0};
  }
  std::vector<uint8_t> state;
  std::vector<int> whole;
  Init();
  for (int v = 0; v < 7; ++v) {
    state = UniqueState(Rank(), v);
    ASSERT_EQ(cairn_protect(0, state.data(), state.size(), 1), CAIRN_SUCCESS);
    ASSERT_EQ(cairn_checkpoint("whole", v), CAIRN_SUCCESS)
        << cairn_error_message(CAIRN_LAST_ERROR);
    cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
    ASSERT_EQ(cairn_last_checkpoint(&info), CAIRN_SUCCESS);
    whole.push_back(info.dedup_whole);
    if (info.dedup_whole) {
      EXPECT_EQ(info.pages_hashed, 0u);
      EXPECT_EQ(info.pages_unique, kPages + 1);
    }
  }
  EXPECT_EQ(whole, expected) << "rank " << Rank();
  ExpectRestoredAfterLosingTheLastNode("whole", 6, UniqueState(Rank(), 6), state);
}

INSTANTIATE_TEST_SUITE_P(Modes, MpiDedupTest,
                         ::testing::Values("off", "local", "collective", "incremental",
                                           "collective+incremental"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) c = c == '+' ? '_' : c;
                           return s;
                         });

}  // namespace
