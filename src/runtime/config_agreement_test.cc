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

TEST(ConfigAgreementTest, EveryKeyShowsItsValue) {
  Config config;
  config.dedup.min_saving = 0.25;
  config.interval.mode = IntervalMode::kFixed;
  config.interval.fixed_seconds = 90;
  for (const ConfigKey& key : ConfigKeys()) {
    ASSERT_TRUE(key.show) << key.FullName();
    (void)key.show(config);
  }
  for (const char* name : {"min_saving", "mode"}) ASSERT_NE(FindKey("dedup", name), nullptr);
  ASSERT_NE(FindKey("placement", "interval"), nullptr);
  ASSERT_NE(FindKey("io", "parallelism"), nullptr);
  ASSERT_NE(FindKey("transparent", "arena_address"), nullptr);
  EXPECT_EQ(FindKey("dedup", "min_saving")->show(config), "0.25");
  EXPECT_EQ(FindKey("dedup", "mode")->show(config), "off");
  EXPECT_EQ(FindKey("placement", "interval")->show(config), "90");
  EXPECT_EQ(FindKey("io", "parallelism")->show(config), "0");
  EXPECT_EQ(FindKey("transparent", "arena_address")->show(config), "0x200000000000");
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
