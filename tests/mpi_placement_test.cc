// The Checkpoint Location Controller in the engine, end to end on 4 ranks
// as 2 virtual nodes (issue 3 item 10): one answer per version when the
// nodes' own estimates disagree (lifetime per node's SSD ledger, size per
// node's memory), skipped and forced checkpoints, the placement history,
// and the recovery order of §3.4 with a corrupted memory copy.
//
// Time is a FakeClock per rank, so the controller's inputs are exact. The
// wear of node 1's SSD is made by another writer of its ledger: another job
// on that node, as far as the controller can tell.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/clock.h"
#include "comm/mpi_comm.h"
#include "env/device.h"
#include "env/env.h"
#include "format/layout.h"
#include "mpi_test_main.h"
#include "runtime/engine.h"
#include "runtime/placement_history.h"
#include "storage/tier.h"
#include "storage/tier_path.h"
#include "storage/wear_ledger.h"
#include "test_support.h"

namespace cairn {
namespace {

using cairn_test::Rank;
using cairn_test::SharedDir;
using cairn_test::Size;
namespace fs = std::filesystem;

constexpr int kRanksPerNode = 2;

class MpiPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = SharedDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    config_ = cairn_test::ThreeTierConfig(dir_);
    config_.ranks_per_node = kRanksPerNode;
    config_.placement.policy = PlacementPolicy::kClc;
    config_.tier(TierKind::kPfs).enabled = false;  // memory and ssd: the paper's two levels
  }

  int node() const { return Rank() / kRanksPerNode; }
  std::string TierRoot(TierKind kind, int node) const {
    auto root = ExpandTierPath(PosixEnv(), config_.tier(kind).path, dir_, std::to_string(node));
    return std::move(root).value();
  }

  void Open() {
    auto comm = NewMpiComm(MPI_COMM_WORLD, kRanksPerNode);
    ASSERT_TRUE(comm.ok()) << comm.status().ToString();
    auto engine = Engine::Create(std::move(comm).value(), config_, PosixEnv(), &clock_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    ASSERT_TRUE(engine_->Protect(0, data_.data(), data_.size(), sizeof(uint64_t)).ok());
  }

  // Another job on `node` writes `bytes` to its SSD, one second from now:
  // that node's B_SSD becomes high enough to wear the device out early.
  void WearNodeSsd(int node, double bytes) {
    if (Rank() == node * kRanksPerNode) {
      std::string root = TierRoot(TierKind::kSsd, node);
      ASSERT_TRUE(PosixEnv()->CreateDirs(root).ok());
      std::optional<DeviceNumber> device;
      if (auto d = DeviceOf(root); d.ok()) device = *d;
      WearLedgerOptions options;
      options.dir = WearLedgerDir(root, device);
      options.writer = "otherjob";
      options.device = device;
      auto ledger = WearLedger::Open(PosixEnv(), options, clock_.WallSeconds());
      ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
      ASSERT_TRUE((*ledger)->Record(static_cast<uint64_t>(bytes), clock_.WallSeconds() + 1).ok());
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  // One checkpoint call after `compute` seconds of compute.
  CheckpointReport Checkpoint(int64_t version, bool force = false, double compute = 10) {
    clock_.Advance(compute);
    cairn_test::FillVersion(data_, version * 16 + Rank());
    Status s = engine_->Checkpoint("state", version, force);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return engine_->last_checkpoint();
  }

  // Finalizes, restarts a fresh engine from `version` and checks every
  // rank's bytes.
  void FinishAndRestoreBitExact(int64_t version) {
    ASSERT_TRUE(engine_->Finalize().ok());
    engine_.reset();
    std::fill(data_.begin(), data_.end(), 0);
    Open();
    auto report = engine_->Restart("state", version);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->version, version);
    EXPECT_TRUE(cairn_test::HoldsVersion(data_, version * 16 + Rank()));
    ASSERT_TRUE(engine_->Finalize().ok());
  }

  bool HasCopy(TierKind kind, int64_t version) const {
    return fs::exists(TierRoot(kind, node()) + "/state/" + fmt::format("v{:010}", version) + "/" +
                      ManifestFileName(Rank()));
  }

  // Every rank's value of x, for checking that all ranks agree.
  static std::vector<int64_t> Gathered(int64_t x) {
    std::vector<int64_t> all(Size());
    MPI_Allgather(&x, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
    return all;
  }
  static bool Same(int64_t x) {
    auto all = Gathered(x);
    return std::all_of(all.begin(), all.end(), [&](int64_t y) { return y == all[0]; });
  }

  std::string dir_;
  Config config_;
  FakeClock clock_;
  std::vector<uint64_t> data_ = std::vector<uint64_t>(4096);
  std::unique_ptr<Engine> engine_;
};

TEST_F(MpiPlacementTest, OneNodesWornSsdKeepsTheVersionInMemoryEverywhere) {
  if (Size() != 4) GTEST_SKIP() << "needs 4 ranks";
  config_.placement.slowdown = false;
  Open();
  // No SSD writes yet: every node's SSD is within its lifetime.
  const CheckpointReport& first = Checkpoint(1);
  EXPECT_EQ(first.placement, Placement::kSsd) << first.reason;
  EXPECT_EQ(first.rule, ClcRule::kWithinLimits);
  EXPECT_TRUE(HasCopy(TierKind::kSsd, 1));
  EXPECT_FALSE(HasCopy(TierKind::kMemory, 1));
  // Node 1's device is now written far faster than its warranty allows;
  // node 0's alone would still take the SSD.
  WearNodeSsd(1, 1e13);
  const CheckpointReport& second = Checkpoint(2);
  EXPECT_TRUE(Same(static_cast<int64_t>(second.placement)));
  EXPECT_EQ(second.placement, Placement::kMemory) << second.reason;
  EXPECT_EQ(second.rule, ClcRule::kLifetime) << second.reason;
  EXPECT_NE(second.reason.find("node"), std::string::npos) << second.reason;
  EXPECT_TRUE(HasCopy(TierKind::kMemory, 2));
  EXPECT_FALSE(HasCopy(TierKind::kSsd, 2)) << "clc must not drain memory versions to the SSD";
  ASSERT_TRUE(engine_->Finalize().ok());
}

TEST_F(MpiPlacementTest, SkipsWhenOneNodeDoesNotFitAndForcedGoesToSsd) {
  if (Size() != 4) GTEST_SKIP() << "needs 4 ranks";
  config_.placement.slowdown = false;
  config_.placement.force_ssd_every = 4;
  config_.tier(TierKind::kMemory).capacity = 256 << 10;  // per node
  // Node 0's ranks: 32 KiB each; node 1's: 160 KiB each, 320 KiB together.
  data_.assign(node() == 0 ? 4096 : 20480, 0);
  WearNodeSsd(0, 1e13);  // both nodes wear: memory is preferred everywhere
  WearNodeSsd(1, 1e13);
  Open();
  const CheckpointReport& skipped = Checkpoint(1);
  EXPECT_TRUE(Same(static_cast<int64_t>(skipped.placement)));
  EXPECT_EQ(skipped.placement, Placement::kSkip) << skipped.reason;
  EXPECT_FALSE(HasCopy(TierKind::kMemory, 1));
  EXPECT_FALSE(HasCopy(TierKind::kSsd, 1));
  auto none = engine_->RestartTest("state", -1);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, -1) << "a skipped version must not be recoverable";

  const CheckpointReport& flagged = Checkpoint(2, /*force=*/true);
  EXPECT_EQ(flagged.placement, Placement::kSsd) << flagged.reason;
  EXPECT_EQ(flagged.rule, ClcRule::kForcedFlag);
  EXPECT_TRUE(flagged.forced);
  EXPECT_TRUE(HasCopy(TierKind::kSsd, 2));

  EXPECT_EQ(Checkpoint(3).placement, Placement::kSkip);
  const CheckpointReport& every = Checkpoint(4);  // force_ssd_every = 4
  EXPECT_EQ(every.placement, Placement::kSsd) << every.reason;
  EXPECT_EQ(every.rule, ClcRule::kForcedEvery);
  EXPECT_EQ(every.number, 4);

  // Restart finds the newest version written, 4, never the skipped 3.
  auto newest = engine_->RestartTest("state", -1);
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(*newest, 4);
  ASSERT_TRUE(engine_->Finalize().ok());
  engine_.reset();

  // The node's first rank logged every call, skips included.
  if (Rank() % kRanksPerNode == 0) {
    auto history = ReadPlacementHistory(PosixEnv(), TierRoot(TierKind::kSsd, node()));
    ASSERT_TRUE(history.ok()) << history.status().ToString();
    ASSERT_EQ(history->size(), 4u);
    std::vector<std::string> placements;
    for (const auto& r : *history) placements.push_back(r.placement);
    EXPECT_EQ(placements, (std::vector<std::string>{"skip", "ssd", "skip", "ssd"}));
    EXPECT_EQ((*history)[0].node_bytes, node() == 0 ? 2 * 4096 * 8u : 2 * 20480 * 8u);
    EXPECT_TRUE((*history)[1].forced);
    EXPECT_EQ((*history)[3].rule, "forced-every");
    // What the decisions applied, for `cairn status`: clc with the
    // slowdown test switched off.
    for (const auto& r : *history) {
      EXPECT_EQ(r.policy, "clc");
      EXPECT_TRUE(r.lifetime_checked);
      EXPECT_FALSE(r.slowdown_checked);
    }
  }
}

TEST_F(MpiPlacementTest, CorruptMemoryCopyFallsBackToTheOlderSsdCopy) {
  if (Size() != 4) GTEST_SKIP() << "needs 4 ranks";
  config_.placement.slowdown = false;
  Open();
  ASSERT_EQ(Checkpoint(1).placement, Placement::kSsd);
  WearNodeSsd(0, 1e13);
  ASSERT_EQ(Checkpoint(2).placement, Placement::kMemory);
  ASSERT_TRUE(engine_->Finalize().ok());
  engine_.reset();

  // One bit of rank 3's memory copy of version 2 flips.
  if (Rank() == 3) {
    std::string part = TierRoot(TierKind::kMemory, 1) + "/state/" + fmt::format("v{:010}", 2) +
                       "/" + PartFileName(3);
    std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << part;
    f.seekg(-100, std::ios::end);
    char byte = 0;
    f.read(&byte, 1);
    byte ^= 0x10;
    f.seekp(-100, std::ios::end);
    f.write(&byte, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  std::fill(data_.begin(), data_.end(), 0);
  Open();
  auto report = engine_->Restart("state", 2);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->version, 1);
  EXPECT_EQ(report->tier, "ssd");
  EXPECT_TRUE(cairn_test::HoldsVersion(data_, 1 * 16 + Rank())) << "restored bytes differ";
  ASSERT_TRUE(engine_->Finalize().ok());
}

TEST_F(MpiPlacementTest, RanksOfANodeWriteInWavesAndRestoreBitExact) {
  if (Size() != 4) GTEST_SKIP() << "needs 4 ranks";
  config_.placement.policy = PlacementPolicy::kSsd;
  config_.io.parallelism = 1;  // one rank of each node at a time
  Open();
  for (int64_t v = 1; v <= 3; ++v) ASSERT_EQ(Checkpoint(v).placement, Placement::kSsd);
  FinishAndRestoreBitExact(3);
}

TEST_F(MpiPlacementTest, AutoParallelismWithoutAProfileMeasuresAndStaysBitExact) {
  if (Size() != 4) GTEST_SKIP() << "needs 4 ranks";
  config_.placement.policy = PlacementPolicy::kSsd;
  config_.io.auto_parallelism = true;  // and no profile at io.profile
  Open();
  // Two ranks per node: all at once, then one at a time, then the faster.
  for (int64_t v = 1; v <= 4; ++v) ASSERT_EQ(Checkpoint(v).placement, Placement::kSsd);
  FinishAndRestoreBitExact(4);
}

}  // namespace
}  // namespace cairn
