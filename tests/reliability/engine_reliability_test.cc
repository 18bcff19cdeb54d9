// Regression tests for what adversarial testing found in the checkpoint
// pipeline (issue 10 items 3, 5, 6 and 7): each scenario runs whole jobs of
// several ranks (threads over ThreadComm) on real files, and asserts what a
// user would see: which version a restart finds, what it restores, what
// the tiers hold, and that cairn_checkpoint_wait does not fail a job whose
// newest version is safe.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/clock.h"
#include "env/env.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"
#include "tests/reliability/thread_job.h"
#include "tests/test_support.h"

namespace cairn {
namespace {

using cairn_test::FillVersion;
using cairn_test::HoldsVersion;

constexpr size_t kWords = 64 * 1024;  // 512 KiB per rank

// One job of `ranks` ranks, two per node (tests/reliability/thread_job.h).
void RunJob(int ranks, Env* env, const Config& config,
            const std::function<void(int, Engine&, std::vector<uint64_t>&)>& body) {
  cairn_test::RunThreadJob(ranks, 2, kWords, env, config, body);
}

// State of version v on rank r: differs per rank and per version.
int64_t Seed(int rank, int64_t v) { return v * 1000 + rank; }

void CheckpointVersions(Engine& e, std::vector<uint64_t>& state, int rank,
                        std::initializer_list<int64_t> versions) {
  for (int64_t v : versions) {
    FillVersion(state, Seed(rank, v));
    Status s = e.Checkpoint("job", v);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

std::vector<int64_t> VersionsOn(Env* env, const Config& config, TierKind kind, int node) {
  auto tier = OpenNodeTier(env, config, kind, node);
  if (!tier.ok() || !*tier) return {};
  auto versions = (*tier)->Versions("job");
  return versions.ok() ? *versions : std::vector<int64_t>{};
}

// The versions of which `rank` holds a file on `node`'s tier.
std::vector<int64_t> RankVersionsOn(Env* env, const Config& config, TierKind kind, int node,
                                    int rank) {
  auto tier = OpenNodeTier(env, config, kind, node);
  if (!tier.ok() || !*tier) return {};
  std::vector<int64_t> held;
  for (int64_t v : VersionsOn(env, config, kind, node)) {
    auto files = (*tier)->Files("job", v);
    if (!files.ok()) continue;  // removed meanwhile
    for (const std::string& f : *files) {
      if (ParseRankFilePrefix(f) == rank) {
        held.push_back(v);
        break;
      }
    }
  }
  return held;
}

class ReliabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = cairn_test::ThreeTierConfig(dir_.path());
    config_.ranks_per_node = 2;
  }
  cairn_test::TempDir dir_;
  Config config_;
  Env* env_ = PosixEnv();
};

// Item 3: a 2-rank job in the directory of an earlier 4-rank job with higher
// versions. Its restart test names the mismatch; its own checkpoints are
// never deleted by the older job's higher versions; both jobs can restart
// from their own newest version afterwards.
TEST_F(ReliabilityTest, AJobOfAnotherSizeInTheSameDirectoryKeepsItsCheckpoints) {
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    CheckpointVersions(e, s, r, {70, 80, 90, 100});
    ASSERT_TRUE(e.Wait().ok());
  });
  RunJob(2, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    auto v = e.RestartTest("job", -1);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), Code::kMismatch);
    EXPECT_NE(v.status().message().find("4 ranks"), std::string::npos) << v.status().ToString();
    EXPECT_NE(v.status().message().find("2 ranks"), std::string::npos) << v.status().ToString();
    CheckpointVersions(e, s, r, {10, 20, 30});
    ASSERT_TRUE(e.Wait().ok());
  });
  RunJob(2, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    auto v = e.RestartTest("job", -1);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, 30);
    auto restored = e.Restart("job", *v);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_TRUE(HoldsVersion(s, Seed(r, 30)));
  });
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    auto restored = e.Restart("job", 1000);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(restored->version, 100);
    EXPECT_TRUE(HoldsVersion(s, Seed(r, 100)));
  });
}

// Item 3: a job that rolls back on purpose (restart at <= 20 although 40 and
// 50 exist) and goes on: its new versions are what the next restart finds,
// never the abandoned 40 and 50, and never a mix of both runs' copies of a
// version number they share.
TEST_F(ReliabilityTest, ARollbackOnPurposeMakesTheNewTimelineTheNewest) {
  config_.keep = 10;  // 20 is still there to roll back to
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    CheckpointVersions(e, s, r, {10, 20, 30, 40, 50});
    ASSERT_TRUE(e.Wait().ok());
  });
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    auto restored = e.Restart("job", 20);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(restored->version, 20);
    // The new timeline's 30 differs from the old one's.
    FillVersion(s, Seed(r, 30) + 7);
    ASSERT_TRUE(e.Checkpoint("job", 30).ok());
    ASSERT_TRUE(e.Wait().ok());
  });
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    auto v = e.RestartTest("job", -1);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, 30);
    auto restored = e.Restart("job", *v);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_TRUE(HoldsVersion(s, Seed(r, 30) + 7)) << "rank " << r << " got the old timeline";
  });
  for (TierKind kind : {TierKind::kMemory, TierKind::kSsd, TierKind::kPfs}) {
    for (int64_t v : VersionsOn(env_, config_, kind, 0)) {
      EXPECT_LE(v, 30) << TierKindName(kind) << " still holds abandoned version " << v;
    }
  }
}

// Item 5: force_ssd_every with the default policy commits every other
// version on the SSD while memory versions drain there: the drains' copies
// are pinned, so none fails and every wait succeeds.
TEST_F(ReliabilityTest, ForcedSsdVersionsDoNotDeleteADrainInProgress) {
  config_.placement.force_ssd_every = 2;
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    for (int64_t v = 1; v <= 12; ++v) CheckpointVersions(e, s, r, {v});
    ASSERT_TRUE(e.Wait().ok());
    EXPECT_EQ(e.last_wait().failed, 0) << e.last_wait().last_failure;
  });
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    auto restored = e.Restart("job", 12);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(restored->version, 12);
    EXPECT_TRUE(HoldsVersion(s, Seed(r, 12)));
  });
}

// Item 6: an SSD tier with room for about two versions. Its drains make
// room by deleting older versions, the newest version reaches it, and the
// wait never fails the job.
TEST_F(ReliabilityTest, AFullSsdTierMakesRoomForTheNewestVersion) {
  config_.tier(TierKind::kSsd).capacity = 5 * kWords * sizeof(uint64_t);  // per node: 2 ranks
  config_.tier(TierKind::kPfs).enabled = false;
  RunJob(4, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    for (int64_t v = 1; v <= 6; ++v) {
      CheckpointVersions(e, s, r, {v});
      ASSERT_TRUE(e.Wait().ok());  // each drain runs alone: none is superseded
    }
  });
  for (int node = 0; node < 2; ++node) {
    std::vector<int64_t> held = VersionsOn(env_, config_, TierKind::kSsd, node);
    ASSERT_FALSE(held.empty());
    EXPECT_EQ(held.back(), 6) << "node " << node;
  }
}

// Item 6: a memory tier too small for one version sends it straight to the
// SSD, and the report says why.
TEST_F(ReliabilityTest, AFullMemoryTierSendsTheVersionStraightToTheSsd) {
  config_.tier(TierKind::kMemory).capacity = kWords;  // an eighth of one rank's part
  RunJob(2, env_, config_, [](int r, Engine& e, std::vector<uint64_t>& s) {
    CheckpointVersions(e, s, r, {1});
    EXPECT_EQ(e.last_checkpoint().tier, TierKind::kSsd);
    EXPECT_NE(e.last_checkpoint().reason.find("full"), std::string::npos)
        << e.last_checkpoint().reason;
  });
}

// Item 7: an SSD that takes far longer than the checkpoint interval. Queued
// drains beyond the target's `keep` newest are superseded, so a rank's
// memory tier never holds more than keep + the version being drained + one
// whose drain ended after the call's retention, and the lower tiers end
// with the newest version. Per rank: each rank's flusher drains its own
// part, so the ranks may be draining different versions.
class SlowSsdEnv final : public EnvWrapper {
 public:
  SlowSsdEnv(Env* base, std::string ssd) : EnvWrapper(base), ssd_(std::move(ssd)) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        const WriteOptions& options) override {
    if (path.compare(0, ssd_.size(), ssd_) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(40));  // a slow device, not a sync
    }
    return EnvWrapper::NewWritableFile(path, options);
  }

 private:
  std::string ssd_;
};

TEST_F(ReliabilityTest, DrainsDoNotFallBehindWithoutBound) {
  SlowSsdEnv slow(env_, dir_.path() + "/ssd");
  int superseded = 0;
  std::mutex mu;
  RunJob(2, &slow, config_, [&](int r, Engine& e, std::vector<uint64_t>& s) {
    for (int64_t v = 1; v <= 20; ++v) {
      CheckpointVersions(e, s, r, {v});
      std::vector<int64_t> in_memory = RankVersionsOn(&slow, config_, TierKind::kMemory, 0, r);
      EXPECT_LE(in_memory.size(), 4u) << "rank " << r << " after version " << v;
    }
    ASSERT_TRUE(e.Wait().ok());
    std::lock_guard<std::mutex> lock(mu);
    superseded += e.last_wait().superseded;
  });
  EXPECT_GT(superseded, 0);
  EXPECT_EQ(VersionsOn(env_, config_, TierKind::kSsd, 0).back(), 20);
  EXPECT_EQ(VersionsOn(env_, config_, TierKind::kPfs, 0).back(), 20);
}

// Item 7: a job killed during its final drain leaves its newest version in
// memory only; the next run drains it (before the application does
// anything), so it reaches the lower tiers.
TEST_F(ReliabilityTest, TheNextRunFinishesAnAbandonedDrain) {
  Config memory_only = config_;
  memory_only.tier(TierKind::kSsd).enabled = false;
  memory_only.tier(TierKind::kPfs).enabled = false;
  RunJob(2, env_, memory_only, [](int r, Engine& e, std::vector<uint64_t>& s) {
    CheckpointVersions(e, s, r, {5});
  });
  EXPECT_TRUE(VersionsOn(env_, config_, TierKind::kSsd, 0).empty());
  RunJob(2, env_, config_, [](int, Engine& e, std::vector<uint64_t>&) {
    ASSERT_TRUE(e.Wait().ok());
  });
  EXPECT_EQ(VersionsOn(env_, config_, TierKind::kSsd, 0), std::vector<int64_t>{5});
  EXPECT_EQ(VersionsOn(env_, config_, TierKind::kPfs, 0), std::vector<int64_t>{5});
}

}  // namespace
}  // namespace cairn
