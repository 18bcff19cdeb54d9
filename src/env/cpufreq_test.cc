#include "env/cpufreq.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "env/fake_sysfs.h"

namespace cairn {
namespace {

TEST(CpuFreqTest, UserspaceGovernorSwitchesAndRestores) {
  auto mem = NewMemEnv();
  SysfsRecordingEnv env(mem.get());
  FakeCpufreq(&env, true);
  {
    auto c = CpuFreqControl::Open(&env, "/sys", "/proc/cpuinfo");
    ASSERT_TRUE(c->can_set()) << c->reason();
    EXPECT_EQ(c->method(), CpuFreqControl::Method::kUserspace);
    EXPECT_EQ(c->frequencies(), (std::vector<uint32_t>{800000, 1400000, 2100000}));
    EXPECT_EQ(c->current_khz(), 1400000u);
    EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_governor")), "userspace");
    ASSERT_TRUE(c->Set(800000).ok());
    EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_setspeed")), "800000");
    EXPECT_EQ(Get(&env, JoinPath(kPolicy1, "scaling_setspeed")), "800000");
    ASSERT_TRUE(c->Set(2100000).ok());
    EXPECT_EQ(Get(&env, JoinPath(kPolicy1, "scaling_setspeed")), "2100000");
  }  // destructor restores
  EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_governor")), "ondemand");
  EXPECT_EQ(Get(&env, JoinPath(kPolicy1, "scaling_governor")), "ondemand");
  ASSERT_FALSE(env.writes.empty());
  EXPECT_EQ(env.writes.back().second, "ondemand");
}

TEST(CpuFreqTest, MaxFreqLowersMinFirstAndRestoresBoth) {
  auto mem = NewMemEnv();
  SysfsRecordingEnv env(mem.get());
  FakeCpufreq(&env, false);
  auto c = CpuFreqControl::Open(&env, "/sys", "/proc/cpuinfo");
  ASSERT_TRUE(c->can_set()) << c->reason();
  EXPECT_EQ(c->method(), CpuFreqControl::Method::kMaxFreq);
  ASSERT_TRUE(c->Set(800000).ok());
  EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_min_freq")), "800000");
  EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_max_freq")), "800000");
  ASSERT_TRUE(c->Restore().ok());
  EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_max_freq")), "2100000");
  EXPECT_EQ(Get(&env, JoinPath(kPolicy0, "scaling_min_freq")), "1400000");
  EXPECT_EQ(Get(&env, JoinPath(kPolicy1, "scaling_min_freq")), "1400000");
}

TEST(CpuFreqTest, ReadOnlyCpufreqIsUnavailableWithCurrentFrequency) {
  auto mem = NewMemEnv();
  SysfsRecordingEnv env(mem.get());
  FakeCpufreq(&env, true);
  env.read_only_sys_ = true;
  auto c = CpuFreqControl::Open(&env, "/sys", "/proc/cpuinfo");
  EXPECT_FALSE(c->can_set());
  EXPECT_NE(c->reason().find("not writable"), std::string::npos) << c->reason();
  EXPECT_EQ(c->current_khz(), 1400000u);
  EXPECT_TRUE(c->Set(800000).code() == Code::kUnsupported);
}

TEST(CpuFreqTest, NoCpufreqFallsBackToProcCpuinfo) {
  auto mem = NewMemEnv();
  Put(mem.get(), "/proc/cpuinfo", "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2596.120\n");
  auto c = CpuFreqControl::Open(mem.get(), "/sys", "/proc/cpuinfo");
  EXPECT_FALSE(c->can_set());
  EXPECT_EQ(c->current_khz(), 2596120u);
  EXPECT_NE(c->current_source().find("cpuinfo"), std::string::npos);
}

}  // namespace
}  // namespace cairn
