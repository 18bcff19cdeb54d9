// The commit protocol under storage faults, through the fault-injecting env:
// an I/O error or a full device at every single file operation of a
// checkpoint, followed by a power loss that drops everything not made
// durable. Restart must find the previous version, or the new one if its
// checkpoint call returned success, bit for bit; never a torn one.
#include <cstdio>

#include <gtest/gtest.h>

#include "comm/comm.h"
#include "env/fault_env.h"
#include "runtime/engine.h"
#include "test_support.h"

namespace cairn {
namespace {

constexpr size_t kWords = 50000;

Config SsdOnly(const std::string& dir) {
  Config c = cairn_test::ThreeTierConfig(dir);
  c.tier(TierKind::kMemory).enabled = false;
  c.tier(TierKind::kPfs).enabled = false;
  c.placement.policy = PlacementPolicy::kSsd;
  return c;
}

std::unique_ptr<Engine> Open(const Config& config, Env* env) {
  auto e = Engine::Create(NewSingleComm(), config, env, Clock::Real());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(e).value() : nullptr;
}

class CommitProtocolTest : public ::testing::TestWithParam<Code> {};

// File operations one checkpoint of version 2 performs when nothing fails.
int OperationsOfOneCheckpoint() {
  cairn_test::TempDir dir;
  FaultEnv env(PosixEnv());
  std::vector<uint64_t> data(kWords);
  auto e = Open(SsdOnly(dir.path()), &env);
  if (!e || !e->Protect(0, data.data(), data.size(), sizeof(uint64_t)).ok() ||
      !e->Checkpoint("p", 1).ok()) {
    return 0;
  }
  int before = env.operations();
  if (!e->Checkpoint("p", 2).ok()) return 0;
  return env.operations() - before;
}

TEST_P(CommitProtocolTest, FaultAtEveryOperationThenPowerLoss) {
  const int operations_of_one_checkpoint = OperationsOfOneCheckpoint();
  ASSERT_GT(operations_of_one_checkpoint, 5);
  std::printf("faults injected at each of %d operations\n", operations_of_one_checkpoint);
  for (int n = 1; n <= operations_of_one_checkpoint + 1; ++n) {
    cairn_test::TempDir dir;
    Config config = SsdOnly(dir.path());
    FaultEnv env(PosixEnv());
    std::vector<uint64_t> data(kWords);
    Status second;
    {
      auto e = Open(config, &env);
      ASSERT_TRUE(e);
      ASSERT_TRUE(e->Protect(0, data.data(), data.size(), sizeof(uint64_t)).ok());
      cairn_test::FillVersion(data, 1);
      ASSERT_TRUE(e->Checkpoint("p", 1).ok());
      env.FailAt(env.operations() + n, GetParam());
      cairn_test::FillVersion(data, 2);
      second = e->Checkpoint("p", 2);
      env.ClearFaults();
      if (!second.ok()) {
        EXPECT_EQ(second.code(), GetParam()) << "op " << n << ": " << second.ToString();
      }
    }
    ASSERT_TRUE(env.DropUnsyncedData().ok());
    std::fill(data.begin(), data.end(), 0);
    auto e = Open(config, PosixEnv());
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->Protect(0, data.data(), data.size(), sizeof(uint64_t)).ok());
    auto report = e->Restart("p", 2);
    ASSERT_TRUE(report.ok()) << "op " << n << ": " << report.status().ToString();
    EXPECT_TRUE(cairn_test::HoldsVersion(data, report->version)) << "op " << n;
    if (second.ok()) {
      EXPECT_EQ(report->version, 2) << "op " << n << ": committed, then lost";
    }
    if (n > operations_of_one_checkpoint) {
      EXPECT_TRUE(second.ok()) << "no fault was injected";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EioAndEnospc, CommitProtocolTest,
                         ::testing::Values(Code::kIo, Code::kNoSpace),
                         [](const auto& info) { return info.param == Code::kIo ? "EIO" : "ENOSPC"; });

TEST(PowerLossTest, UnsyncedMemoryTierIsNotTrustedAfterPowerLoss) {
  // A memory-tier copy does not survive a reboot; the drained ssd copy does.
  cairn_test::TempDir dir;
  Config config = cairn_test::ThreeTierConfig(dir.path());
  config.tier(TierKind::kPfs).enabled = false;
  config.tier(TierKind::kSsd).flush = FlushMode::kSync;
  FaultEnv env(PosixEnv());
  std::vector<uint64_t> data(kWords);
  {
    auto e = Open(config, &env);
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->Protect(0, data.data(), data.size(), sizeof(uint64_t)).ok());
    cairn_test::FillVersion(data, 7);
    ASSERT_TRUE(e->Checkpoint("p", 7).ok());
  }
  ASSERT_TRUE(env.DropUnsyncedData().ok());
  std::fill(data.begin(), data.end(), 0);
  auto e = Open(config, PosixEnv());
  ASSERT_TRUE(e->Protect(0, data.data(), data.size(), sizeof(uint64_t)).ok());
  auto report = e->Restart("p", 7);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->tier, "ssd");
  EXPECT_TRUE(cairn_test::HoldsVersion(data, 7));
}

}  // namespace
}  // namespace cairn
