#include "runtime/io_profiler.h"

#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm/thread_comm.h"
#include "env/fake_sysfs.h"
#include "model/io_profile.h"

namespace cairn {
namespace {

// The fake sysfs tree's env, also recording the profiler's scratch files:
// evictions and read opens, in order.
class RecordingEnv : public SysfsRecordingEnv {
 public:
  explicit RecordingEnv(Env* target) : SysfsRecordingEnv(target) {}

  Status EvictFromCache(const std::string& p) override {
    Event("evict " + p);
    return target()->EvictFromCache(p);
  }
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& p) override {
    if (p.find("/.cairn-profile-") != std::string::npos) Event("read " + p);
    return target()->NewReadableFile(p);
  }
  void Event(const std::string& what) {
    std::lock_guard<std::mutex> lock(events_mu_);
    events.push_back(what);
  }

  std::vector<std::string> events;

 private:
  std::mutex events_mu_;
};

TEST(IoProfilerTest, ParallelismLevels) {
  EXPECT_EQ(ParallelismLevels(3), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(ParallelismLevels(48), (std::vector<int>{1, 2, 4, 8, 16, 32, 48}));
}

Config TestConfig() {
  Config c;
  c.dir = "/data";
  c.tier(TierKind::kMemory).path = "/shm/cairn";
  c.tier(TierKind::kSsd).path = "{dir}/ssd/{node}";
  c.tier(TierKind::kPfs).path = "{dir}/pfs";
  return c;
}

ProfilerOptions SmallOptions() {
  ProfilerOptions o;
  o.max_parallelism = 2;
  o.bytes = 256 << 10;
  o.block_sizes = {64 << 10, 128 << 10};
  return o;
}

TEST(IoProfilerTest, FullProfileWithDvfsAndRaplLoadsInTheModel) {
  auto mem = NewMemEnv();
  RecordingEnv env(mem.get());
  FakeCpufreq(&env, true);
  FakeRapl(&env);
  env.rapl_step_ = 300000000;  // 300 J per reading: wraps every few readings
  env.rapl_max_ = 1000000000;
  Config config = TestConfig();
  ProfilerOptions o = SmallOptions();
  int progress_calls = 0;
  o.progress = [&](int done, int total, const std::string&) {
    EXPECT_LE(done, total);
    ++progress_calls;
  };
  auto r = RunIoProfile(&env, config, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const IoProfile& p = r->profile;
  EXPECT_EQ(p.power_source, PowerSource::kRapl);
  EXPECT_EQ(p.frequencies_khz, (std::vector<uint32_t>{800000, 1400000, 2100000}));
  ASSERT_EQ(p.devices.size(), 3u);
  EXPECT_EQ(p.devices[0].name, "memory");
  EXPECT_EQ(p.devices[1].name, "ssd");
  EXPECT_EQ(p.devices[2].name, "pfs");
  EXPECT_EQ(p.devices[1].parallelism, (std::vector<int>{1, 2}));
  // 3 frequencies x 3 tiers x 2 levels x 2 block sizes x 2 ops.
  EXPECT_EQ(r->samples.size(), 72u);
  EXPECT_EQ(progress_calls, 37);
  for (const ProfileSample& s : r->samples) {
    EXPECT_GT(s.watts, 0) << s.device;
    EXPECT_GE(s.bytes, 256u << 10);
  }
  // Every frequency was set on both policies, in order, then restored.
  std::vector<std::string> speeds;
  for (const auto& [path, value] : env.writes) {
    if (path == std::string(kPolicy1) + "/scaling_setspeed") speeds.push_back(value);
  }
  ASSERT_GE(speeds.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(speeds.end() - 4, speeds.end()),
            (std::vector<std::string>{"800000", "1400000", "2100000", "1400000"}));
  EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_governor"), "ondemand");
  // One grid per block size, holding that block's own samples.
  for (const DeviceIoProfile& d : p.devices) {
    ASSERT_EQ(d.blocks.size(), 2u) << d.name;
    EXPECT_EQ(d.blocks[0].block_size, 64u << 10);
    EXPECT_EQ(d.blocks[1].block_size, 128u << 10);
  }
  for (const ProfileSample& s : r->samples) {
    const DeviceIoProfile* d = p.FindDevice(s.device);
    ASSERT_NE(d, nullptr);
    size_t fi = 0, pi = 0, bi = 0;
    while (p.frequencies_khz[fi] != s.frequency_khz) ++fi;
    while (d->parallelism[pi] != s.parallelism) ++pi;
    while (d->blocks[bi].block_size != s.block_size) ++bi;
    EXPECT_EQ(d->blocks[bi].op(s.op).throughput_bps[fi][pi], s.throughput_bps) << s.device;
    EXPECT_EQ(d->blocks[bi].op(s.op).watts[fi][pi], s.watts) << s.device;
  }
  // Every read of the persisting tiers follows the eviction of its file;
  // the memory tier is not evicted (its pages are the file).
  std::map<std::string, int> evicted;  // path -> evictions not yet followed by a read
  int ssd_pfs_reads = 0;
  for (const std::string& e : env.events) {
    const std::string path = e.substr(e.find(' ') + 1);
    if (e.rfind("evict ", 0) == 0) {
      EXPECT_EQ(path.rfind("/shm/", 0), std::string::npos) << e;
      ++evicted[path];
    } else if (path.rfind("/shm/", 0) != 0) {
      EXPECT_EQ(evicted[path], 1) << e;
      evicted[path] = 0;
      ++ssd_pfs_reads;
    }
  }
  // 3 frequencies x 2 block sizes x (1 + 2 threads) x 2 tiers.
  EXPECT_EQ(ssd_pfs_reads, 36);
  // No scratch file is left behind.
  auto left = env.ListDir("/data/ssd/0");
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  // What `cairn model --profile` does with the file.
  auto parsed = ParseIoProfile(SerializeIoProfile(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->devices.size(), 3u);
  EXPECT_NE(p.description.find("DVFS: swept 3 frequencies"), std::string::npos) << p.description;
  EXPECT_NE(p.description.find("RAPL"), std::string::npos);
}

TEST(IoProfilerTest, WithoutDvfsOrRaplUsesThePowerTableAndSaysSo) {
  auto mem = NewMemEnv();
  Put(mem.get(), "/proc/cpuinfo", "cpu MHz\t\t: 2596.120\n");
  Config config = TestConfig();
  config.tier(TierKind::kPfs).enabled = false;
  ProfilerOptions o = SmallOptions();
  auto none = RunIoProfile(mem.get(), config, o);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().ToString().find("--power-table"), std::string::npos);

  auto table = ParsePowerTable(R"({"frequencies_khz": [2600000], "idle_w": [40],
      "core_busy_w": [6], "devices": {"ssd": {"read": 2.5, "write": 3.5}}})",
                               "p.json");
  ASSERT_TRUE(table.ok());
  o.power_table = *table;
  o.power_table_name = "power.json";
  auto r = RunIoProfile(mem.get(), config, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const IoProfile& p = r->profile;
  EXPECT_EQ(p.power_source, PowerSource::kTable);
  EXPECT_EQ(p.frequencies_khz, (std::vector<uint32_t>{2596120}));
  EXPECT_EQ(p.idle_w, (std::vector<double>{40}));
  ASSERT_EQ(p.devices.size(), 2u);
  EXPECT_EQ(p.devices[1].active_w[static_cast<int>(IoOp::kWrite)], 3.5);
  EXPECT_NE(p.description.find("DVFS unavailable"), std::string::npos) << p.description;
  EXPECT_NE(p.description.find("power: NOT measured"), std::string::npos);
  EXPECT_NE(p.description.find("process parallelism not measured"), std::string::npos);
  auto parsed = ParseIoProfile(SerializeIoProfile(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
}

// Every call is `step` seconds after the one before: a rank's pass, timed by
// two calls, lasts exactly `step`.
class SteppingClock final : public Clock {
 public:
  explicit SteppingClock(double step) : step_(step) {}
  double MonotonicSeconds() const override { return now_ += step_; }
  double WallSeconds() const override { return now_; }

 private:
  double step_;
  mutable double now_ = 1000;
};

// Fails every file creation in the scratch directory of one rank.
class FailingRankEnv : public RecordingEnv {
 public:
  FailingRankEnv(Env* target, int rank) : RecordingEnv(target), rank_(rank) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p,
                                                        const WriteOptions& o) override {
    if (p.find(fmt::format("/.cairn-profile-{}-{}/", ::getpid(), rank_)) != std::string::npos) {
      return Error(Code::kNoSpace, "'{}': No space left on device", p);
    }
    return RecordingEnv::NewWritableFile(p, o);
  }

 private:
  int rank_;
};

// Runs RunIoProfile on one thread per rank of `nodes` (the node of each
// rank); rank r's clock steps r + 1 seconds.
std::vector<Result<ProfileResult>> RunRanks(Env* env, const Config& config,
                                            const std::vector<int>& nodes,
                                            const ProfilerOptions& base) {
  std::vector<Result<ProfileResult>> results(nodes.size(), Status(Code::kInternal, "not run"));
  Status started = ::cairn::RunRanks(env, nodes, [&](Comm& comm) {
    SteppingClock clock(comm.rank() + 1);
    ProfilerOptions o = base;
    o.comm = &comm;
    o.clock = &clock;
    results[static_cast<size_t>(comm.rank())] = RunIoProfile(env, config, o);
  });
  EXPECT_TRUE(started.ok()) << started.ToString();
  return results;
}

ProfilerOptions TableOptions() {
  ProfilerOptions o = SmallOptions();
  o.max_parallelism = 0;
  auto table =
      ParsePowerTable(R"({"frequencies_khz": [0], "idle_w": [40], "core_busy_w": [6]})", "p.json");
  EXPECT_TRUE(table.ok());
  o.power_table = *table;
  return o;
}

TEST(IoProfilerTest, RanksOfOneNodeMeasureProcessParallelism) {
  auto mem = NewMemEnv();
  RecordingEnv env(mem.get());
  Config config = TestConfig();
  config.tier(TierKind::kPfs).enabled = false;
  auto results = RunRanks(&env, config, {0, 0, 0}, TableOptions());
  for (size_t r = 0; r < results.size(); ++r) {
    ASSERT_TRUE(results[r].ok()) << "rank " << r << ": " << results[r].status().ToString();
    EXPECT_EQ(results[r]->helper, r != 0);
  }
  EXPECT_TRUE(results[1]->samples.empty());
  const ProfileResult& r0 = *results[0];
  const IoProfile& p = r0.profile;
  ASSERT_EQ(p.devices.size(), 2u);
  for (const DeviceIoProfile& d : p.devices) {
    EXPECT_EQ(d.parallelism, (std::vector<int>{1, 2, 3})) << d.name;
    EXPECT_EQ(d.parallelism_kind, ParallelismKind::kProcesses) << d.name;
  }
  // At p processes, ranks 0..p-1 write; rank p-1 is the slowest (its passes
  // last p seconds), so the node moved all p writers' bytes in p seconds.
  ASSERT_EQ(r0.samples.size(), 2u * 3 * 2 * 2);
  for (const ProfileSample& s : r0.samples) {
    const uint64_t per_writer = ((256u << 10) / s.parallelism + s.block_size - 1) / s.block_size;
    EXPECT_EQ(s.bytes, per_writer * s.block_size * s.parallelism) << s.device;
    EXPECT_DOUBLE_EQ(s.seconds, s.parallelism) << s.device;
    EXPECT_DOUBLE_EQ(s.throughput_bps, static_cast<double>(s.bytes) / s.parallelism);
  }
  EXPECT_NE(p.description.find("parallelism is processes: 1..3 of the 3 ranks"),
            std::string::npos)
      << p.description;
  // Each rank read only its own file, after evicting it (ssd), and wrote
  // into its own scratch directory, which is gone.
  std::map<std::string, int> reads_by_rank;
  std::map<std::string, int> evicted;
  for (const std::string& e : env.events) {
    const std::string path = e.substr(e.find(' ') + 1);
    const std::string dir = DirName(path);
    EXPECT_EQ(BaseName(path), "t0") << e;  // one file per rank
    if (e.rfind("evict ", 0) == 0) {
      ++evicted[path];
      continue;
    }
    ++reads_by_rank[dir.substr(dir.rfind('-') + 1)];
    if (path.rfind("/shm/", 0) != 0) {
      EXPECT_EQ(evicted[path], 1) << e;
      evicted[path] = 0;
    }
  }
  // Per tier and block size: rank 0 reads at p = 1, 2, 3, rank 1 at 2 and
  // 3, rank 2 at 3.
  EXPECT_EQ(reads_by_rank, (std::map<std::string, int>{{"0", 12}, {"1", 8}, {"2", 4}}));
  auto left = env.ListDir("/data/ssd/0");
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  auto parsed = ParseIoProfile(SerializeIoProfile(p));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->devices[0].parallelism_kind, ParallelismKind::kProcesses);
}

TEST(IoProfilerTest, ProcessParallelismStopsAtTheNodeAndMaxParallelism) {
  auto mem = NewMemEnv();
  Config config = TestConfig();
  config.tier(TierKind::kSsd).enabled = false;
  config.tier(TierKind::kPfs).enabled = false;
  ProfilerOptions o = TableOptions();
  o.max_parallelism = 8;
  // Ranks 0, 1 and 3 share rank 0's node; rank 2 is elsewhere and writes
  // nothing.
  auto results = RunRanks(mem.get(), config, {0, 0, 1, 0}, o);
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status().ToString();
  const IoProfile& p = results[0]->profile;
  EXPECT_EQ(p.devices[0].parallelism, (std::vector<int>{1, 2, 3}));
  // Rank 3, the node's third rank, is the slowest at p = 3 (4 s steps).
  for (const ProfileSample& s : results[0]->samples) {
    EXPECT_DOUBLE_EQ(s.seconds, s.parallelism == 3 ? 4 : s.parallelism);
  }
  EXPECT_NE(p.description.find("--max-parallelism 8 exceeds the 3 ranks"), std::string::npos);
  EXPECT_NE(p.description.find("other 1 node(s) measured nothing"), std::string::npos);
}

TEST(IoProfilerTest, OneRankOnTheNodeMeasuresThreads) {
  auto mem = NewMemEnv();
  Config config = TestConfig();
  config.tier(TierKind::kSsd).enabled = false;
  config.tier(TierKind::kPfs).enabled = false;
  ProfilerOptions o = TableOptions();
  o.max_parallelism = 2;
  auto results = RunRanks(mem.get(), config, {0, 1}, o);
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.status().ToString();
  const IoProfile& p = results[0]->profile;
  EXPECT_EQ(p.devices[0].parallelism, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.devices[0].parallelism_kind, ParallelismKind::kThreads);
  EXPECT_TRUE(results[1]->helper);
  // Only rank 0 (1 s steps) timed anything.
  for (const ProfileSample& s : results[0]->samples) EXPECT_DOUBLE_EQ(s.seconds, 1);
  EXPECT_NE(p.description.find("parallelism is threads of rank 0"), std::string::npos);
}

TEST(IoProfilerTest, AFailureOnOneRankFailsEveryRankWithItsError) {
  auto mem = NewMemEnv();
  FailingRankEnv env(mem.get(), 1);
  Config config = TestConfig();
  auto results = RunRanks(&env, config, {0, 0, 0}, TableOptions());
  for (size_t r = 0; r < results.size(); ++r) {
    ASSERT_FALSE(results[r].ok()) << "rank " << r;
    EXPECT_EQ(results[r].status().code(), Code::kNoSpace);
    EXPECT_NE(results[r].status().message().find("rank 1: '/shm/cairn/.cairn-profile-"),
              std::string::npos)
        << results[r].status().message();
  }
  // Every rank removed its scratch directory on the way out.
  auto left = env.ListDir("/shm/cairn");
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
}

TEST(IoProfilerTest, RankZerosSetupFailureReachesEveryRank) {
  auto mem = NewMemEnv();
  auto results = RunRanks(mem.get(), TestConfig(), {0, 0}, SmallOptions());  // no power source
  for (const auto& r : results) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("rank 0: no power source"), std::string::npos)
        << r.status().message();
  }
}

}  // namespace
}  // namespace cairn
