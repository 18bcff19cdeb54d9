#include "runtime/config_agreement.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"
#include "env/env.h"

namespace cairn {
namespace {

// Runs AgreeOnConfig on three thread ranks, rank r with configs[r]; each
// rank's outcome.
std::vector<Status> AgreeOn(const std::vector<Config>& configs) {
  std::vector<Status> outcomes(configs.size());
  Status started = RunRanks(PosixEnv(), std::vector<int>(configs.size(), 0), [&](Comm& comm) {
    outcomes[static_cast<size_t>(comm.rank())] =
        AgreeOnConfig(comm, configs[static_cast<size_t>(comm.rank())]);
  });
  EXPECT_TRUE(started.ok()) << started.ToString();
  return outcomes;
}

const ConfigKey* KeyNamed(const std::string& full_name) {
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.FullName() == full_name) return &key;
  }
  ADD_FAILURE() << "no key " << full_name;
  static const ConfigKey kNone{"", "", "", "", "", nullptr,
                               [](const Config&) { return std::string(); }};
  return &kNone;
}

TEST(ConfigAgreementTest, EveryKeyShowsItsValue) {
  Config config;
  config.dedup.min_saving = 0.25;
  config.interval.mode = IntervalMode::kFixed;
  config.interval.fixed_seconds = 90;
  for (const ConfigKey& key : ConfigKeys()) {
    ASSERT_TRUE(key.show) << key.FullName();
    (void)key.show(config);
  }
  EXPECT_EQ(KeyNamed("dedup.min_saving")->show(config), "0.25");
  EXPECT_EQ(KeyNamed("dedup.mode")->show(config), "off");
  EXPECT_EQ(KeyNamed("placement.interval")->show(config), "90");
  EXPECT_EQ(KeyNamed("io.parallelism")->show(config), "0");
  EXPECT_EQ(KeyNamed("transparent.arena_address")->show(config), "0x200000000000");
}

TEST(ConfigAgreementTest, AKeyOneRankSetsOtherwiseFailsEveryRankNamingIt) {
  std::vector<Config> configs(3);
  configs[2].dedup.probe_every = 3;
  configs[2].redundancy.scheme = RedundancyScheme::kXor;
  for (const Status& s : AgreeOn(configs)) {
    ASSERT_EQ(s.code(), Code::kConfig) << s.ToString();
    EXPECT_NE(s.message().find("dedup.probe_every"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("redundancy.scheme"), std::string::npos) << s.ToString();
    EXPECT_EQ(s.message().find("dedup.mode"), std::string::npos) << s.ToString();
  }
}

TEST(ConfigAgreementTest, PathsDevicesAndLogLevelMayDifferPerRank) {
  std::vector<Config> configs(3);
  configs[1].log_level = "debug";
  configs[1].tier(TierKind::kSsd).path = "/local/ssd1/{node}";
  configs[2].tier(TierKind::kSsd).capacity = uint64_t{1} << 40;
  configs[2].ssd_endurance_tbw = 600;
  for (const Status& s : AgreeOn(configs)) EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace cairn
