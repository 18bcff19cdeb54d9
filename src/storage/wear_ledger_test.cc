#include "storage/wear_ledger.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/json.h"
#include "codec/crc32c.h"
#include "env/fault_env.h"

namespace cairn {
namespace {

constexpr char kDir[] = "/ssd/0/.wear/dev-8-0";

WearLedgerOptions Options(const std::string& writer, bool sync = true) {
  WearLedgerOptions o;
  o.dir = kDir;
  o.writer = writer;
  o.sync = sync;
  return o;
}

std::unique_ptr<WearLedger> MustOpen(Env* env, const WearLedgerOptions& o, double now) {
  auto ledger = WearLedger::Open(env, o, now);
  EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
  return ledger.ok() ? std::move(*ledger) : nullptr;
}

uint64_t LedgerBytes(Env* env, const std::string& dir) {
  auto snap = ReadWearLedger(env, dir);
  EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  return snap.ok() ? snap->bytes : 0;
}

// A fresh directory on the real file system (forked children write there:
// an in-memory env would die with them).
std::string PosixTempDir() {
  char tmpl[] = "/tmp/cairn-wear-test-XXXXXX";
  EXPECT_NE(::mkdtemp(tmpl), nullptr);
  return tmpl;
}

// ------------------------------------------------------------ file format --

WearWriterState SampleState() {
  WearWriterState s;
  s.writer = "r3";
  s.seq = 42;
  s.created = 1767225600.25;
  s.series = {{1767225601.5, 1000}, {1767225602.125, 3000}, {1767225700, 3500}};
  s.bytes = 3500;
  return s;
}

// The example in docs/clc.md, byte for byte: the format is pinned.
constexpr char kSampleFile[] =
    "{\"format\":\"cairn-wear-ledger\",\"version\":2,\"writer\":\"r3\",\"seq\":42,"
    "\"created\":1767225600.25,\"bytes\":3500,\"series\":[[1767225601.5,1000],"
    "[1767225602.125,3000],[1767225700.0,3500]],\"crc32c\":\"CRC\"}\n";

std::string SampleFileWithCrc() {
  std::string body = kSampleFile;
  const std::string member = ",\"crc32c\":\"CRC\"}\n";
  body.replace(body.find(member), member.size(), "}");
  std::string file = kSampleFile;
  file.replace(file.find("CRC"), 3, fmt::format("{:08x}", Crc32c(body.data(), body.size())));
  return file;
}

TEST(WearFileTest, RoundTrip) {
  WearWriterState s = SampleState();
  std::string text = EncodeWearFile(s);
  EXPECT_EQ(text, SampleFileWithCrc());
  auto back = DecodeWearFile(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->writer, s.writer);
  EXPECT_EQ(back->seq, s.seq);
  EXPECT_EQ(back->created, s.created);
  EXPECT_EQ(back->bytes, s.bytes);
  EXPECT_EQ(back->series, s.series);
  // Times are written in their shortest exact form: an awkward double too.
  s.series.back().time = 1767225700.0 + 1.0 / 3;
  back = DecodeWearFile(EncodeWearFile(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->series.back().time, s.series.back().time);
}

TEST(WearFileTest, ReadsVersionOneSlots) {
  // What Cairn wrote before the JSON form (docs/clc.md "Version 1").
  const std::string v1 =
      "cairn-wear-ledger 1\nwriter r3\nseq 42\ncreated 1767225600.25\nbytes 3500\n"
      "samples 3\n1767225601.5 1000\n1767225602.125 3000\n1767225700 3500\n"
      "crc32c c9c66bc5\n";
  auto back = DecodeWearFile(v1);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  WearWriterState s = SampleState();
  EXPECT_EQ(back->writer, s.writer);
  EXPECT_EQ(back->seq, s.seq);
  EXPECT_EQ(back->created, s.created);
  EXPECT_EQ(back->bytes, s.bytes);
  EXPECT_EQ(back->series, s.series);
  std::string bad = v1;
  bad[bad.find("3000")] = '4';
  EXPECT_EQ(DecodeWearFile(bad).status().code(), Code::kCorrupt);
}

TEST(WearFileTest, EveryDamagedByteIsCaught) {
  std::string good = EncodeWearFile(SampleState());
  const uint64_t seed = 20261122;
  std::printf("WearFileTest seed %" PRIu64 "\n", seed);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ (1 + rng() % 255));
    EXPECT_FALSE(DecodeWearFile(bad).ok()) << "byte " << i << " seed " << seed;
  }
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(DecodeWearFile(good.substr(0, n)).ok()) << "truncated to " << n;
  }
}

// Signs a hand-made document, so that the checks behind the CRC are reached.
std::string Signed(Json doc) {
  doc["crc32c"] = fmt::format("{:08x}", Crc32c(doc.dump().data(), doc.dump().size()));
  return doc.dump() + "\n";
}

// Signs a hand-made version-1 body.
std::string SignedV1(const std::string& body) {
  char crc[32];
  std::snprintf(crc, sizeof crc, "crc32c %08x\n", Crc32c(body.data(), body.size()));
  return body + crc;
}

TEST(WearFileTest, ValidCrcButBadContent) {
  const Json head = {{"format", "cairn-wear-ledger"}, {"version", 2}, {"writer", "r0"},
                     {"seq", 1}, {"created", 10}};
  auto doc = [&](Json bytes, Json series) {
    Json d = head;
    d["bytes"] = std::move(bytes);
    d["series"] = std::move(series);
    return d;
  };
  struct Case {
    const char* name;
    Json doc;
    const char* message;
  } cases[] = {
      {"samples out of order", doc(5, {{20, 3}, {19, 5}}), "sample 2 goes back"},
      {"bytes go down", doc(5, {{20, 6}, {21, 5}}), "sample 2 goes back"},
      {"total differs from last sample", doc(9, {{20, 5}}), "total differs"},
      {"bytes without samples", doc(9, Json::array()), "total differs"},
      {"negative time", doc(5, {{-20, 5}}), "sample 1: bad time"},
      {"negative bytes", doc(-5, {{20, 5}}), "/bytes: expected an integer in [0,"},
      {"fractional bytes", doc(5, {{20, 5.5}}), "/series/0/1: expected an integer"},
      {"not a pair", doc(5, {{20, 5, 1}}), "/series/0: expected [time, bytes]"},
      {"string time", doc(5, Json::array({Json::array({"20", 5})})), "/series/0/0: expected a number, got string"},
      {"unknown member", [&] { Json d = doc(0, Json::array()); d["extra"] = 1; return d; }(),
       "unknown member \"extra\""},
      {"bad writer", [&] { Json d = doc(0, Json::array()); d["writer"] = "../x"; return d; }(),
       "bad writer name"},
      {"other version", [&] { Json d = doc(0, Json::array()); d["version"] = 3; return d; }(),
       "/version: expected an integer in [2, 2], got 3"},
      {"other format", [&] { Json d = doc(0, Json::array()); d["format"] = "x"; return d; }(),
       "/format: not a cairn wear ledger"},
  };
  for (const auto& c : cases) {
    auto d = DecodeWearFile(Signed(c.doc));
    ASSERT_FALSE(d.ok()) << c.name;
    EXPECT_EQ(d.status().code(), Code::kCorrupt) << c.name;
    EXPECT_NE(d.status().message().find(c.message), std::string::npos)
        << c.name << ": " << d.status().message();
  }
  auto ok = DecodeWearFile(Signed(doc(5, {{20, 3}, {21, 5}})));
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  // Valid JSON with a valid CRC, but not the writer's form (spaces added).
  std::string spaced = Signed(doc(5, {{20, 3}, {21, 5}}));
  spaced.insert(1, " ");
  EXPECT_EQ(DecodeWearFile(spaced).status().code(), Code::kCorrupt);

  const std::string v1_head = "cairn-wear-ledger 1\nwriter r0\nseq 1\ncreated 10\n";
  for (const std::string& body : {v1_head + "bytes 5\nsamples 2\n20 3\n19 5\n",
                                  v1_head + "bytes 5\nsamples 2\n20 5\n",
                                  v1_head + "bytes 5\nsamples 1\nnan 5\n",
                                  v1_head + "bytes 0\nsamples 99999999\n"}) {
    EXPECT_EQ(DecodeWearFile(SignedV1(body)).status().code(), Code::kCorrupt) << body;
  }
  EXPECT_TRUE(DecodeWearFile(SignedV1(v1_head + "bytes 5\nsamples 2\n20 3\n21 5\n")).ok());
}

TEST(WearFileTest, WriterNames) {
  EXPECT_TRUE(ValidWearWriterName("r0"));
  EXPECT_TRUE(ValidWearWriterName("job-17_rank_3"));
  EXPECT_TRUE(ValidWearWriterName(std::string(64, 'a')));
  EXPECT_FALSE(ValidWearWriterName(std::string(65, 'a')));
  EXPECT_FALSE(ValidWearWriterName(""));
  EXPECT_FALSE(ValidWearWriterName("a/b"));
  EXPECT_FALSE(ValidWearWriterName(".."));
  EXPECT_FALSE(ValidWearWriterName("r0.0"));
}

// ------------------------------------------------------------ time series --

TEST(WearSeriesTest, BoundedKeepsEndsAndRecentDetail) {
  // 10000 updates, one a second. Spacing grows with age about
  // geometrically, by a factor (10000 s / 1 s)^(1 / max) per sample, which
  // bounds the error of a windowed rate: ~16% a step for 64 samples, ~4%
  // for 256 (the default).
  for (auto [max, tolerance] : {std::pair<size_t, double>{64, 0.2}, {256, 0.05}}) {
    SCOPED_TRACE("max " + std::to_string(max));
    std::vector<WearSample> series;
    for (int i = 0; i < 10000; ++i) {
      AddWearSample(&series, {1000.0 + i, static_cast<uint64_t>(i + 1) * 10}, max);
      ASSERT_LE(series.size(), max);
    }
    ASSERT_EQ(series.size(), max);
    EXPECT_EQ(series.front().time, 1000.0);
    EXPECT_EQ(series.front().bytes, 10u);
    EXPECT_EQ(series.back().time, 10999.0);
    EXPECT_EQ(series.back().bytes, 100000u);
    for (size_t i = 1; i < series.size(); ++i) {
      ASSERT_LT(series[i - 1].time, series[i].time);
      ASSERT_LT(series[i - 1].bytes, series[i].bytes);
    }
    // Recent samples are close together, old ones far apart.
    double recent_gap = series[max - 1].time - series[max - 2].time;
    double old_gap = series[2].time - series[1].time;
    EXPECT_LE(recent_gap, 2) << "recent detail lost";
    EXPECT_GT(old_gap, 20 * recent_gap);
    // Rates over windows of 100 s and 1000 s ending now: 10 B/s.
    WearWriterState w;
    w.series = series;
    for (double window : {100.0, 1000.0}) {
      double rate = static_cast<double>(w.BytesAt(10999) - w.BytesAt(10999 - window)) / window;
      EXPECT_NEAR(rate, 10, 10 * tolerance) << "window " << window;
    }
  }
}

TEST(WearSeriesTest, ClockSteppingBackAndSameTime) {
  std::vector<WearSample> s;
  AddWearSample(&s, {100, 5}, 8);
  AddWearSample(&s, {90, 7}, 8);  // clock stepped back: counted at 100
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0], (WearSample{100, 7}));
  AddWearSample(&s, {100, 9}, 8);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].bytes, 9u);
  AddWearSample(&s, {101, 9}, 8);
  EXPECT_EQ(s.size(), 2u);
}

TEST(WearSeriesTest, BytesAtIsAStepFunction) {
  WearWriterState w;
  w.series = {{10, 100}, {20, 300}};
  EXPECT_EQ(w.BytesAt(0), 0u);
  EXPECT_EQ(w.BytesAt(9.99), 0u);
  EXPECT_EQ(w.BytesAt(10), 100u);
  EXPECT_EQ(w.BytesAt(19.99), 100u);
  EXPECT_EQ(w.BytesAt(20), 300u);
  EXPECT_EQ(w.BytesAt(1e12), 300u);
}

// ---------------------------------------------------------- bandwidth math --

TEST(WearBandwidthTest, HandComputedWindows) {
  // Two writers of one node: r0 created at 1000 writes 400 MB at 1037 and
  // 400 MB at 1080; r1 created at 1001 writes 400 MB at 1037.
  WearLedgerSnapshot s;
  s.writers.push_back({"r0", 2, 1000, 800'000'000, {{1037, 400'000'000}, {1080, 800'000'000}}});
  s.writers.push_back({"r1", 1, 1001, 400'000'000, {{1037, 400'000'000}}});
  s.bytes = 1'200'000'000;
  s.created = 1000;
  // Since the run started (window 0, not_before 1000): 800 MB in 42 s.
  EXPECT_DOUBLE_EQ(s.Bandwidth(1042, 0, 1000), 800e6 / 42);
  // A 10 s window (1032, 1042]: 800 MB in 10 s.
  EXPECT_DOUBLE_EQ(s.Bandwidth(1042, 10, 0), 80e6);
  EXPECT_DOUBLE_EQ(s.SpanStart(1042, 10, 0), 1032);
  // A window reaching before the ledger existed starts at its creation.
  EXPECT_DOUBLE_EQ(s.Bandwidth(1042, 3600, 0), 800e6 / 42);
  // (1037, 1090]: only r0's second write.
  EXPECT_DOUBLE_EQ(s.Bandwidth(1090, 53, 0), 400e6 / 53);
  // Nothing in (1080, 1200]: zero.
  EXPECT_DOUBLE_EQ(s.Bandwidth(1200, 100, 0), 0);
  // A span under a second counts as one second.
  EXPECT_DOUBLE_EQ(s.Bandwidth(1037, 0, 1036.5), 800e6);
  // The node series sums the writers.
  EXPECT_EQ(s.Series(), (std::vector<WearSample>{{1037, 800'000'000}, {1080, 1'200'000'000}}));
  EXPECT_EQ(WearLedgerSnapshot{}.Bandwidth(10, 0, 0), 0);
}

// ----------------------------------------------------------------- ledger --

class WearLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = NewMemEnv();
    fault_ = std::make_unique<FaultEnv>(mem_.get());
  }
  std::unique_ptr<Env> mem_;
  std::unique_ptr<FaultEnv> fault_;
};

TEST_F(WearLedgerTest, PersistsAcrossRuns) {
  {
    auto l = MustOpen(fault_.get(), Options("r0"), 1000);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->state().bytes, 0u);
    EXPECT_EQ(l->state().created, 1000);
    // Opening writes nothing.
    EXPECT_EQ(LedgerBytes(mem_.get(), kDir), 0u);
    EXPECT_TRUE(mem_->ListDir(kDir)->empty());
    ASSERT_TRUE(l->Record(100, 1010).ok());
    ASSERT_TRUE(l->Record(50, 1020).ok());
    EXPECT_EQ(l->state().seq, 2u);
  }
  auto l = MustOpen(fault_.get(), Options("r0"), 5000);  // the next run
  ASSERT_TRUE(l);
  EXPECT_EQ(l->state().bytes, 150u);
  EXPECT_EQ(l->state().created, 1000);  // the first run's
  EXPECT_EQ(l->state().series, (std::vector<WearSample>{{1010, 100}, {1020, 150}}));
  ASSERT_TRUE(l->Record(1, 5001).ok());
  EXPECT_EQ(LedgerBytes(mem_.get(), kDir), 151u);
  // Both slots are in use; the newer one wins.
  EXPECT_TRUE(mem_->FileExists(std::string(kDir) + "/r0.0"));
  EXPECT_TRUE(mem_->FileExists(std::string(kDir) + "/r0.1"));
}

TEST_F(WearLedgerTest, WritersOfOneNodeAreSummed) {
  auto a = MustOpen(fault_.get(), Options("r0"), 0);
  auto b = MustOpen(fault_.get(), Options("r1"), 0);
  for (int i = 1; i <= 20; ++i) {
    ASSERT_TRUE(a->Record(i, i).ok());
    ASSERT_TRUE(b->Record(1000, i + 0.5).ok());
  }
  auto snap = ReadWearLedger(mem_.get(), kDir);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->bytes, 210u + 20000u);
  ASSERT_EQ(snap->writers.size(), 2u);
  EXPECT_EQ(snap->writers[0].writer, "r0");
  EXPECT_EQ(snap->writers[1].writer, "r1");
  auto reading = a->Read(21, 0, 0);
  ASSERT_TRUE(reading.ok());
  EXPECT_EQ(reading->ledger_bytes, 20210u);
  EXPECT_DOUBLE_EQ(reading->ledger_bandwidth, 20210.0 / 21);
  EXPECT_EQ(reading->bandwidth_source, WearSource::kLedger);
  EXPECT_FALSE(reading->device_known);
  EXPECT_DOUBLE_EQ(reading->bandwidth, reading->ledger_bandwidth);
  // A missing directory is an empty ledger.
  EXPECT_EQ(LedgerBytes(mem_.get(), "/nowhere"), 0u);
}

TEST_F(WearLedgerTest, RejectsBadOptions) {
  WearLedgerOptions o = Options("rank/0");
  EXPECT_EQ(WearLedger::Open(mem_.get(), o, 0).status().code(), Code::kInvalidArgument);
  o = Options("r0");
  o.max_samples = 2;
  EXPECT_EQ(WearLedger::Open(mem_.get(), o, 0).status().code(), Code::kInvalidArgument);
  o = Options("r0");
  o.dir = "";
  EXPECT_EQ(WearLedger::Open(mem_.get(), o, 0).status().code(), Code::kInvalidArgument);
}

TEST_F(WearLedgerTest, FailedUpdateKeepsCountInMemoryAndRetries) {
  auto l = MustOpen(fault_.get(), Options("r0"), 0);
  ASSERT_TRUE(l->Record(10, 1).ok());
  fault_->FailAt(fault_->operations() + 1, Code::kNoSpace);
  Status s = l->Record(5, 2);
  EXPECT_EQ(s.code(), Code::kNoSpace);
  EXPECT_NE(s.message().find("wear ledger"), std::string::npos) << s.ToString();
  EXPECT_EQ(l->state().bytes, 15u);               // still counted
  EXPECT_EQ(LedgerBytes(mem_.get(), kDir), 10u);  // not yet durable
  auto reading = l->Read(3, 0, 0);                // this writer from memory
  ASSERT_TRUE(reading.ok());
  EXPECT_EQ(reading->ledger_bytes, 15u);
  fault_->ClearFaults();
  ASSERT_TRUE(l->Record(0, 3).ok());              // the retry persists it
  EXPECT_EQ(LedgerBytes(mem_.get(), kDir), 15u);
}

// The number of Env operations one update takes (create, write, fsync,
// rename, fsync dir), measured rather than assumed.
int OpsPerUpdate(Env* base, bool sync) {
  FaultEnv env(base);
  auto l = WearLedger::Open(&env, Options("probe", sync), 0);
  EXPECT_TRUE(l.ok());
  int before = env.operations();
  EXPECT_TRUE((*l)->Record(1, 1).ok());
  return env.operations() - before;
}

TEST_F(WearLedgerTest, PowerLossLosesAtMostTheUpdateInFlight) {
  const int ops = OpsPerUpdate(NewMemEnv().get(), /*sync=*/true);
  ASSERT_GE(ops, 5);
  // Power fails at each operation of the fourth update in turn: every later
  // operation fails, then everything not made durable is dropped. In
  // FaultEnv's model a rename whose directory was not synced loses the
  // renamed name altogether, the old file included: the second slot is
  // what keeps the history then.
  for (int k = 1; k <= ops + 1; ++k) {
    SCOPED_TRACE("power lost at operation " + std::to_string(k) + " of the update");
    auto mem = NewMemEnv();
    FaultEnv env(mem.get());
    {
      auto l = MustOpen(&env, Options("r0"), 0);
      ASSERT_TRUE(l);
      for (int i = 1; i <= 3; ++i) ASSERT_TRUE(l->Record(100, i).ok());
      env.FailAt(env.operations() + k, Code::kIo);
      Status s = l->Record(100, 4);
      EXPECT_EQ(s.ok(), k > ops);
    }
    env.ClearFaults();
    ASSERT_TRUE(env.DropUnsyncedData().ok());
    auto back = WearLedger::Open(mem.get(), Options("r0"), 10);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    uint64_t bytes = (*back)->state().bytes;
    EXPECT_TRUE(bytes == 300 || bytes == 400) << bytes;
    if (k > ops) {
      EXPECT_EQ(bytes, 400u);  // the update completed: durable
    }
    EXPECT_EQ((*back)->state().created, 0);
    // And the ledger goes on from there.
    ASSERT_TRUE((*back)->Record(1, 11).ok());
    EXPECT_EQ(LedgerBytes(mem.get(), kDir), bytes + 1);
  }
}

TEST(WearLedgerKillTest, SigkillDuringAnUpdateLosesAtMostThatUpdate) {
  // Without fsync (a SIGKILL loses no page-cache data, so it changes
  // nothing here, and the disk is spared): create, write, rename.
  const int ops = OpsPerUpdate(NewMemEnv().get(), /*sync=*/false);
  ASSERT_GE(ops, 3);
  const std::string root = PosixTempDir();
  for (int k = 1; k <= ops; ++k) {
    SCOPED_TRACE("killed at operation " + std::to_string(k) + " of the update");
    WearLedgerOptions o = Options("r0", /*sync=*/false);
    o.dir = JoinPath(root, "kill" + std::to_string(k));
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      FaultEnv env(PosixEnv());
      auto l = WearLedger::Open(&env, o, 0);
      if (!l.ok()) ::_exit(2);
      for (int i = 1; i <= 3; ++i) {
        if (!(*l)->Record(100, i).ok()) ::_exit(3);
      }
      env.KillAt(env.operations() + k);
      (void)(*l)->Record(100, 4);  // killed in here
      ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
    ASSERT_EQ(WTERMSIG(status), SIGKILL);
    auto back = WearLedger::Open(PosixEnv(), o, 10);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    uint64_t bytes = (*back)->state().bytes;
    EXPECT_TRUE(bytes == 300 || bytes == 400) << bytes;
    // Open removed the temporary the killed update may have left.
    auto entries = PosixEnv()->ListDir(o.dir);
    ASSERT_TRUE(entries.ok());
    for (const auto& e : *entries) {
      EXPECT_EQ(e.name.find(".tmp."), std::string::npos) << e.name;
    }
  }
  ASSERT_TRUE(PosixEnv()->DeleteRecursive(root).ok());
}

TEST(WearLedgerConcurrencyTest, RanksUpdatingAtOnceLoseNoCounts) {
  // Four processes (the ranks of one node) record into one ledger
  // directory at the same time, each through its own writer.
  const std::string root = PosixTempDir();
  const std::string dir = JoinPath(root, "dev");
  constexpr int kWriters = 4, kRecords = 60;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      WearLedgerOptions o = Options("r" + std::to_string(w), /*sync=*/false);
      o.dir = dir;
      auto l = WearLedger::Open(PosixEnv(), o, 0);
      if (!l.ok()) ::_exit(2);
      for (int i = 0; i < kRecords; ++i) {
        if (!(*l)->Record(static_cast<uint64_t>(w + 1), i).ok()) ::_exit(3);
        // Readers see whole files while others rename theirs.
        if (!ReadWearLedger(PosixEnv(), dir).ok()) ::_exit(4);
      }
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  auto snap = ReadWearLedger(PosixEnv(), dir);
  ASSERT_TRUE(snap.ok());
  EXPECT_TRUE(snap->problems.empty());
  EXPECT_EQ(snap->bytes, static_cast<uint64_t>(kRecords * (1 + 2 + 3 + 4)));
  EXPECT_EQ(snap->writers.size(), static_cast<size_t>(kWriters));
  ASSERT_TRUE(PosixEnv()->DeleteRecursive(root).ok());
}

TEST_F(WearLedgerTest, DamagedSlots) {
  {
    auto l = MustOpen(mem_.get(), Options("r0"), 0);
    ASSERT_TRUE(l->Record(10, 1).ok());  // slot 1
    ASSERT_TRUE(l->Record(10, 2).ok());  // slot 0
    auto other = MustOpen(mem_.get(), Options("r1"), 0);
    ASSERT_TRUE(other->Record(7, 1).ok());  // slot 1 only
  }
  // Damage r0's newer slot: its older one counts, and the reader says so.
  std::string newer = std::string(kDir) + "/r0.0";
  ASSERT_TRUE(mem_->WriteFileAtomic(newer, "garbage\n", 8, true).ok());
  auto snap = ReadWearLedger(mem_.get(), kDir);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->bytes, 10u + 7u);
  ASSERT_EQ(snap->problems.size(), 1u);
  EXPECT_NE(snap->problems[0].find("using the other"), std::string::npos) << snap->problems[0];
  auto l = MustOpen(mem_.get(), Options("r0"), 0);
  EXPECT_EQ(l->state().bytes, 10u);
  ASSERT_TRUE(l->Record(1, 3).ok());  // overwrites the damaged slot, not the good one
  EXPECT_EQ(LedgerBytes(mem_.get(), kDir), 11u + 7u);

  // r1's only slot damaged: reading names it; opening as r1 refuses to
  // start from zero.
  std::string only = std::string(kDir) + "/r1.1";
  ASSERT_TRUE(mem_->WriteFileAtomic(only, "x", 1, true).ok());
  snap = ReadWearLedger(mem_.get(), kDir);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->bytes, 11u);
  ASSERT_EQ(snap->problems.size(), 1u);
  EXPECT_NE(snap->problems[0].find("not counted"), std::string::npos) << snap->problems[0];
  auto r1 = WearLedger::Open(mem_.get(), Options("r1"), 0);
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().code(), Code::kCorrupt);
  EXPECT_NE(r1.status().message().find(only), std::string::npos) << r1.status().ToString();

  // A slot holding another writer's state is not taken for this one.
  auto text = mem_->ReadFileToString(std::string(kDir) + "/r0.1");
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(mem_->WriteFileAtomic(std::string(kDir) + "/r2.0", text->data(), text->size(), true).ok());
  snap = ReadWearLedger(mem_.get(), kDir);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->bytes, 11u);
  // Other files in the directory are ignored.
  ASSERT_TRUE(mem_->WriteFileAtomic(std::string(kDir) + "/README", "x", 1, true).ok());
  ASSERT_TRUE(mem_->WriteFileAtomic(std::string(kDir) + "/r5.0.tmp.77", "x", 1, true).ok());
  EXPECT_EQ(LedgerBytes(mem_.get(), kDir), 11u);
}

TEST(WearLedgerDirTest, Names) {
  EXPECT_EQ(WearLedgerDir("/scratch/ssd/3", DeviceNumber{259, 1}), "/scratch/ssd/3/.wear/dev-259-1");
  EXPECT_EQ(WearLedgerDir("/scratch/ssd/3/", std::nullopt), "/scratch/ssd/3/.wear/dev-unknown");
}

// ------------------------------------------------------------------ sysfs --

// A fake /sys with one disk, sda, with partitions sda1 and sda2, and a
// device-mapper disk dm-0.
class FakeSysfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    Put("/fake/dev/block/8:0/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n");
    Put("/fake/dev/block/8:1/uevent", "MAJOR=8\nMINOR=1\nDEVNAME=sda1\nDEVTYPE=partition\nPARTN=1\n");
    Put("/fake/dev/block/8:2/uevent", "MAJOR=8\nMINOR=2\nDEVNAME=sda2\nDEVTYPE=partition\n");
    Put("/fake/dev/block/253:0/uevent", "MAJOR=253\nMINOR=0\nDEVNAME=dm-0\nDEVTYPE=disk\n");
    Put("/fake/dev/block/9:9/uevent", "MAJOR=9\nMINOR=9\nDEVTYPE=disk\n");
    Put("/fake/dev/block/9:10/uevent", "MAJOR=9\nMINOR=10\nDEVNAME=sdz1\nDEVTYPE=partition\n");
    ASSERT_TRUE(env_->CreateDirs("/fake/block/sda/sda1").ok());
    ASSERT_TRUE(env_->CreateDirs("/fake/block/sda/sda2").ok());
    ASSERT_TRUE(env_->CreateDirs("/fake/block/loop0").ok());
    SetSectors("sda", 1000);
    Put("/fake/block/dm-0/stat", "1 2 3 4 5 6 7 8 9 10 11\n");
  }
  void Put(const std::string& path, const std::string& text) {
    ASSERT_TRUE(env_->CreateDirs(DirName(path)).ok());
    ASSERT_TRUE(env_->WriteFileAtomic(path, text.data(), text.size(), false).ok());
  }
  // The real layout: 17 fields, padded; field 7 is sectors written.
  void SetSectors(const std::string& disk, uint64_t sectors) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "  379769    36438 640851266 17025703   895732   103930 %" PRIu64
                  " 20004469        0   732780 37355874   129306     1166 808397152   213214   "
                  "107952   112487\n",
                  sectors);
    Put("/fake/block/" + disk + "/stat", line);
  }
  std::unique_ptr<Env> env_;
};

TEST_F(FakeSysfsTest, ResolvesDisksAndPartitions) {
  auto disk = ResolveBlockDevice(env_.get(), "/fake", {8, 0});
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  EXPECT_EQ(disk->name, "sda");
  EXPECT_EQ(disk->partition, "");
  EXPECT_EQ(disk->stat_path, "/fake/block/sda/stat");
  // A partition wears its whole disk.
  auto part = ResolveBlockDevice(env_.get(), "/fake", {8, 2});
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(part->name, "sda");
  EXPECT_EQ(part->partition, "sda2");
  auto dm = ResolveBlockDevice(env_.get(), "/fake", {253, 0});
  ASSERT_TRUE(dm.ok());
  EXPECT_EQ(dm->name, "dm-0");
  auto bytes = ReadDeviceBytesWritten(env_.get(), *part);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, 1000u * 512);
  EXPECT_EQ(*ReadDeviceBytesWritten(env_.get(), *dm), 7u * 512);
}

TEST_F(FakeSysfsTest, WhatCannotBeResolved) {
  EXPECT_EQ(ResolveBlockDevice(env_.get(), "/fake", {0, 27}).status().code(), Code::kNotFound);  // tmpfs
  EXPECT_EQ(ResolveBlockDevice(env_.get(), "/fake", {8, 7}).status().code(), Code::kNotFound);   // absent
  EXPECT_EQ(ResolveBlockDevice(env_.get(), "/fake", {9, 9}).status().code(), Code::kCorrupt);    // no DEVNAME
  EXPECT_EQ(ResolveBlockDevice(env_.get(), "/fake", {9, 10}).status().code(), Code::kNotFound);  // orphan partition
  Put("/fake/block/bad/stat", "1 2 3\n");
  BlockDevice bad{"bad", "", "/fake/block/bad/stat"};
  EXPECT_EQ(ReadDeviceBytesWritten(env_.get(), bad).status().code(), Code::kCorrupt);
}

// An env whose readable files claim to be 4096 bytes long whatever they
// hold, and fail a read past their real end the way the posix env does:
// what sysfs attribute files look like to Env.
class PlaceholderSizeEnv final : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override {
    CAIRN_ASSIGN_OR_RETURN(auto file, target()->NewReadableFile(path));
    return std::unique_ptr<ReadableFile>(new File(std::move(file)));
  }

 private:
  class File final : public ReadableFile {
   public:
    explicit File(std::unique_ptr<ReadableFile> base) : base_(std::move(base)) {}
    Status ReadAt(uint64_t offset, void* dst, size_t n) const override { return base_->ReadAt(offset, dst, n); }
    uint64_t size() const override { return 4096; }
    const std::string& path() const override { return base_->path(); }

   private:
    std::unique_ptr<ReadableFile> base_;
  };
};

TEST_F(FakeSysfsTest, PseudoFilesWithPlaceholderSizes) {
  PlaceholderSizeEnv sysfs(env_.get());
  EXPECT_FALSE(sysfs.ReadFileToString("/fake/block/sda/stat").ok());  // why ReadPseudoFile exists
  auto text = sysfs.ReadPseudoFile("/fake/block/sda/stat");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, *env_->ReadFileToString("/fake/block/sda/stat"));
  auto part = ResolveBlockDevice(&sysfs, "/fake", {8, 1});
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(*ReadDeviceBytesWritten(&sysfs, *part), 1000u * 512);
  EXPECT_FALSE(sysfs.ReadPseudoFile("/fake/none").ok());
}

TEST_F(FakeSysfsTest, LedgerReportsWhichSourceItUses) {
  WearLedgerOptions o;
  o.dir = "/ssd/.wear/dev-8-1";
  o.writer = "r0";
  o.device = DeviceNumber{8, 1};
  o.sysfs_root = "/fake";
  auto l = MustOpen(env_.get(), o, 100);
  ASSERT_TRUE(l);
  ASSERT_TRUE(l->device());
  EXPECT_EQ(l->device()->name, "sda");

  // First reading: one kernel sample, no device rate yet.
  auto r = l->Read(100, 0, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->device_known);
  EXPECT_EQ(r->device_bytes, 1000u * 512);
  EXPECT_FALSE(r->device_bandwidth_known);
  EXPECT_EQ(r->bandwidth_source, WearSource::kLedger);

  // Cairn writes 10 MB in the next 10 s while the disk sees 40 MB (another
  // program writes too): the kernel's rate is the larger and is used.
  ASSERT_TRUE(l->Record(10'000'000, 110).ok());
  SetSectors("sda", 1000 + 40'000'000 / 512);
  r = l->Read(110, 0, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->ledger_bandwidth, 1e6);
  ASSERT_TRUE(r->device_bandwidth_known);
  EXPECT_NEAR(r->device_bandwidth, 4e6, 100);
  EXPECT_EQ(r->bandwidth_source, WearSource::kSysfs);
  EXPECT_DOUBLE_EQ(r->bandwidth, r->device_bandwidth);
  EXPECT_STREQ(WearSourceName(r->bandwidth_source), "sysfs");

  // Cairn's writes still in the page cache are not in the kernel's count
  // yet: the ledger's rate is the larger, and is used.
  ASSERT_TRUE(l->Record(90'000'000, 120).ok());
  r = l->Read(120, 0, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->ledger_bandwidth, 100e6 / 20);
  EXPECT_EQ(r->bandwidth_source, WearSource::kLedger);
  EXPECT_EQ(r->ledger_bytes, 100'000'000u);

  // A window: the kernel's rate is over the readings inside it (plus the
  // last one before it).
  SetSectors("sda", 1000 + 40'000'000 / 512 + 100'000'000 / 512);
  r = l->Read(130, 15, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->span_start, 115);
  EXPECT_NEAR(r->device_bandwidth, 100e6 / 20, 100);  // from the reading at 110
  EXPECT_DOUBLE_EQ(r->ledger_bandwidth, 90e6 / 15);

  // The stat file vanishing makes a problem line, not an error.
  ASSERT_TRUE(env_->DeleteFile("/fake/block/sda/stat").ok());
  r = l->Read(140, 0, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->device_known);
  EXPECT_EQ(r->bandwidth_source, WearSource::kLedger);
  ASSERT_FALSE(r->problems.empty());
  EXPECT_NE(r->problems.back().find("block device"), std::string::npos);
}

TEST_F(FakeSysfsTest, UnresolvedDeviceIsAProblemNotAnError) {
  WearLedgerOptions o;
  o.dir = "/ssd/.wear/dev-0-27";
  o.writer = "r0";
  o.device = DeviceNumber{0, 27};
  o.sysfs_root = "/fake";
  auto l = MustOpen(env_.get(), o, 0);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->device());
  auto r = l->Read(1, 0, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->device_known);
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_NE(r->problems[0].find("not a block device"), std::string::npos) << r->problems[0];
}

TEST(RealSysfsTest, ThisMachinesDiskIfAny) {
  // The disk under /tmp, read through the real env, where there is one
  // (containers on overlayfs have none: then there is nothing to check).
  auto dev = DeviceOf("/tmp");
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  auto disk = ResolveBlockDevice(PosixEnv(), "/sys", *dev);
  if (!disk.ok()) GTEST_SKIP() << "no block device behind /tmp: " << disk.status().ToString();
  auto bytes = ReadDeviceBytesWritten(PosixEnv(), *disk);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes % 512, 0u);
  std::printf("/tmp is on %s (%s): %" PRIu64 " bytes written since boot\n", disk->name.c_str(),
              dev->ToString().c_str(), *bytes);
}

}  // namespace
}  // namespace cairn
