#include "runtime/io_profiler.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/io_profile.h"

namespace cairn {
namespace {

// Records every value written to a file (the whole content at Close), so
// tests see the order in which cpufreq attributes were set.
class RecordingEnv : public EnvWrapper {
 public:
  explicit RecordingEnv(Env* target) : EnvWrapper(target) {}

  class File : public WritableFile {
   public:
    File(RecordingEnv* env, std::unique_ptr<WritableFile> f) : env_(env), f_(std::move(f)) {}
    Status Append(const void* d, size_t n) override {
      data_.append(static_cast<const char*>(d), n);
      return f_->Append(d, n);
    }
    Status Sync() override { return f_->Sync(); }
    Status Close() override {
      if (!closed_) env_->Record(f_->path(), data_);
      closed_ = true;
      return f_->Close();
    }
    const std::string& path() const override { return f_->path(); }

   private:
    RecordingEnv* env_;
    std::unique_ptr<WritableFile> f_;
    std::string data_;
    bool closed_ = false;
  };

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p,
                                                        const WriteOptions& o) override {
    if (read_only_sys_ && p.rfind("/sys/", 0) == 0) {
      return Error(Code::kIo, "open '{}': Permission denied", p);
    }
    CAIRN_ASSIGN_OR_RETURN(auto f, target()->NewWritableFile(p, o));
    return std::unique_ptr<WritableFile>(new File(this, std::move(f)));
  }

  // Fake RAPL: every read of an energy_uj advances that counter by step,
  // wrapping at max, as the hardware does between two readings.
  Result<std::string> ReadFileToString(const std::string& p) override {
    if (rapl_step_ > 0 && p.size() > 9 && p.compare(p.size() - 9, 9, "energy_uj") == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      uint64_t& c = counters_[p];
      c += rapl_step_;
      if (c > rapl_max_) c -= rapl_max_;
      ++rapl_reads_;
      return std::to_string(c);
    }
    return target()->ReadFileToString(p);
  }

  void Record(const std::string& path, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (path.rfind("/sys/", 0) == 0) writes.emplace_back(path, value);
  }

  std::vector<std::pair<std::string, std::string>> writes;  // sysfs only
  bool read_only_sys_ = false;
  uint64_t rapl_step_ = 0;
  uint64_t rapl_max_ = 0;
  int rapl_reads_ = 0;
  std::map<std::string, uint64_t> counters_;
  std::mutex mu_;
};

void Put(Env* env, const std::string& path, const std::string& value) {
  ASSERT_TRUE(env->CreateDirs(DirName(path)).ok());
  ASSERT_TRUE(env->WriteFileAtomic(path, value.data(), value.size(), false).ok()) << path;
}

std::string Get(Env* env, const std::string& path) {
  auto s = env->ReadFileToString(path);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

const char* kPolicy0 = "/sys/devices/system/cpu/cpufreq/policy0";
const char* kPolicy1 = "/sys/devices/system/cpu/cpufreq/policy1";

void FakeCpufreq(Env* env, bool userspace) {
  for (const char* d : {kPolicy0, kPolicy1}) {
    std::string p = d;
    Put(env, p + "/scaling_available_frequencies", "2100000 1400000 800000 \n");
    Put(env, p + "/scaling_governor", "ondemand\n");
    Put(env, p + "/scaling_available_governors",
        userspace ? "ondemand userspace performance\n" : "ondemand performance powersave\n");
    if (userspace) Put(env, p + "/scaling_setspeed", "<unsupported>\n");
    Put(env, p + "/scaling_min_freq", "1400000\n");
    Put(env, p + "/scaling_max_freq", "2100000\n");
    Put(env, p + "/scaling_cur_freq", "1400000\n");
  }
}

void FakeRapl(Env* env) {
  auto zone = [&](const std::string& dir, const std::string& name, uint64_t energy) {
    Put(env, "/sys/class/powercap/" + dir + "/name", name + "\n");
    Put(env, "/sys/class/powercap/" + dir + "/energy_uj", std::to_string(energy) + "\n");
    Put(env, "/sys/class/powercap/" + dir + "/max_energy_range_uj", "1000000000\n");
  };
  zone("intel-rapl:0", "package-0", 999000000);  // near the wrap
  zone("intel-rapl:0:0", "core", 5);               // inside package: not added
  zone("intel-rapl:1", "dram", 10);
  zone("intel-rapl-mmio:0", "package-0", 7);       // duplicate interface: ignored
}

TEST(IoProfilerTest, EnergyDeltaHandlesWrapAround) {
  EXPECT_EQ(EnergyDeltaUj(100, 350, 1000), 250u);
  EXPECT_EQ(EnergyDeltaUj(900, 100, 1000), 200u);  // 900 -> 1000 = 0 -> 100
  EXPECT_EQ(EnergyDeltaUj(5, 5, 1000), 0u);
}

TEST(IoProfilerTest, RaplReadsPackageAndDramAndUnwraps) {
  auto mem = NewMemEnv();
  FakeRapl(mem.get());
  RaplMeter m = RaplMeter::Open(mem.get(), "/sys");
  ASSERT_TRUE(m.available()) << m.reason();
  EXPECT_EQ(m.zone_names(), (std::vector<std::string>{"package-0", "dram"}));
  auto before = m.Read();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, (std::vector<uint64_t>{999000000, 10}));
  // package wraps: 999000000 -> 1e9 -> 500000 = 1.5 J; dram 10 -> 2000010 = 2 J.
  Put(mem.get(), "/sys/class/powercap/intel-rapl:0/energy_uj", "500000\n");
  Put(mem.get(), "/sys/class/powercap/intel-rapl:1/energy_uj", "2000010\n");
  auto after = m.Read();
  ASSERT_TRUE(after.ok());
  EXPECT_NEAR(m.JoulesBetween(*before, *after), 3.5, 1e-9);
}

TEST(IoProfilerTest, RaplUnavailableSaysWhy) {
  auto mem = NewMemEnv();
  RaplMeter m = RaplMeter::Open(mem.get(), "/sys");
  EXPECT_FALSE(m.available());
  EXPECT_NE(m.reason().find("powercap"), std::string::npos) << m.reason();
}

TEST(IoProfilerTest, UserspaceGovernorSwitchesAndRestores) {
  auto mem = NewMemEnv();
  RecordingEnv env(mem.get());
  FakeCpufreq(&env, true);
  {
    auto c = CpuFreqControl::Open(&env, "/sys", "/proc/cpuinfo");
    ASSERT_TRUE(c->can_set()) << c->reason();
    EXPECT_EQ(c->method(), CpuFreqControl::Method::kUserspace);
    EXPECT_EQ(c->frequencies(), (std::vector<uint32_t>{800000, 1400000, 2100000}));
    EXPECT_EQ(c->current_khz(), 1400000u);
    EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_governor"), "userspace");
    ASSERT_TRUE(c->Set(800000).ok());
    EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_setspeed"), "800000");
    EXPECT_EQ(Get(&env, std::string(kPolicy1) + "/scaling_setspeed"), "800000");
    ASSERT_TRUE(c->Set(2100000).ok());
    EXPECT_EQ(Get(&env, std::string(kPolicy1) + "/scaling_setspeed"), "2100000");
  }  // destructor restores
  EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_governor"), "ondemand");
  EXPECT_EQ(Get(&env, std::string(kPolicy1) + "/scaling_governor"), "ondemand");
  ASSERT_FALSE(env.writes.empty());
  EXPECT_EQ(env.writes.back().second, "ondemand");
}

TEST(IoProfilerTest, MaxFreqLowersMinFirstAndRestoresBoth) {
  auto mem = NewMemEnv();
  RecordingEnv env(mem.get());
  FakeCpufreq(&env, false);
  auto c = CpuFreqControl::Open(&env, "/sys", "/proc/cpuinfo");
  ASSERT_TRUE(c->can_set()) << c->reason();
  EXPECT_EQ(c->method(), CpuFreqControl::Method::kMaxFreq);
  ASSERT_TRUE(c->Set(800000).ok());
  EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_min_freq"), "800000");
  EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_max_freq"), "800000");
  ASSERT_TRUE(c->Restore().ok());
  EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_max_freq"), "2100000");
  EXPECT_EQ(Get(&env, std::string(kPolicy0) + "/scaling_min_freq"), "1400000");
  EXPECT_EQ(Get(&env, std::string(kPolicy1) + "/scaling_min_freq"), "1400000");
}

TEST(IoProfilerTest, ReadOnlyCpufreqIsUnavailableWithCurrentFrequency) {
  auto mem = NewMemEnv();
  RecordingEnv env(mem.get());
  FakeCpufreq(&env, true);
  env.read_only_sys_ = true;
  auto c = CpuFreqControl::Open(&env, "/sys", "/proc/cpuinfo");
  EXPECT_FALSE(c->can_set());
  EXPECT_NE(c->reason().find("not writable"), std::string::npos) << c->reason();
  EXPECT_EQ(c->current_khz(), 1400000u);
  EXPECT_TRUE(c->Set(800000).code() == Code::kUnsupported);
}

TEST(IoProfilerTest, NoCpufreqFallsBackToProcCpuinfo) {
  auto mem = NewMemEnv();
  Put(mem.get(), "/proc/cpuinfo", "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2596.120\n");
  auto c = CpuFreqControl::Open(mem.get(), "/sys", "/proc/cpuinfo");
  EXPECT_FALSE(c->can_set());
  EXPECT_EQ(c->current_khz(), 2596120u);
  EXPECT_NE(c->current_source().find("cpuinfo"), std::string::npos);
}

TEST(IoProfilerTest, PowerTableParsesAndRejects) {
  auto t = ParsePowerTable(R"({"format": "cairn-power-table", "frequencies_khz": [800000, 2100000],
      "idle_w": [100, 120], "core_busy_w": [1, 4], "devices": {"ssd": {"read": 2, "write": 3}}})");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  bool exact = false;
  EXPECT_EQ(t->RowFor(2100000, &exact), 1u);
  EXPECT_TRUE(exact);
  EXPECT_EQ(t->RowFor(1000000, &exact), 0u);
  EXPECT_FALSE(exact);
  EXPECT_EQ(t->device_active_w.at("ssd")[1], 3);
  EXPECT_FALSE(ParsePowerTable(R"({"frequencies_khz": [1], "idle_w": [1, 2], "core_busy_w": [1]})").ok());
  EXPECT_FALSE(ParsePowerTable(R"({"frequencies_khz": [1], "idle_w": [1], "core_busy_w": [1], "x": 1})").ok());
  EXPECT_FALSE(ParsePowerTable(R"({"frequencies_khz": [1], "idle_w": [0], "core_busy_w": [1]})").ok());
  EXPECT_FALSE(ParsePowerTable("{").ok());
}

TEST(IoProfilerTest, MpiLaunchAndLevels) {
  std::map<std::string, std::string> vars = {{"OMPI_COMM_WORLD_SIZE", "4"},
                                             {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}};
  auto fake = [&](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  MpiLaunch l = DetectMpiLaunch(fake);
  EXPECT_TRUE(l.under_mpirun);
  EXPECT_EQ(l.size, 4);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_FALSE(DetectMpiLaunch([](const char*) -> const char* { return nullptr; }).under_mpirun);
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
  o.getenv = [](const char*) -> const char* { return nullptr; };
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
      "core_busy_w": [6], "devices": {"ssd": {"read": 2.5, "write": 3.5}}})");
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

TEST(IoProfilerTest, OtherLocalRanksSkipUnderMpirun) {
  auto mem = NewMemEnv();
  ProfilerOptions o = SmallOptions();
  o.getenv = [](const char* n) -> const char* {
    if (std::string(n) == "OMPI_COMM_WORLD_SIZE") return "2";
    if (std::string(n) == "OMPI_COMM_WORLD_LOCAL_RANK") return "1";
    return nullptr;
  };
  auto r = RunIoProfile(mem.get(), TestConfig(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->skipped);
}

}  // namespace
}  // namespace cairn
