#include "cli/removal.h"

#include <gtest/gtest.h>

#include "format/layout.h"
#include "storage/tier.h"
#include "storage/tier_path.h"

namespace cairn {
namespace {

CopyInfo Copy(const std::string& name, int64_t version, int rank, int nranks,
              CopyState state = CopyState::kComplete) {
  CopyInfo c;
  c.name = name;
  c.version = version;
  c.rank = rank;
  c.nranks = state == CopyState::kComplete ? nranks : 0;
  c.state = state;
  return c;
}

// Both ranks of a 2-rank job, on one tier.
void AddVersion(std::vector<CopyInfo>& copies, const std::string& name, int64_t version) {
  copies.push_back(Copy(name, version, 0, 2));
  copies.push_back(Copy(name, version, 1, 2));
}

TEST(RecoverableVersionsTest, EveryRankOnSomeTierFromAJobOfThatSize) {
  std::vector<CopyInfo> copies;
  AddVersion(copies, "heat", 10);
  copies.push_back(Copy("heat", 20, 0, 2));  // rank 1 lost
  copies.push_back(Copy("heat", 30, 0, 2));  // rank 1 on another tier
  copies.push_back(Copy("heat", 30, 1, 2));
  copies.back().tier = TierKind::kPfs;
  copies.push_back(Copy("heat", 40, 0, 2));  // two jobs' ranks do not add up
  copies.push_back(Copy("heat", 40, 1, 4));
  copies.push_back(Copy("heat", 50, 0, 2));
  copies.push_back(Copy("heat", 50, 1, 2, CopyState::kDamaged));
  copies.push_back(Copy("heat", 60, 0, 2));  // two runs of one job size do not add up
  copies.back().run_id = 7;
  copies.push_back(Copy("heat", 60, 1, 2));
  copies.back().run_id = 8;
  EXPECT_EQ(RecoverableVersions(copies), (std::set<int64_t>{10, 30}));
}

TEST(PlanPruneTest, KeepsNewestRecoverableAndRemovesOlderAndLeftovers) {
  std::vector<CopyInfo> copies;
  for (int64_t v : {10, 20, 30, 40}) AddVersion(copies, "heat", v);
  copies.push_back(Copy("heat", 35, 0, 0, CopyState::kIncomplete));  // between kept ones
  copies.push_back(Copy("heat", 5, 1, 0, CopyState::kIncomplete));   // older
  copies.push_back(Copy("heat", 50, 0, 2));  // newer, not recoverable: left alone
  AddVersion(copies, "other", 7);
  auto plan = PlanPrune(copies, 2, "");
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan["heat"].keep, (std::vector<int64_t>{40, 30}));
  EXPECT_EQ(plan["heat"].remove, (std::set<int64_t>{5, 10, 20, 35}));
  EXPECT_EQ(plan["other"].keep, (std::vector<int64_t>{7}));
  EXPECT_TRUE(plan["other"].remove.empty());
}

TEST(PlanPruneTest, OnlyTheNamedCheckpointAndNothingWithoutARecoverableVersion) {
  std::vector<CopyInfo> copies;
  AddVersion(copies, "heat", 10);
  AddVersion(copies, "heat", 20);
  copies.push_back(Copy("broken", 1, 0, 2));
  copies.push_back(Copy("broken", 2, 0, 0, CopyState::kIncomplete));
  auto plan = PlanPrune(copies, 1, "broken");
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_TRUE(plan["broken"].keep.empty());
  EXPECT_TRUE(plan["broken"].remove.empty());
  EXPECT_EQ(PlanPrune(copies, 1, "heat")["heat"].remove, (std::set<int64_t>{10}));
  EXPECT_TRUE(PlanPrune(copies, 1, "absent").empty());
}

class RemovalTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    config_.dir = "/data";
    config_.tier(TierKind::kMemory).path = "/shm/{node}";
    config_.tier(TierKind::kSsd).path = "{dir}/ssd/{node}";
    config_.tier(TierKind::kPfs).enabled = false;
  }
  // Writes rank 0's part and manifest of (name, version) on node's tier.
  void Store(TierKind kind, int node, const std::string& name, int64_t version) {
    auto root = ExpandTierPath(env_.get(), config_.tier(kind).path, config_.dir,
                               std::to_string(node));
    ASSERT_TRUE(root.ok());
    Tier tier(env_.get(), kind, *root, TierConfig{});
    ASSERT_TRUE(tier.PutFile(name, version, PartFileName(0), "part bytes").ok());
    ASSERT_TRUE(tier.PutFile(name, version, ManifestFileName(0), "manifest").ok());
  }
  void Park(const std::string& root) {
    ASSERT_TRUE(env_->CreateDirs(root + "/.free").ok());
    ASSERT_TRUE(env_->WriteFileAtomic(root + "/.free/r000000.slot1.0", "slot", 4, false).ok());
  }
  std::unique_ptr<Env> env_;
  Config config_;
};

TEST_F(RemovalTargetTest, DeleteFindsEveryVersionOnEveryNodeAndSlotsOfEmptiedTiers) {
  Store(TierKind::kMemory, 0, "heat", 10);
  Store(TierKind::kMemory, 1, "heat", 10);
  Store(TierKind::kMemory, 1, "other", 3);
  Store(TierKind::kSsd, 0, "heat", 20);
  Park("/shm/0");
  Park("/shm/1");  // "other" still uses node 1's memory tier: its slots stay
  auto targets = FindRemovalTargets(env_.get(), config_, "heat", [](int64_t) { return true; },
                                    /*with_slots=*/true);
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  std::vector<std::string> dirs;
  for (const auto& t : *targets) dirs.push_back(t.dir);
  EXPECT_EQ(dirs, (std::vector<std::string>{"/shm/0/heat/v0000000010", "/shm/0/.free",
                                            "/shm/1/heat/v0000000010",
                                            "/data/ssd/0/heat/v0000000020"}));
  EXPECT_EQ((*targets)[0].bytes, 18u);
  EXPECT_EQ((*targets)[0].files, 2);
  for (const auto& t : *targets) ASSERT_TRUE(RemoveTarget(env_.get(), t).ok()) << t.dir;
  EXPECT_FALSE(env_->FileExists("/shm/0/heat"));
  EXPECT_FALSE(env_->FileExists("/shm/0/.free"));
  EXPECT_FALSE(env_->FileExists("/shm/1/heat"));
  EXPECT_TRUE(env_->FileExists("/shm/1/.free/r000000.slot1.0"));
  EXPECT_TRUE(env_->FileExists("/shm/1/other/v0000000003/r000000.part"));
  EXPECT_FALSE(env_->FileExists("/data/ssd/0/heat"));
}

TEST_F(RemovalTargetTest, PruneSelectsVersionsAndLeavesTheRest) {
  for (int64_t v : {10, 20, 30}) Store(TierKind::kSsd, 0, "heat", v);
  auto targets = FindRemovalTargets(env_.get(), config_, "heat",
                                    [](int64_t v) { return v < 30; }, /*with_slots=*/false);
  ASSERT_TRUE(targets.ok());
  ASSERT_EQ(targets->size(), 2u);
  for (const auto& t : *targets) ASSERT_TRUE(RemoveTarget(env_.get(), t).ok());
  Tier ssd(env_.get(), TierKind::kSsd, "/data/ssd/0", TierConfig{});
  EXPECT_EQ(*ssd.Versions("heat"), (std::vector<int64_t>{30}));
}

}  // namespace
}  // namespace cairn
