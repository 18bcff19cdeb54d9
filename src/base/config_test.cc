#include "base/config.h"

#include <map>

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
  EXPECT_EQ(config->placement, TierKind::kMemory);
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
  EXPECT_EQ(config->placement, TierKind::kSsd);
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

TEST(ConfigTest, PlacementOnDisabledTierIsRejected) {
  auto config = Parse("[tiers.memory]\nenabled = false\n");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("placement.policy"), std::string::npos);
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
