#include "base/config.h"

#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cairn {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup Lookup() const {
    return [this](const std::string& n) -> std::optional<std::string> {
      auto it = vars.find(n);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
  EnvNames Names() const {
    return [this] {
      std::vector<std::string> out;
      for (const auto& [k, v] : vars) out.push_back(k);
      return out;
    };
  }
};

Result<Config> Parse(const std::string& text, const FakeEnv& env = {}) {
  return ParseConfig(text, "test.toml", env.Lookup(), env.Names());
}

TEST(ConfigTest, DefaultsNeedNoFile) {
  auto config = Parse("");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->dir, "./cairn-data");
  EXPECT_EQ(config->placement.policy, PlacementPolicy::kMemory);
  EXPECT_DOUBLE_EQ(config->ssd_endurance().rating_bytes, 14.6e15);
  EXPECT_DOUBLE_EQ(config->ssd_endurance().warranty_seconds, 5 * kSecondsPerYear);
  EXPECT_EQ(config->keep, 2);
  EXPECT_EQ(config->tier(TierKind::kMemory).capacity, 4ULL << 30);
  EXPECT_EQ(config->tier(TierKind::kSsd).path, "{dir}/ssd/{node}");
  EXPECT_TRUE(config->tier(TierKind::kPfs).enabled);
}

TEST(ConfigTest, FileValuesApply) {
  auto config = Parse(R"(
[general]
dir = "/tmp/x"
[tiers.memory]
capacity = "512MiB"
keep = 3
[tiers.pfs]
flush = "sync"
every = 4
[placement]
policy = "ssd"
[topology]
ranks_per_node = 2
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->dir, "/tmp/x");
  EXPECT_EQ(config->tier(TierKind::kMemory).capacity, 512ULL << 20);
  EXPECT_EQ(config->KeepFor(TierKind::kMemory), 3);
  EXPECT_EQ(config->KeepFor(TierKind::kSsd), 2);
  EXPECT_EQ(config->tier(TierKind::kPfs).flush, FlushMode::kSync);
  EXPECT_EQ(config->tier(TierKind::kPfs).every, 4);
  EXPECT_EQ(config->placement.policy, PlacementPolicy::kSsd);
  EXPECT_EQ(config->ranks_per_node, 2);
}

TEST(ConfigTest, UnknownKeyIsNamed) {
  auto config = Parse("[tiers.memory]\npaht = \"/x\"\n");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kConfig);
  EXPECT_NE(config.status().message().find("tiers.memory.paht"), std::string::npos)
      << config.status().message();
}

TEST(ConfigTest, UnknownSectionIsNamed) {
  auto config = Parse("[tier.memory]\npath = \"/x\"\n");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("tier.memory.path"), std::string::npos);
}

TEST(ConfigTest, BadValuesNameKeyAndValue) {
  struct Case {
    std::string text, key, value;
  } cases[] = {
      {"[retention]\nkeep = 0\n", "retention.keep", "'0'"},
      {"[retention]\nkeep = \"two\"\n", "retention.keep", "'two'"},
      {"[tiers.memory]\ncapacity = \"4 parsecs\"\n", "tiers.memory.capacity", "4 parsecs"},
      {"[tiers.ssd]\nenabled = \"maybe\"\n", "tiers.ssd.enabled", "maybe"},
      {"[placement]\npolicy = \"tape\"\n", "placement.policy", "tape"},
      {"[tiers.pfs]\nflush = \"later\"\n", "tiers.pfs.flush", "later"},
      {"[topology]\nranks_per_node = -1\n", "topology.ranks_per_node", "-1"},
      {"[general]\ndir = \"\"\n", "general.dir", "''"},
      {"[placement]\nslowdown_bound = 1.5\n", "placement.slowdown_bound", "1.5"},
      {"[placement]\nslowdown_bound = 0\n", "placement.slowdown_bound", "0"},
      {"[placement]\nforce_ssd_every = -1\n", "placement.force_ssd_every", "-1"},
      {"[placement]\nratio = 0\n", "placement.ratio", "0"},
      {"[placement]\nbandwidth_window = 0.5\n", "placement.bandwidth_window", "0.5"},
      {"[placement]\nlifetime = \"often\"\n", "placement.lifetime", "often"},
      {"[tiers.ssd]\nendurance_tbw = \"lots\"\n", "tiers.ssd.endurance_tbw", "lots"},
      {"[tiers.ssd]\nwarranty_years = 0\n", "tiers.ssd.warranty_years", "0"},
      {"[placement]\ninterval = \"sometimes\"\n", "placement.interval", "sometimes"},
      {"[placement]\ninterval = -5\n", "placement.interval", "-5"},
      {"[model]\nobjective = \"energy\"\n", "model.objective", "energy"},
      {"[model]\nmtbf = 0\n", "model.mtbf", "0"},
      {"[tiers.ssd]\nalready_written = \"3 bushels\"\n", "tiers.ssd.already_written",
       "3 bushels"},
  };
  for (const auto& c : cases) {
    auto config = Parse(c.text);
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.status().code(), Code::kConfig);
    EXPECT_NE(config.status().message().find(c.key), std::string::npos)
        << config.status().message();
    EXPECT_NE(config.status().message().find(c.value), std::string::npos)
        << config.status().message();
  }
}

TEST(ConfigTest, SyntaxErrorNamesLine) {
  auto config = Parse("[general]\ndir = \n");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("test.toml:2"), std::string::npos)
      << config.status().message();
}

TEST(ConfigTest, EnvironmentOverridesFile) {
  FakeEnv env;
  env.vars["CAIRN_RETENTION_KEEP"] = "5";
  env.vars["CAIRN_TIERS_MEMORY_ENABLED"] = "false";
  env.vars["CAIRN_PLACEMENT_POLICY"] = "ssd";
  env.vars["CAIRN_DIR"] = "/scratch/job";
  auto config = Parse("[retention]\nkeep = 3\n", env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->keep, 5);
  EXPECT_FALSE(config->tier(TierKind::kMemory).enabled);
  EXPECT_EQ(config->dir, "/scratch/job");
}

TEST(ConfigTest, BadEnvironmentValueNamesVariable) {
  FakeEnv env;
  env.vars["CAIRN_RETENTION_KEEP"] = "lots";
  auto config = Parse("", env);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("CAIRN_RETENTION_KEEP"), std::string::npos);
}

TEST(ConfigTest, UnknownEnvironmentVariableIsNamed) {
  FakeEnv env;
  env.vars["CAIRN_RETENTION_KEPE"] = "2";
  auto config = Parse("", env);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("CAIRN_RETENTION_KEPE"), std::string::npos);
}

TEST(ConfigTest, PerVersionPolicyNeedsMemoryAndSsd) {
  for (const char* policy : {"clc", "ratio"}) {
    auto config = Parse(fmt::format("[placement]\npolicy = \"{}\"\n[tiers.ssd]\nenabled = false\n",
                                    policy));
    ASSERT_FALSE(config.ok()) << policy;
    EXPECT_NE(config.status().message().find("placement.policy"), std::string::npos);
  }
  // A fixed policy on a disabled tier falls to the next enabled tier below.
  EXPECT_TRUE(Parse("[tiers.memory]\nenabled = false\n").ok());
  auto none = Parse(
      "[tiers.memory]\nenabled = false\n[tiers.ssd]\nenabled = false\n[tiers.pfs]\nenabled = "
      "false\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("tiers.*.enabled"), std::string::npos);
}

TEST(ConfigTest, ControllerKeysApply) {
  auto config = Parse(R"(
[placement]
policy = "clc"
lifetime = true
slowdown = false
size = false
slowdown_bound = 0.2
force_ssd_every = 7
ratio = 4
bandwidth_window = 60
[tiers.ssd]
endurance_pbw = 1.5
warranty_years = 3
already_written = "2TB"
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const ClcSettings& p = config->placement;
  EXPECT_EQ(p.policy, PlacementPolicy::kClc);
  EXPECT_TRUE(p.lifetime);
  EXPECT_FALSE(p.slowdown);
  EXPECT_FALSE(p.size);
  EXPECT_DOUBLE_EQ(p.slowdown_bound, 0.2);
  EXPECT_EQ(p.force_ssd_every, 7);
  EXPECT_EQ(p.ratio, 4);
  EXPECT_DOUBLE_EQ(p.bandwidth_window, 60);
  SsdEndurance e = config->ssd_endurance();
  EXPECT_DOUBLE_EQ(e.rating_bytes, 1.5e15);
  EXPECT_DOUBLE_EQ(e.warranty_seconds, 3 * kSecondsPerYear);
  EXPECT_DOUBLE_EQ(e.already_written_bytes, 2e12);
  auto interval = Parse("[placement]\ninterval = 90.5\n[model]\nobjective = \"energy\"\n"
                        "power_compute = 471.1\npower_checkpoint = 300\n");
  ASSERT_TRUE(interval.ok()) << interval.status().ToString();
  EXPECT_EQ(interval->interval.mode, IntervalMode::kFixed);
  EXPECT_DOUBLE_EQ(interval->interval.fixed_seconds, 90.5);
  EXPECT_EQ(interval->interval.objective, IntervalObjective::kEnergy);
  EXPECT_EQ(Parse("[placement]\ninterval = \"auto\"\n")->interval.mode, IntervalMode::kAuto);
  auto tbw = Parse("[tiers.ssd]\nendurance_tbw = 600\n");
  ASSERT_TRUE(tbw.ok());
  EXPECT_DOUBLE_EQ(tbw->ssd_endurance().rating_bytes, 600e12);
}

TEST(ConfigTest, EnduranceGivenTwiceIsRejected) {
  FakeEnv env;
  env.vars["CAIRN_TIERS_SSD_ENDURANCE_PBW"] = "2";
  auto config = Parse("[tiers.ssd]\nendurance_tbw = 600\n", env);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("tiers.ssd.endurance_tbw"), std::string::npos);
  EXPECT_NE(config.status().message().find("tiers.ssd.endurance_pbw"), std::string::npos);
}

TEST(ConfigTest, EnvNamesFollowSections) {
  for (const auto& key : ConfigKeys()) {
    if (key.FullName() == "tiers.memory.capacity") {
      EXPECT_EQ(key.EnvName(), "CAIRN_TIERS_MEMORY_CAPACITY");
    }
  }
}

TEST(ConfigTest, MissingFileIsNamed) {
  FakeEnv env;
  auto config = LoadConfig("/nonexistent/cairn.toml", env.Lookup(), env.Names(),
                           [](const std::string& p) -> Result<std::string> {
                             return Error(Code::kIo, "open '{}': No such file", p);
                           });
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("/nonexistent/cairn.toml"), std::string::npos);
}

TEST(ParseSizeTest, Units) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("4GiB"), 4ULL << 30);
  EXPECT_EQ(*ParseSize("512 MiB"), 512ULL << 20);
  EXPECT_EQ(*ParseSize("100MB"), 100000000u);
  EXPECT_FALSE(ParseSize("GiB").ok());
  EXPECT_FALSE(ParseSize("12 furlongs").ok());
  EXPECT_FALSE(ParseSize("99999999999999999999TiB").ok());
}

}  // namespace
}  // namespace cairn
