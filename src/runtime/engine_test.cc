#include "runtime/engine.h"

#include <atomic>
#include <cstring>
#include <future>
#include <map>
#include <numeric>

#include <gtest/gtest.h>

#include "env/fault_env.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/ecc_sidecar.h"

namespace cairn {
namespace {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = NewMemEnv();
    env_ = std::make_unique<FaultEnv>(mem_.get());
    config_.dir = "/data";
    config_.tier(TierKind::kMemory).path = "/shm/{node}";
    config_.tier(TierKind::kMemory).capacity = 0;
    // Most tests restart from memory copies after a finalize, as a job
    // restarted on surviving nodes would after a crash.
    config_.tier(TierKind::kMemory).keep_at_finalize = true;
    config_.tier(TierKind::kSsd).path = "{dir}/ssd/{node}";
    config_.tier(TierKind::kPfs).path = "{dir}/pfs";
    config_.log_level = "off";
    grid_.resize(50000);
    std::iota(grid_.begin(), grid_.end(), 0.5);
  }

  // Through `env` when given (it must outlive the engine), else env_.
  std::unique_ptr<Engine> Open(Env* env = nullptr) {
    auto engine = Engine::Create(NewSingleComm(), config_, env ? env : env_.get(), &clock_);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    return std::move(engine).value();
  }

  void ProtectState(Engine& e) {
    ASSERT_TRUE(e.Protect(0, grid_.data(), grid_.size(), sizeof(double)).ok());
    ASSERT_TRUE(e.Protect(1, &step_, 1, sizeof(step_)).ok());
  }

  Tier& TierOf(TierKind kind) {
    tiers_.push_back(std::move(OpenNodeTier(env_.get(), config_, kind, 0)).value());
    return *tiers_.back();
  }

  std::unique_ptr<Env> mem_;
  std::unique_ptr<FaultEnv> env_;
  FakeClock clock_;
  Config config_;
  std::vector<double> grid_;
  int64_t step_ = 0;
  std::vector<std::unique_ptr<Tier>> tiers_;
};

// pfs every 4th checkpoint: versions 1..6 put 4 there; at finalize
// finalize_newest adds 6 (the newest, skipped), and without it the pfs
// keeps 4 only.
TEST_F(EngineTest, FinalizeDrainsTheNewestVersionEverySkipped) {
  config_.tier(TierKind::kPfs).every = 4;
  config_.tier(TierKind::kPfs).keep = 10;
  for (bool finalize_newest : {false, true}) {
    config_.tier(TierKind::kPfs).finalize_newest = finalize_newest;
    const std::string name = finalize_newest ? "with" : "without";
    {
      auto e = Open();
      ProtectState(*e);
      for (step_ = 1; step_ <= 6; ++step_) ASSERT_TRUE(e->Checkpoint(name, step_).ok());
      ASSERT_TRUE(e->Finalize().ok());
    }
    auto on_pfs = TierOf(TierKind::kPfs).Versions(name);
    ASSERT_TRUE(on_pfs.ok());
    EXPECT_EQ(*on_pfs, finalize_newest ? (std::vector<int64_t>{4, 6}) : (std::vector<int64_t>{4}))
        << name;
  }
}

TEST_F(EngineTest, CheckpointDrainsAndRestartsBitExact) {
  std::vector<double> saved;
  {
    auto e = Open();
    ProtectState(*e);
    for (step_ = 1; step_ <= 3; ++step_) {
      grid_[7] = static_cast<double>(step_);
      Status s = e->Checkpoint("heat", step_ * 10);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    saved = grid_;
    Status waited = e->Wait();
    ASSERT_TRUE(waited.ok()) << waited.ToString();
    ASSERT_TRUE(e->Finalize().ok());
  }
  EXPECT_EQ(*TierOf(TierKind::kMemory).Versions("heat"), (std::vector<int64_t>{20, 30}));
  // Drains that had not started when a newer version committed were
  // superseded (which ones depends on the timing): the lower tiers hold the
  // newest version and at most `keep`.
  for (TierKind kind : {TierKind::kSsd, TierKind::kPfs}) {
    std::vector<int64_t> held = *TierOf(kind).Versions("heat");
    ASSERT_FALSE(held.empty()) << TierKindName(kind);
    EXPECT_EQ(held.back(), 30) << TierKindName(kind);
    EXPECT_LE(held.size(), 2u) << TierKindName(kind);
  }

  std::fill(grid_.begin(), grid_.end(), 0.0);
  step_ = -1;
  auto e = Open();
  ProtectState(*e);
  ASSERT_EQ(*e->RestartTest("heat", -1), 30);
  EXPECT_EQ(*e->RestartTest("heat", 25), 20);
  auto report = e->Restart("heat", 30);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->version, 30);
  EXPECT_EQ(report->tier, "memory");
  EXPECT_EQ(report->newest, 30);
  EXPECT_EQ(report->rollback_versions, 0);
  EXPECT_EQ(report->rollback_seconds, 0.0);
  EXPECT_EQ(step_, 3);
  EXPECT_EQ(grid_, saved);
}

TEST_F(EngineTest, CorruptMemoryCopyFallsBackToSsd) {
  {
    auto e = Open();
    ProtectState(*e);
    step_ = 5;
    ASSERT_TRUE(e->Checkpoint("heat", 5).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  std::vector<double> saved = grid_;
  std::string part = TierOf(TierKind::kMemory).FilePath("heat", 5, PartFileName(0));
  {
    auto map = env_->MapFile(part, *env_->FileSize(part), true);
    ASSERT_TRUE(map.ok());
    (*map)->data()[(*map)->size() / 2] ^= 0x40;  // one flipped bit in the grid
  }
  std::fill(grid_.begin(), grid_.end(), 0.0);
  auto e = Open();
  ProtectState(*e);
  auto report = e->Restart("heat", 5);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->tier, "ssd");
  EXPECT_EQ(grid_, saved);
}

// Version 0 damaged on every tier, and nothing older: the restart ends
// with the damage as its cause (it used to start over from the newest
// version, forever, taking "below version 0" for "the newest").
TEST_F(EngineTest, ADamagedVersionZeroEndsTheRestartWithItsCause) {
  {
    auto e = Open();
    ProtectState(*e);
    ASSERT_TRUE(e->Checkpoint("heat", 0).ok());
    ASSERT_TRUE(e->Wait().ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  for (TierKind k : {TierKind::kMemory, TierKind::kSsd, TierKind::kPfs}) {
    std::string part = TierOf(k).FilePath("heat", 0, PartFileName(0));
    auto map = env_->MapFile(part, *env_->FileSize(part), true);
    ASSERT_TRUE(map.ok()) << TierKindName(k);
    (*map)->data()[(*map)->size() - 3] ^= 1;
  }
  auto e = Open();
  ProtectState(*e);
  auto report = e->Restart("heat", 0);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kCorrupt) << report.status().ToString();
  EXPECT_NE(report.status().message().find("CRC32C"), std::string::npos)
      << report.status().ToString();
}

TEST_F(EngineTest, DamagedNewestVersionRollsBack) {
  std::vector<double> at10;
  {
    auto e = Open();
    ProtectState(*e);
    step_ = 10;
    ASSERT_TRUE(e->Checkpoint("heat", 10).ok());
    at10 = grid_;
    grid_[0] = -1;
    clock_.Advance(42.5);
    ASSERT_TRUE(e->Checkpoint("heat", 20).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  for (TierKind k : {TierKind::kMemory, TierKind::kSsd, TierKind::kPfs}) {
    Tier& t = TierOf(k);
    std::string part = t.FilePath("heat", 20, PartFileName(0));
    auto map = env_->MapFile(part, *env_->FileSize(part), true);
    ASSERT_TRUE(map.ok());
    (*map)->data()[(*map)->size() - 3] ^= 1;
  }
  auto e = Open();
  ProtectState(*e);
  auto report = e->Restart("heat", 20);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->version, 10);
  EXPECT_EQ(report->versions_failed, 1) << "20 was agreed on, then failed its CRCs";
  EXPECT_EQ(report->newest, 20);
  EXPECT_EQ(report->rollback_versions, 10);
  EXPECT_DOUBLE_EQ(report->rollback_seconds, 42.5);
  EXPECT_EQ(grid_, at10);
  EXPECT_EQ(step_, 10);
}

TEST_F(EngineTest, VersionNoRankCanRecoverCountsInTheRollback) {
  {
    auto e = Open();
    ProtectState(*e);
    ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
    clock_.Advance(7);
    ASSERT_TRUE(e->Checkpoint("heat", 2).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  // Version 2's parts are all truncated: its copies are incomplete, so the
  // agreement skips it without trying to restore it.
  for (TierKind k : {TierKind::kMemory, TierKind::kSsd, TierKind::kPfs}) {
    std::string part = TierOf(k).FilePath("heat", 2, PartFileName(0));
    ASSERT_TRUE(env_->MapFile(part, 1000, true).ok());
  }
  auto e = Open();
  ProtectState(*e);
  auto report = e->Restart("heat", 2);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->version, 1);
  EXPECT_EQ(report->versions_failed, 0);
  EXPECT_EQ(report->newest, 2);
  EXPECT_EQ(report->rollback_versions, 1);
  EXPECT_DOUBLE_EQ(report->rollback_seconds, 7.0);
}

TEST_F(EngineTest, RestartOfAnOlderVersionReportsTheNewest) {
  auto e = Open();
  ProtectState(*e);
  step_ = 1;
  ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
  clock_.Advance(3);
  step_ = 2;
  ASSERT_TRUE(e->Checkpoint("heat", 2).ok());
  auto report = e->Restart("heat", 1);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(step_, 1);
  EXPECT_EQ(report->newest, 2);
  EXPECT_EQ(report->rollback_versions, 1);
  EXPECT_DOUBLE_EQ(report->rollback_seconds, 3.0);
}

// The only copy of the version is a memory-tier part cut short, with an ECC
// sidecar: it must count as recoverable and be rebuilt bit-exact.
TEST_F(EngineTest, TruncatedOnlyMemoryCopyIsRepairedFromItsSidecar) {
  for (EccMode mode : {EccMode::kNormal, EccMode::kStrong}) {
    SCOPED_TRACE(mode == EccMode::kNormal ? "ecc = normal" : "ecc = strong");
    config_.tier(TierKind::kMemory).ecc = mode;
    const std::string name = mode == EccMode::kNormal ? "normal" : "strong";
    std::iota(grid_.begin(), grid_.end(), mode == EccMode::kNormal ? 3.25 : -8.5);
    step_ = 77;
    {
      auto e = Open();
      ProtectState(*e);
      ASSERT_TRUE(e->Checkpoint(name, 4).ok());
      ASSERT_TRUE(e->Finalize().ok());
    }
    for (TierKind k : {TierKind::kSsd, TierKind::kPfs}) {
      ASSERT_TRUE(env_->DeleteRecursive(TierOf(k).VersionDir(name, 4)).ok());
    }
    std::vector<double> saved = grid_;
    std::string part = TierOf(TierKind::kMemory).FilePath(name, 4, PartFileName(0));
    uint64_t size = *env_->FileSize(part);
    // The last shard (kEccShardSize bytes) of the grid, and the step after it.
    ASSERT_TRUE(env_->MapFile(part, size - 5000, true).ok());
    std::fill(grid_.begin(), grid_.end(), 0.0);
    step_ = -1;
    auto e = Open();
    ProtectState(*e);
    EXPECT_EQ(*e->RestartTest(name, -1), 4);
    auto report = e->Restart(name, 4);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->version, 4);
    EXPECT_EQ(report->tier, "memory");
    EXPECT_EQ(report->rollback_versions, 0);
    EXPECT_GT(e->ecc_shards_corrected(), 0u);
    EXPECT_EQ(report->ecc_shards_corrected, e->ecc_shards_corrected());
    EXPECT_EQ(step_, 77);
    EXPECT_EQ(grid_, saved);
  }
}

// The sidecar is encoded after the commit, on the flusher thread; Wait
// covers it. Then the memory manifest lists it with the time, the drained
// copies have neither, and it repairs a damaged shard.
TEST_F(EngineTest, EccSidecarIsEncodedAfterTheCommitAndListedWithItsTime) {
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "ecc_sync" : "background");
    config_.tier(TierKind::kMemory).ecc = EccMode::kNormal;
    config_.tier(TierKind::kMemory).ecc_sync = sync;
    const std::string name = sync ? "sync" : "background";
    std::iota(grid_.begin(), grid_.end(), sync ? 1.75 : -2.5);
    step_ = 5;
    std::vector<double> saved = grid_;
    {
      auto e = Open();
      ProtectState(*e);
      ASSERT_TRUE(e->Checkpoint(name, 3).ok());
      if (sync) {
        EXPECT_EQ(e->last_checkpoint().ecc_protected_after, 0.0);
      }
      ASSERT_TRUE(e->Wait().ok());
      EXPECT_GE(e->last_checkpoint().ecc_protected_after, 0.0);
      EXPECT_EQ(e->last_wait().ecc_encoded, sync ? 0 : 1);  // background encodes only
      ASSERT_TRUE(e->Finalize().ok());
    }
    auto mem = CheckCopy(TierOf(TierKind::kMemory), name, 3, 0, 1);
    ASSERT_TRUE(mem.ok()) << mem.status().ToString();
    ASSERT_NE(FindParityEntry(*mem), nullptr);
    EXPECT_GE(mem->ecc_protected, mem->created);
    for (TierKind k : {TierKind::kSsd, TierKind::kPfs}) {
      auto below = CheckCopy(TierOf(k), name, 3, 0, 1);
      ASSERT_TRUE(below.ok()) << below.status().ToString();
      EXPECT_EQ(FindParityEntry(*below), nullptr);
      EXPECT_EQ(below->ecc_protected, 0.0);
      ASSERT_TRUE(env_->DeleteRecursive(TierOf(k).VersionDir(name, 3)).ok());
    }
    // One byte of the grid's first page flipped: one shard to correct.
    std::string part = TierOf(TierKind::kMemory).FilePath(name, 3, PartFileName(0));
    auto mapped = env_->MapFile(part, *env_->FileSize(part), true);
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    (*mapped)->data()[(*mapped)->size() / 2] ^= 0x40;
    mapped->reset();
    std::fill(grid_.begin(), grid_.end(), 0.0);
    // Memory only: no drain resumed at start repairs (and counts) the part
    // while the restart does.
    Config restart_config = config_;
    restart_config.tier(TierKind::kSsd).enabled = false;
    restart_config.tier(TierKind::kPfs).enabled = false;
    auto opened = Engine::Create(NewSingleComm(), restart_config, env_.get(), &clock_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto& e = *opened;
    ProtectState(*e);
    auto report = e->Restart(name, 3);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->tier, "memory");
    EXPECT_EQ(report->ecc_shards_corrected, 1u);
    EXPECT_EQ(grid_, saved);
  }
}

TEST_F(EngineTest, CopiesWithoutSidecarReportNoEccProtection) {
  auto e = Open();
  ProtectState(*e);
  ASSERT_TRUE(e->Checkpoint("plain", 1).ok());
  ASSERT_TRUE(e->Wait().ok());
  EXPECT_EQ(e->last_checkpoint().ecc_protected_after, -1.0);
  auto mem = CheckCopy(TierOf(TierKind::kMemory), "plain", 1, 0, 1);
  ASSERT_TRUE(mem.ok());
  EXPECT_EQ(mem->ecc_protected, 0.0);
}

TEST_F(EngineTest, TruncatedMemoryCopyWithOtherRegionsIsAMismatch) {
  config_.tier(TierKind::kMemory).ecc = EccMode::kNormal;
  {
    auto e = Open();
    ProtectState(*e);
    ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  for (TierKind k : {TierKind::kSsd, TierKind::kPfs}) {
    ASSERT_TRUE(env_->DeleteRecursive(TierOf(k).VersionDir("heat", 1)).ok());
  }
  std::string part = TierOf(TierKind::kMemory).FilePath("heat", 1, PartFileName(0));
  ASSERT_TRUE(env_->MapFile(part, *env_->FileSize(part) - 100, true).ok());
  auto e = Open();
  std::vector<double> smaller(100, 42.0);
  ASSERT_TRUE(e->Protect(0, smaller.data(), smaller.size(), sizeof(double)).ok());
  ASSERT_TRUE(e->Protect(1, &step_, 1, sizeof(step_)).ok());
  auto report = e->Restart("heat", 1);
  EXPECT_EQ(report.status().code(), Code::kMismatch) << report.status().ToString();
  EXPECT_EQ(smaller, std::vector<double>(100, 42.0));
}

TEST_F(EngineTest, MismatchLeavesMemoryUntouched) {
  {
    auto e = Open();
    ProtectState(*e);
    ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  auto e = Open();
  std::vector<double> smaller(100, 42.0);
  ASSERT_TRUE(e->Protect(0, smaller.data(), smaller.size(), sizeof(double)).ok());
  ASSERT_TRUE(e->Protect(1, &step_, 1, sizeof(step_)).ok());
  auto report = e->Restart("heat", 1);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), Code::kMismatch);
  EXPECT_NE(report.status().message().find("region 0"), std::string::npos)
      << report.status().message();
  EXPECT_EQ(smaller, std::vector<double>(100, 42.0));
  ASSERT_TRUE(e->Unprotect(1).ok());
  e->Protect(0, grid_.data(), grid_.size(), sizeof(double)).ok();
  EXPECT_EQ(e->Restart("heat", 1).status().code(), Code::kMismatch) << "region count differs";
}

TEST_F(EngineTest, RoutedFilesAreSavedAndRestored) {
  {
    auto e = Open();
    ProtectState(*e);
    auto path = e->RouteFile("particles.dat");
    ASSERT_TRUE(path.ok());
    ASSERT_TRUE(env_->WriteFileAtomic(*path, "particle state", 14, false).ok());
    ASSERT_TRUE(e->Checkpoint("sim", 3).ok());
    EXPECT_FALSE(env_->FileExists(*path)) << "staged file is part of version 3 now";
    ASSERT_TRUE(e->Finalize().ok());
  }
  auto e = Open();
  ProtectState(*e);
  ASSERT_TRUE(e->Restart("sim", 3).ok());
  auto path = e->RouteFile("particles.dat");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*env_->ReadFileToString(*path), "particle state");
}

TEST_F(EngineTest, FullMemoryTierFallsBackToSsd) {
  config_.tier(TierKind::kMemory).capacity = 100000;  // smaller than the grid
  auto e = Open();
  ProtectState(*e);
  ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
  EXPECT_TRUE(TierOf(TierKind::kMemory).Versions("heat")->empty());
  EXPECT_EQ(*TierOf(TierKind::kSsd).Versions("heat"), std::vector<int64_t>{1});
}

TEST_F(EngineTest, IoErrorFailsCheckpointAndKeepsOlderVersion) {
  config_.tier(TierKind::kSsd).enabled = false;
  config_.tier(TierKind::kPfs).enabled = false;
  auto e = Open();
  ProtectState(*e);
  ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
  env_->FailAt(env_->operations() + 3, Code::kIo);
  Status s = e->Checkpoint("heat", 2);
  env_->ClearFaults();
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_NE(s.message().find("injected"), std::string::npos) << s.message();
  EXPECT_EQ(*e->RestartTest("heat", -1), 1);
  EXPECT_TRUE(e->Restart("heat", 1).ok());
}

TEST_F(EngineTest, BadArgumentsAreRejected) {
  auto e = Open();
  EXPECT_EQ(e->Protect(0, nullptr, 1, 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(e->Protect(0, grid_.data(), 0, 8).code(), Code::kInvalidArgument);
  EXPECT_EQ(e->Protect(-1, grid_.data(), 1, 8).code(), Code::kInvalidArgument);
  EXPECT_EQ(e->Unprotect(9).code(), Code::kNotFound);
  EXPECT_EQ(e->Checkpoint("../x", 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(e->Checkpoint(std::string(10000, 'a'), 1).code(), Code::kInvalidArgument);
  EXPECT_EQ(e->Checkpoint("ok", -1).code(), Code::kInvalidArgument);
  EXPECT_EQ(e->RouteFile("a/b").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(*e->RestartTest("never-written", -1), -1);
  EXPECT_EQ(e->Restart("never-written", 3).status().code(), Code::kNotFound);
}

// Holds the first drain into the ssd tier at its version directory until
// released, so that the checkpoints after it queue their drains behind it.
class HeldDrainEnv final : public EnvWrapper {
 public:
  explicit HeldDrainEnv(Env* target) : EnvWrapper(target) {}
  Status CreateDirs(const std::string& path) override {
    if (path.rfind("/data/ssd/", 0) == 0 && path.find("/heat/v") != std::string::npos &&
        !held_once_.exchange(true)) {
      held.set_value();
      released_.wait();
    }
    return EnvWrapper::CreateDirs(path);
  }
  void Release() { release_.set_value(); }
  std::promise<void> held;

 private:
  std::atomic<bool> held_once_{false};
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
};

// A rollback while the higher version's drains are held or queued: 50
// commits, then 30 while 50's drain into the ssd tier is held. Once the
// drains finish, no tier holds 50, and a restart takes 30 (it took 50,
// which the application had abandoned, when the drains' pins kept 50 from
// the rollback's retention).
TEST_F(EngineTest, ARollbackDropsTheAbandonedVersionAlsoWhileItDrains) {
  HeldDrainEnv held_env(env_.get());
  auto opened = Open(&held_env);
  ASSERT_NE(opened, nullptr);
  Engine& e = *opened;
  ProtectState(e);
  grid_[5] = 50.0;
  ASSERT_TRUE(e.Checkpoint("heat", 50).ok());
  held_env.held.get_future().wait();
  grid_[5] = 30.0;
  const std::vector<double> saved = grid_;
  ASSERT_TRUE(e.Checkpoint("heat", 30).ok());
  held_env.Release();
  ASSERT_TRUE(e.Wait().ok());
  ASSERT_TRUE(e.Finalize().ok());
  for (TierKind kind : {TierKind::kMemory, TierKind::kSsd, TierKind::kPfs}) {
    EXPECT_EQ(*TierOf(kind).Versions("heat"), std::vector<int64_t>{30}) << TierKindName(kind);
  }
  auto reopened = Open();
  ProtectState(*reopened);
  EXPECT_EQ(*reopened->RestartTest("heat", -1), 30);
  std::fill(grid_.begin(), grid_.end(), 0.0);
  auto report = reopened->Restart("heat", 30);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->version, 30);
  EXPECT_EQ(grid_, saved);
}

// Versions 20, 30 and 40 commit while the drain of 10 is held: the ssd
// tier keeps 2, so 30 and 40 reach it and only 20 is superseded, although
// the memory tier (keep 1) holds none of them but 40 by the end.
TEST_F(EngineTest, QueuedDrainsAreSupersededOnlyBeyondTheTargetsKeep) {
  config_.placement.policy = PlacementPolicy::kMemory;
  config_.tier(TierKind::kMemory).keep = 1;
  config_.tier(TierKind::kSsd).keep = 2;
  config_.tier(TierKind::kPfs).enabled = false;
  HeldDrainEnv held_env(env_.get());
  auto opened = Open(&held_env);
  ASSERT_NE(opened, nullptr);
  Engine& e = *opened;
  ProtectState(e);
  std::map<int64_t, std::vector<double>> saved;
  for (step_ = 1; step_ <= 4; ++step_) {
    grid_[5] = static_cast<double>(step_);
    ASSERT_TRUE(e.Checkpoint("heat", step_ * 10).ok());
    saved[step_ * 10] = grid_;
    if (step_ == 1) held_env.held.get_future().wait();
  }
  held_env.Release();
  ASSERT_TRUE(e.Wait().ok());
  EXPECT_EQ(e.last_wait().superseded, 1);
  ASSERT_TRUE(e.Finalize().ok());
  EXPECT_EQ(*TierOf(TierKind::kSsd).Versions("heat"), (std::vector<int64_t>{30, 40}));
  EXPECT_EQ(*TierOf(TierKind::kMemory).Versions("heat"), std::vector<int64_t>{40});

  // A restart that must not take 40 finds 30, not 10.
  auto reopened = Open();
  ProtectState(*reopened);
  EXPECT_EQ(*reopened->RestartTest("heat", 39), 30);
  std::fill(grid_.begin(), grid_.end(), 0.0);
  auto report = reopened->Restart("heat", 30);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->tier, "ssd");
  EXPECT_EQ(grid_, saved[30]);
}

// Refuses every write of rank 0's ECC sidecar, as a full /dev/shm would.
class NoSidecarEnv final : public EnvWrapper {
 public:
  explicit NoSidecarEnv(Env* target) : EnvWrapper(target) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        const WriteOptions& options) override {
    if (IsSidecar(path)) return Refused(path);
    return EnvWrapper::NewWritableFile(path, options);
  }
  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, uint64_t size,
                                              bool writable) override {
    if (writable && IsSidecar(path)) return Refused(path);
    return EnvWrapper::MapFile(path, size, writable);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    if (IsSidecar(to)) return Refused(to);
    return EnvWrapper::RenameFile(from, to);
  }

 private:
  static bool IsSidecar(const std::string& path) {
    return path.find(EccSidecarName(0)) != std::string::npos;
  }
  static Status Refused(const std::string& path) {
    return Error(Code::kNoSpace, "no room for '{}' (refused by the test)", path);
  }
};

TEST_F(EngineTest, WaitCountsTheEncodesThatFailedOrWereSkipped) {
  config_.placement.policy = PlacementPolicy::kMemory;
  config_.tier(TierKind::kMemory).ecc = EccMode::kNormal;
  config_.tier(TierKind::kPfs).enabled = false;
  {
    // Failed: the copy stays committed and restorable, without ECC.
    NoSidecarEnv no_sidecar(env_.get());
    auto opened = Open(&no_sidecar);
    ASSERT_NE(opened, nullptr);
    Engine& e = *opened;
    ProtectState(e);
    const std::vector<double> saved = grid_;
    ASSERT_TRUE(e.Checkpoint("failed", 1).ok());
    ASSERT_TRUE(e.Wait().ok());
    EXPECT_EQ(e.last_wait().ecc_failed, 1);
    EXPECT_EQ(e.last_wait().ecc_encoded, 0);
    EXPECT_NE(e.last_wait().last_failure.find("ECC sidecar"), std::string::npos)
        << e.last_wait().last_failure;
    EXPECT_EQ(e.last_checkpoint().ecc_protected_after, -1.0);
    std::fill(grid_.begin(), grid_.end(), 0.0);
    auto report = e.Restart("failed", 1);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->tier, "memory");
    EXPECT_EQ(grid_, saved);
    ASSERT_TRUE(e.Finalize().ok());
  }
  // Skipped: versions 20 and 30 commit while the drain of 10 holds the
  // background thread (after 10's encode), so 30's encode supersedes 20's.
  HeldDrainEnv held_env(env_.get());
  auto opened = Open(&held_env);
  ASSERT_NE(opened, nullptr);
  Engine& e = *opened;
  ProtectState(e);
  ASSERT_TRUE(e.Checkpoint("heat", 10).ok());
  held_env.held.get_future().wait();
  ASSERT_TRUE(e.Checkpoint("heat", 20).ok());
  ASSERT_TRUE(e.Checkpoint("heat", 30).ok());
  held_env.Release();
  ASSERT_TRUE(e.Wait().ok());
  EXPECT_EQ(e.last_wait().ecc_encoded, 2);
  EXPECT_EQ(e.last_wait().ecc_skipped, 1);
  EXPECT_EQ(e.last_wait().ecc_failed, 0);
  ASSERT_TRUE(e.Finalize().ok());
}

// ---- the memory tier's lifecycle (engine_memory.cc)

TEST_F(EngineTest, FinalizeReleasesMemoryCopiesThatLowerTiersHold) {
  config_.placement.policy = PlacementPolicy::kMemory;
  config_.tier(TierKind::kMemory).keep_at_finalize = false;
  config_.tier(TierKind::kMemory).path = "/shm/cairn-{user}/{node}";
  std::vector<double> saved;
  {
    auto e = Open();
    ProtectState(*e);
    for (step_ = 1; step_ <= 3; ++step_) {
      grid_[11] = static_cast<double>(step_);
      ASSERT_TRUE(e->Checkpoint("heat", step_ * 10).ok());
    }
    saved = grid_;
    Status s = e->Finalize();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Nothing of the job is left in the memory tier's file system, not even
  // its directories; the versions are on the ssd and pfs tiers.
  EXPECT_TRUE(env_->FileExists("/shm"));
  EXPECT_FALSE(env_->FileExists(TierOf(TierKind::kMemory).root()));
  EXPECT_FALSE(env_->ListDir("/shm").ok() && !env_->ListDir("/shm")->empty());
  EXPECT_EQ(TierOf(TierKind::kSsd).Versions("heat")->back(), 30);

  std::fill(grid_.begin(), grid_.end(), 0.0);
  auto e = Open();
  ProtectState(*e);
  auto report = e->Restart("heat", 30);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->version, 30);
  EXPECT_EQ(report->tier, "ssd");
  EXPECT_EQ(grid_, saved);
}

TEST_F(EngineTest, KeepAtFinalizeKeepsMemoryCopiesAndSlots) {
  config_.placement.policy = PlacementPolicy::kMemory;
  std::vector<double> big(1 << 18, 1.5);  // 2 MiB: worth a slot
  {
    auto e = Open();
    ASSERT_TRUE(e->Protect(0, big.data(), big.size(), sizeof(double)).ok());
    ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  Tier& memory = TierOf(TierKind::kMemory);
  EXPECT_EQ(*memory.Versions("heat"), std::vector<int64_t>{1});
  EXPECT_FALSE(env_->ListDir(memory.FreeSlotDir())->empty());
}

TEST_F(EngineTest, MemoryOnlyCopiesAreKeptButSpareSlotsReleased) {
  config_.placement.policy = PlacementPolicy::kMemory;
  config_.tier(TierKind::kMemory).keep_at_finalize = false;
  config_.tier(TierKind::kSsd).enabled = false;
  config_.tier(TierKind::kPfs).enabled = false;
  std::vector<double> big(1 << 18, 2.5);
  {
    auto e = Open();
    ASSERT_TRUE(e->Protect(0, big.data(), big.size(), sizeof(double)).ok());
    ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
    ASSERT_TRUE(e->Finalize().ok());
  }
  Tier& memory = TierOf(TierKind::kMemory);
  EXPECT_EQ(*memory.Versions("heat"), std::vector<int64_t>{1});  // the only copy
  EXPECT_FALSE(env_->FileExists(memory.FreeSlotDir()));
}

TEST_F(EngineTest, SlotsAreReservedAtProtectForTheFirstCheckpoint) {
  config_.placement.policy = PlacementPolicy::kMemory;
  config_.tier(TierKind::kSsd).enabled = false;
  config_.tier(TierKind::kPfs).enabled = false;
  std::vector<double> big(1 << 18);
  std::iota(big.begin(), big.end(), 0.25);
  const std::vector<double> saved = big;
  auto e = Open();
  ASSERT_TRUE(e->Protect(0, big.data(), big.size(), sizeof(double)).ok());
  ASSERT_TRUE(e->Wait().ok());  // the reservation is background work
  Tier& memory = TierOf(TierKind::kMemory);
  // keep (2) + the version being written; no lower tier to drain to.
  ASSERT_EQ(env_->ListDir(memory.FreeSlotDir())->size(), 3u);
  ASSERT_TRUE(e->Checkpoint("heat", 1).ok());
  EXPECT_EQ(env_->ListDir(memory.FreeSlotDir())->size(), 2u);
  std::fill(big.begin(), big.end(), 0.0);
  auto report = e->Restart("heat", 1);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(big, saved);
}

}  // namespace
}  // namespace cairn
