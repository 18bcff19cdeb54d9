#include "base/config.h"

#include <csignal>
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

TEST(ConfigTest, DedupWithEccEncodedInTheCallIsRefusedNamingBothKeys) {
  auto config = Parse(
      "[dedup]\nmode = \"collective\"\n[tiers.memory]\necc = \"strong\"\necc_sync = true\n");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kConfig);
  EXPECT_NE(config.status().message().find("dedup.mode"), std::string::npos)
      << config.status().ToString();
  EXPECT_NE(config.status().message().find("tiers.memory.ecc_sync"), std::string::npos)
      << config.status().ToString();
  // ECC encoded after the commit (the default) is fine with dedup, and so
  // is ecc_sync with the memory tier off.
  EXPECT_TRUE(Parse("[dedup]\nmode = \"collective\"\n[tiers.memory]\necc = \"strong\"\n").ok());
  EXPECT_TRUE(Parse("[dedup]\nmode = \"local\"\n[tiers.memory]\nenabled = false\n"
                    "ecc = \"normal\"\necc_sync = true\n")
                  .ok());
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

TEST(ConfigTest, RedundancyKeysApplyAndBadOnesAreNamed) {
  auto defaults = Parse("");
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->redundancy.scheme, RedundancyScheme::kNone);
  EXPECT_EQ(defaults->redundancy.group_size, 0);
  EXPECT_EQ(defaults->redundancy.parity, 2);
  EXPECT_FALSE(defaults->redundancy.sync);

  FakeEnv env;
  env.vars["CAIRN_REDUNDANCY_SYNC"] = "true";
  auto config = Parse("[redundancy]\nscheme = \"rs\"\ngroup_size = 6\nparity = 3\n", env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->redundancy.scheme, RedundancyScheme::kRs);
  EXPECT_STREQ(RedundancySchemeName(config->redundancy.scheme), "rs");
  EXPECT_EQ(config->redundancy.group_size, 6);
  EXPECT_EQ(config->redundancy.parity, 3);
  EXPECT_TRUE(config->redundancy.sync);

  auto bad = Parse("[redundancy]\nscheme = \"raid5\"\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("redundancy.scheme"), std::string::npos);
  EXPECT_NE(bad.status().message().find("none, partner, xor, rs"), std::string::npos);
  auto zero_parity = Parse("[redundancy]\nparity = 0\n");
  ASSERT_FALSE(zero_parity.ok());
  EXPECT_NE(zero_parity.status().message().find("redundancy.parity"), std::string::npos);
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
                           [](const std::string& p, uint64_t) -> Result<std::string> {
                             return Error(Code::kIo, "open '{}': No such file", p);
                           });
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("/nonexistent/cairn.toml"), std::string::npos);
}

// Expects a kConfig error whose message holds every one of `parts`.
void ExpectConfigError(const Result<Config>& config, const std::vector<std::string>& parts,
                       const std::string& input) {
  ASSERT_FALSE(config.ok()) << input;
  EXPECT_EQ(config.status().code(), Code::kConfig) << input;
  for (const auto& part : parts) {
    EXPECT_NE(config.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << config.status().message();
  }
}

TEST(ConfigTest, TomlValuesKeepTheirType) {
  struct Case {
    std::string text;
    std::vector<std::string> parts;
  } cases[] = {
      {"[placement]\nlifetime = 1\n", {"placement.lifetime", "expected true or false", "an integer"}},
      {"[retention]\nkeep = \"2\"\n", {"retention.keep", "expected an integer", "a string"}},
      {"[retention]\nkeep = 2.0\n", {"retention.keep", "expected an integer", "a float"}},
      {"[tiers.memory]\npath = 42\n", {"tiers.memory.path", "expected a string", "an integer"}},
      {"[tiers.memory]\npath = true\n", {"tiers.memory.path", "expected a string", "a boolean"}},
      {"[tiers.memory]\npath = [\"/a\"]\n", {"tiers.memory.path", "expected path", "an array"}},
      {"[tiers.memory]\ncapacity = 1.5e9\n", {"tiers.memory.capacity", "expected a size", "a float"}},
      {"[tiers.memory]\ncapacity = true\n", {"tiers.memory.capacity", "expected a size"}},
      {"[tiers.ssd]\nenabled = 1979-05-27\n", {"tiers.ssd.enabled", "expected bool", "a date"}},
      {"[placement]\nslowdown_bound = \"0.2\"\n", {"placement.slowdown_bound", "a string"}},
      {"[placement]\nslowdown_bound = nan\n", {"placement.slowdown_bound", "expected a number"}},
      {"[model]\nmtbf = inf\n", {"model.mtbf", "expected a number"}},
      {"[placement]\npolicy = 1\n", {"placement.policy", "expected one of", "an integer"}},
      {"[placement]\ninterval = \"90\"\n", {"placement.interval", "seconds > 0", "a string"}},
      {"[placement]\ninterval = true\n", {"placement.interval", "seconds > 0", "a boolean"}},
      {"[io]\nparallelism = \"4\"\n", {"io.parallelism", "expected auto", "a string"}},
      {"[io]\nparallelism = 1.5\n", {"io.parallelism", "expected auto", "a float"}},
      {"[general]\nlog_level = false\n", {"general.log_level", "a boolean"}},
  };
  for (const auto& c : cases) ExpectConfigError(Parse(c.text), c.parts, c.text);
}

TEST(ConfigTest, EachTypeAcceptsWhatItDocuments) {
  auto config = Parse(R"(
[tiers.memory]
capacity = 1048576
[tiers.ssd]
capacity = "2 GiB"
endurance_tbw = 600
warranty_years = 2.5
[placement]
slowdown_bound = 0.25
interval = 90
[io]
parallelism = "auto"
[model]
mtbf = 3600
)");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->tier(TierKind::kMemory).capacity, 1048576u);
  EXPECT_EQ(config->tier(TierKind::kSsd).capacity, 2ULL << 30);
  EXPECT_DOUBLE_EQ(config->ssd_endurance_tbw, 600);
  EXPECT_DOUBLE_EQ(config->ssd_warranty_years, 2.5);
  EXPECT_EQ(config->interval.mode, IntervalMode::kFixed);
  EXPECT_DOUBLE_EQ(config->interval.fixed_seconds, 90);
  EXPECT_TRUE(config->io.auto_parallelism);
  EXPECT_DOUBLE_EQ(config->interval.mtbf_seconds, 3600);
  auto ranks = Parse("[io]\nparallelism = 4\n");
  ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();
  EXPECT_EQ(ranks->io.parallelism, 4);
}

TEST(ConfigTest, EnvironmentTextIsParsedPerType) {
  FakeEnv env;
  env.vars["CAIRN_PLACEMENT_LIFETIME"] = "0";
  env.vars["CAIRN_TIERS_MEMORY_CAPACITY"] = "64MiB";
  env.vars["CAIRN_PLACEMENT_SLOWDOWN_BOUND"] = "0.3";
  env.vars["CAIRN_PLACEMENT_INTERVAL"] = "120";
  env.vars["CAIRN_IO_PARALLELISM"] = "2";
  auto config = Parse("", env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_FALSE(config->placement.lifetime);
  EXPECT_EQ(config->tier(TierKind::kMemory).capacity, 64ULL << 20);
  EXPECT_DOUBLE_EQ(config->placement.slowdown_bound, 0.3);
  EXPECT_DOUBLE_EQ(config->interval.fixed_seconds, 120);
  EXPECT_EQ(config->io.parallelism, 2);
  struct Case {
    std::string var, value, key;
  } bad[] = {
      {"CAIRN_RETENTION_KEEP", " 2", "retention.keep"},
      {"CAIRN_RETENTION_KEEP", "2x", "retention.keep"},
      {"CAIRN_RETENTION_KEEP", "", "retention.keep"},
      {"CAIRN_PLACEMENT_LIFETIME", "maybe", "placement.lifetime"},
      {"CAIRN_PLACEMENT_SLOWDOWN_BOUND", "nan", "placement.slowdown_bound"},
      {"CAIRN_TIERS_SSD_CAPACITY", "-1", "tiers.ssd.capacity"},
      {"CAIRN_TIERS_SSD_PATH", std::string("/a\0b", 4), "tiers.ssd.path"},
  };
  for (const auto& c : bad) {
    FakeEnv one;
    one.vars[c.var] = c.value;
    ExpectConfigError(Parse("", one), {"$" + c.var, c.key}, c.var + "=" + c.value);
  }
}

// A NUL would cut the path short where the OS sees it (a C string).
TEST(ConfigTest, NulInAPathIsAnError) {
  for (std::string key : {"general.dir", "tiers.memory.path", "io.profile"}) {
    size_t dot = key.rfind('.');
    std::string text = fmt::format("[{}]\n{} = \"/scratch/a\\u0000b\"\n", key.substr(0, dot),
                                   key.substr(dot + 1));
    ExpectConfigError(Parse(text), {key, "NUL", "/scratch/a\\x00b"}, text);
  }
}

TEST(ConfigTest, UnknownPathPlaceholderIsAnError) {
  ExpectConfigError(Parse("[tiers.ssd]\npath = \"{dir}/ssd/{nod}\"\n"),
                    {"tiers.ssd.path", "{nod}", "{node}"}, "{nod}");
  ExpectConfigError(Parse("[tiers.pfs]\npath = \"{dir/pfs\"\n"), {"tiers.pfs.path", "{dir/pfs"},
                    "unclosed");
  ExpectConfigError(Parse("[io]\nprofile = \"{}/p.json\"\n"), {"io.profile", "{}"}, "{}");
  EXPECT_TRUE(Parse("[tiers.ssd]\npath = \"/l/{user}/{dirkey}/{dir}/{node}\"\n").ok());
}

TEST(ConfigTest, SectionsMustBeTables) {
  ExpectConfigError(Parse("tiers = 3\n"), {"'tiers'", "section", "an integer"}, "tiers = 3");
  ExpectConfigError(Parse("[tiers]\nmemory = \"x\"\n"), {"'tiers.memory'", "a string"}, "memory");
  ExpectConfigError(Parse("placement = [1]\n"), {"'placement'", "an array"}, "placement");
  ExpectConfigError(Parse("[tiers.memory.path]\nx = 1\n"), {"tiers.memory.path", "a table"},
                    "[tiers.memory.path]");
  // Inline tables are tables.
  auto inline_table = Parse("tiers = { memory = { keep = 3 } }\n");
  ASSERT_TRUE(inline_table.ok()) << inline_table.status().ToString();
  EXPECT_EQ(inline_table->KeepFor(TierKind::kMemory), 3);
}

TEST(ConfigTest, DuplicateKeysAreErrors) {
  ExpectConfigError(Parse("[retention]\nkeep = 2\nkeep = 3\n"), {"test.toml:3"}, "keep twice");
  ExpectConfigError(Parse("[retention]\nkeep = 2\n[retention]\n"), {"test.toml:3"},
                    "section twice");
  ExpectConfigError(Parse("retention.keep = 2\n[retention]\nkeep = 3\n"), {"test.toml"},
                    "dotted and section");
}

TEST(ConfigTest, SizesOutOfRangeAreErrors) {
  struct Case {
    std::string value, why;
  } cases[] = {
      {"-1", "not negative"},
      {"\"-5GiB\"", "expected a size"},
      {"\"99999999999 GiB\"", "2^64"},
      {"\"18446744073709551616\"", "2^64"},
      {"\"4 G iB\"", "unknown size unit"},
      {"\"4GiB \"", "unknown size unit"},
  };
  for (const auto& c : cases) {
    std::string text = "[tiers.memory]\ncapacity = " + c.value + "\n";
    ExpectConfigError(Parse(text), {"tiers.memory.capacity", c.why}, text);
  }
}

// A header or value nested 20,000 levels deep overflowed the stack; it is
// refused before parsing with an error naming the depth.
TEST(ConfigTest, DeepNestingIsRefused) {
  const int kLevels = 20000;
  std::string parts;
  for (int i = 0; i < kLevels; ++i) parts += i ? ".a" : "a";
  std::string inline_tables;
  for (int i = 0; i < kLevels; ++i) inline_tables += "{a=";
  inline_tables += "1" + std::string(kLevels, '}');
  const std::string inputs[] = {
      "[" + parts + "]\nx = 1\n",
      "[[" + parts + "]]\n",
      parts + " = 1\n",
      "[retention]\nx = " + std::string(kLevels, '[') + std::string(kLevels, ']') + "\n",
      "[retention]\nx = " + inline_tables + "\n",
  };
  for (const auto& text : inputs) {
    ExpectConfigError(Parse(text), {"test.toml:", "nested deeper than 16 levels"},
                      text.substr(0, 40));
  }
}

TEST(ConfigTest, DepthCountsKeysNotStringsOrValues) {
  // Dots inside strings, comments and values, and a quoted key part with
  // dots, are not levels.
  std::string dots;
  for (int i = 0; i < 40; ++i) dots += ".d";
  auto config = Parse("[tiers.memory]\npath = \"/a" + dots + "\" # c" + dots +
                      "\n[model]\nmtbf = 1.5e3\n");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->tier(TierKind::kMemory).path, "/a" + dots);
  ExpectConfigError(Parse("[\"a" + dots + "\"]\nx = '''\n" + dots + "'''\n"),
                    {"unknown config key", "a" + dots}, "quoted key");
  // Just under the bound parses (and fails as an unknown key, found without
  // walking the whole depth).
  std::string deep = "a";
  for (int i = 1; i < 15; ++i) deep += ".a";
  ExpectConfigError(Parse("[" + deep + "]\nx = 1\n"), {"unknown config key", deep + ".x"}, deep);
}

TEST(ConfigTest, LoadReadsAtMostTheConfigLimit) {
  FakeEnv env;
  uint64_t asked = 0;
  auto config = LoadConfig("/etc/cairn.toml", env.Lookup(), env.Names(),
                           [&asked](const std::string&, uint64_t max_bytes) -> Result<std::string> {
                             asked = max_bytes;
                             return std::string("[retention]\nkeep = 4\n");
                           });
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->keep, 4);
  EXPECT_EQ(asked, kMaxConfigFileBytes);
}

TEST(ParseSizeTest, Units) {
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  EXPECT_EQ(*ParseSize("4GiB"), 4ULL << 30);
  EXPECT_EQ(*ParseSize("512 MiB"), 512ULL << 20);
  EXPECT_EQ(*ParseSize("100MB"), 100000000u);
  EXPECT_FALSE(ParseSize("GiB").ok());
  EXPECT_FALSE(ParseSize("12 furlongs").ok());
  EXPECT_FALSE(ParseSize("99999999999999999999TiB").ok());
  EXPECT_FALSE(ParseSize("16777216TiB").ok());  // 2^64 bytes
  EXPECT_EQ(*ParseSize("16777215TiB"), 16777215ULL << 40);
  EXPECT_FALSE(ParseSize("-1").ok());
  EXPECT_FALSE(ParseSize("+1").ok());
  EXPECT_FALSE(ParseSize("4 G iB").ok());
}

TEST(ConfigTest, TransparentKeys) {
  auto c = Parse(
      "[transparent]\nsignal = \"SIGUSR2\"\narena_address = \"0x300000000000\"\n"
      "arena_size = \"1GiB\"\ntracking = \"mprotect\"\nfixed_layout = false\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->transparent.signal, SIGUSR2);
  EXPECT_EQ(c->transparent.arena_address, 0x300000000000u);
  EXPECT_EQ(c->transparent.arena_size, uint64_t{1} << 30);
  EXPECT_EQ(c->transparent.tracking, DirtyMethod::kMprotect);
  EXPECT_FALSE(c->transparent.fixed_layout);
  FakeEnv env;
  env.vars["CAIRN_TRANSPARENT_SIGNAL"] = "none";
  env.vars["CAIRN_TRANSPARENT_ARENA_ADDRESS"] = "35184372088832";  // 0x200000000000
  auto e = Parse("", env);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->transparent.signal, 0);
  EXPECT_EQ(e->transparent.arena_address, 0x200000000000u);
  for (const char* bad : {"\"0x1001\"", "\"0x900000000000\"", "\"zero\"", "-4096"}) {
    auto b = Parse(std::string("[transparent]\narena_address = ") + bad + "\n");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("transparent.arena_address"), std::string::npos)
        << b.status().message();
  }
  auto t = Parse("[transparent]\ntracking = \"dirty-bits\"\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("transparent.tracking"), std::string::npos);
}

}  // namespace
}  // namespace cairn
