// Unit tests of the compatibility layers' configuration translation,
// routed-file names, layout journals and SCR index format (no MPI job
// needed: nothing here calls cairn_init).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
#include "compat/common/outcome.h"
#include "compat/common/ini_file.h"
#include "compat/common/layout_journal.h"
#include "compat/scr/scr_index.h"
#include "compat/fti/fti_config.h"
#include "compat/scr/scr_config.h"
#include "compat/veloc/veloc_config.h"

namespace cairn_compat {
namespace {

// Removes the files WriteFile made when the test program ends.
class TempFiles : public ::testing::Environment {
 public:
  void TearDown() override {
    for (const std::string& path : paths) std::remove(path.c_str());
  }
  std::vector<std::string> paths;
};
TempFiles* const temp_files =
    static_cast<TempFiles*>(::testing::AddGlobalTestEnvironment(new TempFiles));

// A configuration file with `text` in a fresh temporary path.
std::string WriteFile(const std::string& text) {
  char path[] = "/tmp/cairn-compat-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  std::FILE* f = fdopen(fd, "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  temp_files->paths.push_back(path);
  return path;
}

template <typename T>
T Get(const CairnSettings& s, const std::string& key) {
  auto it = s.keys().find(key);
  EXPECT_NE(it, s.keys().end()) << key;
  return it == s.keys().end() ? T{} : std::get<T>(it->second);
}

bool Warned(const CairnSettings& s, const std::string& fragment) {
  for (const auto& w : s.warnings()) {
    if (w.find(fragment) != std::string::npos) return true;
  }
  return false;
}

TEST(CairnError, NamesTheCairnFunctionOnce) {
  // Before cairn_init every call fails, its message naming the function.
  const int rc = cairn_checkpoint("x", 1);
  ASSERT_EQ(rc, CAIRN_E_NOT_INITIALIZED);
  const std::string plain = CairnError(rc, "cairn_checkpoint").message();
  EXPECT_EQ(plain.find("cairn_checkpoint: Cairn is not initialized"), 0u) << plain;
  EXPECT_EQ(plain.find("cairn_checkpoint", 1), std::string::npos) << plain;
  const int again = cairn_checkpoint("x", 1);
  const std::string context = CairnError(again, "cairn_checkpoint of dataset 1").message();
  EXPECT_EQ(context.find("cairn_checkpoint of dataset 1: Cairn is not initialized"), 0u)
      << context;
  EXPECT_TRUE(CairnError(0, "cairn_checkpoint").ok());
}

TEST(IniFile, SectionsCommentsAndScrSubParameters) {
  std::string path = WriteFile("# c\n; c\nscratch = /a b\n[basic]\nckpt_dir=./L\n"
                               "CACHEDIR=/ssd BYTES=270GB\n");
  auto entries = ReadIniFile(path, kScrConf);
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].value, "/a b");
  EXPECT_EQ((*entries)[1].section, "basic");
  EXPECT_EQ((*entries)[2].value, "/ssd");
  EXPECT_EQ((*entries)[2].extra, std::vector<std::string>{"BYTES=270GB"});
  EXPECT_EQ((*entries)[2].line, 6);
}

// Each value as the peer's own parser reads it: FTI's template writes
// "Ckpt_dir = ./Local\t#/path/to/local/storage/"; VeloC's inih ends a value
// at a ';' after whitespace only; SCR's '#' is reserved.
TEST(IniFile, InlineCommentsAndQuotesAsEachPeerReadsThem) {
  const std::string text =
      "[Basic] # levels\nCkpt_dir = ./Local\t#/path/to/local/storage/\n"
      "Head = 0 ; no head\nquoted = \"/a;b #c\" ; comment\nsingle = 'x y'\nempty = ;\n";
  auto fti = ParseIni(text, "config.fti", kFtiIni);
  ASSERT_TRUE(fti.ok()) << fti.status().message();
  ASSERT_EQ(fti->size(), 5u);
  EXPECT_EQ((*fti)[0].section, "Basic");
  EXPECT_EQ((*fti)[0].value, "./Local");
  EXPECT_EQ((*fti)[1].value, "0");
  EXPECT_EQ((*fti)[2].value, "/a;b #c");
  EXPECT_EQ((*fti)[3].value, "x y");
  EXPECT_EQ((*fti)[4].value, "");

  auto veloc = ParseIni("scratch = /tmp/a;b ; the scratch\npersistent: /p#1\n", "veloc.cfg", kVelocIni);
  ASSERT_TRUE(veloc.ok()) << veloc.status().message();
  ASSERT_EQ(veloc->size(), 2u);
  EXPECT_EQ((*veloc)[0].value, "/tmp/a;b");
  EXPECT_EQ((*veloc)[1].key, "persistent");
  EXPECT_EQ((*veloc)[1].value, "/p#1");

  auto scr = ParseIni("STORE=/dev/shm COUNT=1 # the cache\nSCR_FLUSH=4#every fourth\n", "scr.conf", kScrConf);
  ASSERT_TRUE(scr.ok()) << scr.status().message();
  ASSERT_EQ(scr->size(), 2u);
  EXPECT_EQ((*scr)[0].value, "/dev/shm");
  EXPECT_EQ((*scr)[0].extra, std::vector<std::string>{"COUNT=1"});
  EXPECT_EQ((*scr)[1].value, "4");
}

TEST(IniFile, ErrorsNameFileAndLine) {
  std::string path = WriteFile("scratch = /x\nthis is no pair\n");
  auto entries = ReadIniFile(path, kVelocIni);
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.status().message().find(path + ":2"), std::string::npos);
  EXPECT_FALSE(ReadIniFile("/nonexistent/veloc.cfg", kVelocIni).ok());
}

TEST(IniFile, TextErrorsNameTheirOriginAndLine) {
  auto entries = ParseIni("[basic]\nckpt_dir = /x\n[unterminated\n", "veloc.cfg", kVelocIni);
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.status().message().rfind("veloc.cfg:3: unterminated section", 0), 0u)
      << entries.status().message();
}

TEST(RoutedFileName, ValidStableAndDistinct) {
  std::set<std::string> names;
  const std::string longest(400, 'x');
  for (const std::string& p : std::vector<std::string>{"/a/b.dat", "/a_b.dat", "/a/b_dat", ".hidden", longest + "/y",
                        longest + "/z"}) {
    std::string n = RoutedFileName(p);
    EXPECT_EQ(n, RoutedFileName(p));
    EXPECT_LE(n.size(), 128u) << p;
    EXPECT_NE(n[0], '.');
    for (char c : n) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') << n;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), 6u);
}

TEST(VelocConfig, MapsKeysAndWarnsAboutTheRest) {
  std::string path = WriteFile("scratch = /dev/shm/v\npersistent = /pfs/v\nmode = sync\n"
                               "max_versions = 0\nscratch_versions = 3\nec_interval = 10\nfoo = 1\n");
  auto s = TranslateVelocConfig(path, "");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(Get<std::string>(*s, "tiers.memory.path"), "/dev/shm/v/cairn/{node}");
  EXPECT_EQ(Get<bool>(*s, "tiers.ssd.enabled"), false);
  EXPECT_EQ(Get<std::string>(*s, "tiers.pfs.path"), "/pfs/v/cairn");
  EXPECT_EQ(Get<std::string>(*s, "tiers.pfs.flush"), "sync");
  EXPECT_EQ(Get<int64_t>(*s, "tiers.pfs.keep"), 1000000);
  EXPECT_EQ(Get<int64_t>(*s, "tiers.memory.keep"), 3);
  EXPECT_TRUE(Warned(*s, path + ":6: ec_interval = 10: Cairn encodes every version"));
  EXPECT_TRUE(Warned(*s, "unknown VeloC key 'foo'"));
  s->ResolveRedundancy(3);
  EXPECT_EQ(Get<std::string>(*s, "redundancy.scheme"), "xor");
  EXPECT_EQ(s->redundancy(), "xor");
}

TEST(VelocConfig, ErasureCodingByDefaultExceptOnOneNodeOrWhenNegative) {
  auto by_default = TranslateVelocConfig(WriteFile("scratch = /s\n"), "");
  ASSERT_TRUE(by_default.ok());
  by_default->ResolveRedundancy(1);  // VeloC: "Running on a single host, EC deactivated"
  EXPECT_EQ(by_default->keys().count("redundancy.scheme"), 0u);
  EXPECT_FALSE(Warned(*by_default, "needs ranks on at least 2 nodes"));
  // Asked for by a key, it is missed on one node, and said so.
  auto asked = TranslateVelocConfig(WriteFile("scratch = /s\nec_interval = 0\n"), "");
  ASSERT_TRUE(asked.ok());
  asked->ResolveRedundancy(1);
  EXPECT_EQ(asked->keys().count("redundancy.scheme"), 0u);
  EXPECT_TRUE(Warned(*asked, "needs ranks on at least 2 nodes, this job has 1"));
  auto off = TranslateVelocConfig(WriteFile("scratch = /s\nec_interval = -1\n"), "");
  ASSERT_TRUE(off.ok());
  off->ResolveRedundancy(4);
  EXPECT_EQ(off->keys().count("redundancy.scheme"), 0u);
}

TEST(VelocConfig, PersistentIntervalAsVeloc) {
  // < 0: no persistent copies (VeloC's transfer module is off).
  auto off = TranslateVelocConfig(WriteFile("scratch = /s\npersistent = /p\npersistent_interval = -1\n"), "");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(Get<bool>(*off, "tiers.pfs.enabled"), false);
  auto every = TranslateVelocConfig(WriteFile("scratch = /s\npersistent = /p\npersistent_interval = 0\n"), "");
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->keys().count("tiers.pfs.enabled"), 0u);
  EXPECT_TRUE(every->warnings().empty());
  std::string path = WriteFile("scratch = /s\npersistent = /p\npersistent_interval = 30 ; s\n");
  auto timed = TranslateVelocConfig(path, "");
  ASSERT_TRUE(timed.ok());
  EXPECT_EQ(timed->keys().count("tiers.pfs.enabled"), 0u);
  EXPECT_TRUE(Warned(*timed, path + ":3: persistent_interval = 30: Cairn drains by checkpoint count"));
}

TEST(VelocConfig, ErrorsNameTheKey) {
  auto no_scratch = TranslateVelocConfig(WriteFile("persistent = /p\n"), "");
  ASSERT_FALSE(no_scratch.ok());
  EXPECT_NE(no_scratch.status().message().find("'scratch' is missing"), std::string::npos);
  auto bad_mode = TranslateVelocConfig(WriteFile("scratch = /s\nmode = lazy\n"), "");
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.status().message().find("mode 'lazy'"), std::string::npos);
}

TEST(FtiConfig, LevelsIntervalsAndSectionWarnings) {
  std::string path = WriteFile("[basic]\nhead = 1\nnode_size = 4\nckpt_dir = /local\n"
                               "glbl_dir = /global\nckpt_l1 = 3\nckpt_l2 = 5\nkeep_last_ckpt = 1\n"
                               "meta_dir = /meta\n[restart]\nfailure = 0\n");
  auto o = ReadFtiConfig(path);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->interval_minutes[1], 3);
  EXPECT_EQ(o->interval_minutes[2], 5);
  EXPECT_TRUE(o->keep_last_checkpoint);
  EXPECT_EQ(Get<int64_t>(o->cairn, "topology.ranks_per_node"), 4);
  EXPECT_EQ(Get<std::string>(o->cairn, "tiers.ssd.path"), "/local/cairn/{node}");
  EXPECT_TRUE(Warned(o->cairn, "Cairn dedicates no head ranks"));
  EXPECT_TRUE(Warned(o->cairn, "[basic]: no Cairn meaning, ignored: meta_dir"));
  EXPECT_TRUE(Warned(o->cairn, "[restart]"));
  o->cairn.ResolveRedundancy(2);  // level 2: a partner copy
  EXPECT_EQ(Get<std::string>(o->cairn, "redundancy.scheme"), "partner");
  EXPECT_FALSE(ReadFtiConfig(WriteFile("[basic]\nglbl_dir = /g\n")).ok());
}

TEST(FtiConfig, FastForwardScalesSnapshotMinutesWithinFtisBounds) {
  auto o = ReadFtiConfig(WriteFile("[basic]\nckpt_dir = /local\n[Advanced]\nfast_forward = 10\n"
                                   "final_tag = 3107\n"));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->fast_forward, 10);
  EXPECT_TRUE(Warned(o->cairn, "[advanced]: no Cairn meaning, ignored: final_tag"));
  EXPECT_FALSE(Warned(o->cairn, "fast_forward"));
  auto plain = ReadFtiConfig(WriteFile("[basic]\nckpt_dir = /local\n"));
  EXPECT_EQ(plain->fast_forward, 1);
  auto bad = ReadFtiConfig(WriteFile("[basic]\nckpt_dir = /local\n[advanced]\nfast_forward = 11\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fast_forward = 11 is not 1..10"), std::string::npos);
}

// keep_l4_ckpt cannot be met (only level-4 versions kept): it warns and
// does not keep every level's versions on the global tier instead.
TEST(FtiConfig, KeepL4WarnsAndKeepsNoExtraVersions) {
  auto o = ReadFtiConfig(WriteFile("[basic]\nckpt_dir = /local\nkeep_l4_ckpt = 1\n"));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->cairn.keys().count("tiers.pfs.keep"), 0u);
  EXPECT_TRUE(Warned(o->cairn, "keep_l4_ckpt = 1: Cairn cannot keep only the level-4"));
}

// FTI's own files capitalise sections ("[Restart]"); the warning explains
// the section whatever its case.
TEST(FtiConfig, SectionWarningsIgnoreCase) {
  auto o = ReadFtiConfig(WriteFile("[Basic]\nckpt_dir = /local\nckpt_io = 5\n[Restart]\nfailure = 1\n"));
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(Warned(o->cairn, "[restart]: no Cairn meaning, ignored: failure (FTI's own bookkeeping"));
  EXPECT_TRUE(o->hdf5_output);
}

TEST(FtiConfig, LevelThreeIsReedSolomonSurvivingHalfAGroup) {
  std::string path = WriteFile("[basic]\nckpt_dir = /local\nckpt_l2 = 2\nckpt_l3 = 4\ngroup_size = 4\n");
  auto o = ReadFtiConfig(path);
  ASSERT_TRUE(o.ok()) << o.status().message();
  o->cairn.ResolveRedundancy(8);
  EXPECT_EQ(Get<std::string>(o->cairn, "redundancy.scheme"), "rs");
  EXPECT_EQ(Get<int64_t>(o->cairn, "redundancy.group_size"), 4);
  EXPECT_EQ(Get<int64_t>(o->cairn, "redundancy.parity"), 2);
  auto small = ReadFtiConfig(path);
  small->cairn.ResolveRedundancy(3);  // the group is cut to the job's 3 nodes
  EXPECT_EQ(Get<int64_t>(small->cairn, "redundancy.group_size"), 3);
  EXPECT_EQ(Get<int64_t>(small->cairn, "redundancy.parity"), 1);
  EXPECT_TRUE(Warned(small->cairn, "this job has 3"));
}

TEST(ScrConfig, FileThenEnvironment) {
  std::string path = WriteFile("SCR_CACHE_BASE=/ssd\nSCR_FLUSH=0\nSCR_COPY_TYPE=XOR\n"
                               "SCR_CHECKPOINT_INTERVAL=7\n");
  setenv("SCR_CONF_FILE", path.c_str(), 1);
  setenv("SCR_PREFIX", "/prefix", 1);
  setenv("SCR_CHECKPOINT_INTERVAL", "9", 1);  // the environment wins
  auto o = ReadScrOptions(ScrConfigStore{});
  unsetenv("SCR_CONF_FILE");
  unsetenv("SCR_PREFIX");
  unsetenv("SCR_CHECKPOINT_INTERVAL");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->prefix, "/prefix");
  EXPECT_EQ(o->checkpoint_interval, 9);
  EXPECT_EQ(Get<bool>(o->cairn, "tiers.pfs.enabled"), false);
  EXPECT_EQ(Get<std::string>(o->cairn, "tiers.ssd.path"), "/ssd/scr/cairn/{node}");
  EXPECT_EQ(Get<std::string>(o->cairn, "tiers.pfs.path"), "/prefix/.scr/cairn");
  o->cairn.ResolveRedundancy(2);
  EXPECT_EQ(Get<std::string>(o->cairn, "redundancy.scheme"), "xor");
}

TEST(ScrConfig, CopyTypeAndSetSize) {
  ScrConfigStore app;
  ASSERT_TRUE(app.Apply("SCR_COPY_TYPE=RS").ok());
  ASSERT_TRUE(app.Apply("SCR_SET_SIZE=4").ok());
  auto rs = ReadScrOptions(app);
  ASSERT_TRUE(rs.ok()) << rs.status().message();
  rs->cairn.ResolveRedundancy(6);
  EXPECT_EQ(Get<std::string>(rs->cairn, "redundancy.scheme"), "rs");
  EXPECT_EQ(Get<int64_t>(rs->cairn, "redundancy.group_size"), 4);
  EXPECT_EQ(Get<int64_t>(rs->cairn, "redundancy.parity"), 2);
  ScrConfigStore descriptor;  // SCR's redundancy descriptor syntax
  ASSERT_TRUE(descriptor.Apply("CKPT=0 INTERVAL=1 TYPE=PARTNER").ok());
  auto partner = ReadScrOptions(descriptor);
  ASSERT_TRUE(partner.ok()) << partner.status().message();
  partner->cairn.ResolveRedundancy(4);
  EXPECT_EQ(Get<std::string>(partner->cairn, "redundancy.scheme"), "partner");
  EXPECT_TRUE(Warned(partner->cairn, "CKPT INTERVAL has no Cairn meaning"));
  ASSERT_TRUE(app.Apply("SCR_COPY_TYPE=SINGLE").ok());
  auto single = ReadScrOptions(app);
  single->cairn.ResolveRedundancy(6);
  EXPECT_EQ(single->cairn.keys().count("redundancy.scheme"), 0u);
  ASSERT_TRUE(app.Apply("SCR_COPY_TYPE=MIRROR").ok());
  auto bad = ReadScrOptions(app);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MIRROR"), std::string::npos);
}

TEST(LayoutJournal, FindsTheNewestRecordAtOrBelowAVersion) {
  char dir[] = "/tmp/cairn-compat-journal-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  LayoutJournal journal(std::string(dir) + "/sub", 3);
  Layout small = {{0, Shape{1, 4}}, {1, Shape{10, 8}}};
  Layout large = {{0, Shape{1, 4}}, {1, Shape{20, 8}}};
  ASSERT_TRUE(journal.Record("heat", 10, small).ok());
  ASSERT_TRUE(journal.Record("heat", 20, small).ok());  // unchanged: no new line
  ASSERT_TRUE(journal.Record("heat", 30, large).ok());
  EXPECT_FALSE(*journal.Find("heat", 9));
  EXPECT_EQ(**journal.Find("heat", 20), small);
  EXPECT_EQ(**journal.Find("heat", 35), large);
  // A run restarted from 20 replaces the timeline above it.
  ASSERT_TRUE(journal.Record("heat", 25, Layout{}).ok());
  EXPECT_EQ(**journal.Find("heat", 35), Layout{});
  EXPECT_EQ(**journal.Find("heat", 24), small);
  EXPECT_FALSE(*journal.Find("other", 35));
  ASSERT_TRUE(journal.Remove("heat").ok());
  EXPECT_FALSE(*journal.Find("heat", 35));
  std::filesystem::remove_all(dir);
}

TEST(LayoutJournal, RoundTripsAndNamesTheBadLine) {
  std::map<int, Layout> records = {{4, {{0, Shape{3, 8}}}}, {9, {}}};
  auto back = ParseLayoutRecords(FormatLayoutRecords(records), "j");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, records);
  auto bad = ParseLayoutRecords("4 0:3:8\n9 1:x:8\n", "journal.layout");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("journal.layout:2"), std::string::npos);
  EXPECT_NE(bad.status().message().find("1:x:8"), std::string::npos);
}

TEST(ScrConfigStore, FollowsScrGrammar) {
  // The strings of SCR's own examples/test_config.c.
  ScrConfigStore store;
  auto value = [&](const std::string& query) -> std::string {
    auto words = store.Apply(query);
    EXPECT_TRUE(words.ok() && *words) << query;
    if (!words.ok() || !*words) return "<error>";
    auto found = LookupScrParam(**words, store);
    return found.ok() && *found ? **found : "<none>";
  };
  for (const char* set : {"DEBUG =1", "STORE= /dev/shm/foo GROUP = NODE COUNT  =1",
                          "CKPT=0 INTERNAL=1 GROUP=NODE STORE=/dev/shm TYPE=XOR SET_SIZE=16",
                          "SCR_CACHE_BASE= =/dev/shm/==name"}) {
    auto r = store.Apply(set);
    ASSERT_TRUE(r.ok() && !*r) << set;
  }
  EXPECT_EQ(value("DEBUG"), "1");
  EXPECT_EQ(value("STORE= /dev/shm/foo COUNT"), "1");
  EXPECT_EQ(value("STORE=/dev/shm/foo GROUP"), "NODE");
  EXPECT_EQ(value("CKPT=0 SET_SIZE"), "16");
  EXPECT_EQ(value("CKPT=1 FOOBAR"), "<none>");
  EXPECT_EQ(value("SCR_CACHE_BASE"), "=/dev/shm/==name");
  ASSERT_TRUE(store.Apply("DEBUG=0").ok());
  EXPECT_EQ(value("debug"), "0");
  // Two values of STORE: no one value (SCR returns NULL), each child found.
  ASSERT_TRUE(store.Apply("STORE=/ssd COUNT=2").ok());
  auto words = store.Apply("STORE");
  ASSERT_TRUE(words.ok() && *words);
  auto both = LookupScrParam(**words, store);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("STORE has 2 values"), std::string::npos);
  EXPECT_EQ(value("STORE=/ssd COUNT"), "2");
  ASSERT_TRUE(store.Apply("STORE=").ok());
  EXPECT_EQ(value("STORE"), "<none>");
  EXPECT_FALSE(store.Apply("").ok());
  EXPECT_FALSE(store.Apply("=1").ok());
  EXPECT_FALSE(store.Apply("A B C").ok());
}

TEST(ScrIndex, RoundTripsAndNamesTheBadKey) {
  ScrIndex index;
  ASSERT_TRUE(index.FromJson(R"({"format": 1, "current": 2, "datasets": {
      "1": {"name": "a", "flags": 1, "failed": true, "dropped": false, "files": []},
      "2": {"name": "b", "flags": 3, "failed": false, "dropped": false, "files": ["/p/x"]}}})",
                             "idx").ok());
  EXPECT_FALSE(index.Usable(1));
  EXPECT_TRUE(index.Usable(2));
  EXPECT_TRUE(index.Usable(7));  // not in the index: a committed version counts
  EXPECT_EQ(index.Find("b"), 2);
  EXPECT_EQ(index.current(), 2);
  ScrIndex again;
  ASSERT_TRUE(again.FromJson(index.ToJson(), "idx").ok());
  EXPECT_EQ(again.ToJson(), index.ToJson());
  Status bad = again.FromJson(R"({"format": 1, "current": null, "datasets": {
      "1": {"name": 5, "flags": 1, "failed": true, "dropped": false, "files": []}}})",
                              "scr-index.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("scr-index.json/datasets/1"), std::string::npos) << bad.message();
  // SCR_Current only names a dataset of the index (found by fuzz_scr_index).
  Status stray = again.FromJson(R"({"format": 1, "current": 2, "datasets": {
      "1": {"name": "a", "flags": 1, "failed": false, "dropped": false, "files": []}}})",
                                "scr-index.json");
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.message().find("scr-index.json/current: dataset 2"), std::string::npos)
      << stray.message();
}

// Numbers that are not ints are errors naming the key, not converted:
// "format": 2e73 was undefined behaviour (found by fuzz_scr_index).
TEST(ScrIndex, NumbersThatAreNotIntsNameTheirKey) {
  struct Case {
    const char* text;
    const char* where;
  };
  const Case cases[] = {
      {R"({"format": 19999999999999999999999999999999999999999999999999999999999999999999999999, "current": null, "datasets": {}})",
       "idx/format"},
      {R"({"format": 1.0, "current": null, "datasets": {}})", "idx/format"},
      {R"({"format": 4294967297, "current": null, "datasets": {}})", "idx/format"},
      {R"({"format": 1, "current": 2.5, "datasets": {}})", "idx/current"},
      {R"({"format": 1, "current": -3000000000, "datasets": {}})", "idx/current"},
      {R"({"format": 1, "current": null, "datasets": {
          "1": {"name": "a", "flags": 1e300, "failed": false, "dropped": false, "files": []}}})",
       "idx/datasets/1"},
  };
  for (const Case& c : cases) {
    ScrIndex index;
    Status s = index.FromJson(c.text, "idx");
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.message().find(std::string(c.where) + ":"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace cairn_compat
