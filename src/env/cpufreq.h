// CPU frequency control (DVFS) through cpufreq:
// <sys_root>/devices/system/cpu/cpufreq/policy*. `cairn profile` sweeps the
// frequencies it offers (runtime/io_profiler.h); docs/model.md "Measuring a
// profile" says what is tried and why. All access goes through an Env under
// sys_root ("/sys"), so tests use a fake tree.
// Thread-safety: a CpuFreqControl is not thread-safe, and changes node-wide
// settings: one per node at a time.
#ifndef CAIRN_ENV_CPUFREQ_H_
#define CAIRN_ENV_CPUFREQ_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "env/env.h"

namespace cairn {

// Open never fails: a node without a writable interface gives can_set() ==
// false and reason() says why. While frequencies are being set, the original
// governor and limits are saved; Restore (also run by the destructor) puts
// them back.
class CpuFreqControl {
 public:
  enum class Method { kNone, kUserspace, kMaxFreq };

  // cpuinfo_path ("/proc/cpuinfo") gives the current frequency where cpufreq
  // does not.
  static std::unique_ptr<CpuFreqControl> Open(Env* env, const std::string& sys_root,
                                              const std::string& cpuinfo_path);
  ~CpuFreqControl();
  CpuFreqControl(const CpuFreqControl&) = delete;
  CpuFreqControl& operator=(const CpuFreqControl&) = delete;

  bool can_set() const { return method_ != Method::kNone; }
  Method method() const { return method_; }
  const char* method_name() const;  // "userspace governor", "scaling_max_freq", "none"
  // Ascending available frequencies (kHz) when can_set(); else empty.
  const std::vector<uint32_t>& frequencies() const { return frequencies_; }
  // Why DVFS is unavailable (empty when can_set()).
  const std::string& reason() const { return reason_; }
  // The current frequency in kHz (0 if unknown) and where it was read.
  uint32_t current_khz() const { return current_khz_; }
  const std::string& current_source() const { return current_source_; }

  // Sets every policy to khz and reads the setting back; kIo if it did not
  // take. REQUIRES: can_set() and khz is one of frequencies().
  Status Set(uint32_t khz);
  // Puts back what was there before the first Set (idempotent).
  Status Restore();

 private:
  struct Policy {
    std::string dir;
    std::string governor;  // saved
    std::string setspeed;  // saved (userspace)
    std::string min_freq;  // saved (max_freq)
    std::string max_freq;  // saved (max_freq)
  };
  explicit CpuFreqControl(Env* env) : env_(env) {}
  void ReadCurrentFrequency(const std::vector<std::string>& dirs, const std::string& cpuinfo_path);
  // The frequencies every policy lists; empty (and reason_ set) if none.
  std::vector<uint32_t> CommonFrequencies(const std::vector<std::string>& dirs);
  // Each probes its method on every policy, saving what Restore needs.
  bool TryUserspace(uint32_t fallback_khz);
  bool TryMaxFreq();
  Status WriteValue(const std::string& path, const std::string& value);
  Result<std::string> ReadValue(const std::string& path);

  Env* env_;
  Method method_ = Method::kNone;
  std::vector<Policy> policies_;
  std::vector<uint32_t> frequencies_;
  std::string reason_;
  uint32_t current_khz_ = 0;
  std::string current_source_;
  bool changed_ = false;  // something was written that Restore must undo
};

}  // namespace cairn

#endif  // CAIRN_ENV_CPUFREQ_H_
