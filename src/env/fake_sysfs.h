// Test support: a fake sysfs tree (cpufreq policies, RAPL zones) in an
// in-memory Env, and an Env that records what is written under /sys and
// advances RAPL counters as hardware does. Used by the cpufreq and RAPL
// tests here and by runtime/io_profiler_test.cc. Header-only; tests only.
#ifndef CAIRN_ENV_FAKE_SYSFS_H_
#define CAIRN_ENV_FAKE_SYSFS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/mutex.h"
#include "env/env.h"

namespace cairn {

// Records every value written to a file under /sys (the whole content at
// Close), so tests see the order in which cpufreq attributes were set.
class SysfsRecordingEnv : public EnvWrapper {
 public:
  explicit SysfsRecordingEnv(Env* target) : EnvWrapper(target) {}

  class File : public WritableFile {
   public:
    File(SysfsRecordingEnv* env, std::unique_ptr<WritableFile> f) : env_(env), f_(std::move(f)) {}
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
    SysfsRecordingEnv* env_;
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
      MutexLock lock(&mu_);
      uint64_t& c = counters_[p];
      c += rapl_step_;
      if (c > rapl_max_) c -= rapl_max_;
      ++rapl_reads_;
      return std::to_string(c);
    }
    return target()->ReadFileToString(p);
  }

  void Record(const std::string& path, const std::string& value) {
    MutexLock lock(&mu_);
    if (path.rfind("/sys/", 0) == 0) writes.emplace_back(path, value);
  }

  std::vector<std::pair<std::string, std::string>> writes;  // sysfs only
  bool read_only_sys_ = false;
  uint64_t rapl_step_ = 0;
  uint64_t rapl_max_ = 0;
  int rapl_reads_ = 0;
  std::map<std::string, uint64_t> counters_ GUARDED_BY(mu_);
  Mutex mu_;
};

inline void Put(Env* env, const std::string& path, const std::string& value) {
  ASSERT_TRUE(env->CreateDirs(DirName(path)).ok());
  ASSERT_TRUE(env->WriteFileAtomic(path, value.data(), value.size(), false).ok()) << path;
}

inline std::string Get(Env* env, const std::string& path) {
  auto s = env->ReadFileToString(path);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

inline constexpr char kPolicy0[] = "/sys/devices/system/cpu/cpufreq/policy0";
inline constexpr char kPolicy1[] = "/sys/devices/system/cpu/cpufreq/policy1";

// Two policies at 1.4 GHz of 0.8/1.4/2.1 GHz, governed by ondemand; with
// `userspace`, that governor is offered too.
inline void FakeCpufreq(Env* env, bool userspace) {
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

inline void FakeRapl(Env* env) {
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

}  // namespace cairn

#endif  // CAIRN_ENV_FAKE_SYSFS_H_
