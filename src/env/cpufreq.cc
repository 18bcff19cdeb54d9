#include "env/cpufreq.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

#include "env/sysfs.h"

namespace cairn {
namespace {

// /proc/cpuinfo grows with the number of cores (~1 KiB each).
constexpr size_t kMaxCpuinfoBytes = 4 << 20;

// "2100000 1400000 800000 \n" -> {800000, 1400000, 2100000}; entries that
// are not positive 32-bit numbers are skipped.
std::vector<uint32_t> ParseFrequencies(std::string_view s) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos < s.size()) {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    size_t end = pos;
    while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
    uint64_t v = 0;
    if (end > pos && ParseSysfsU64(s.substr(pos, end - pos), &v) && v > 0 && v <= UINT32_MAX) {
      out.push_back(static_cast<uint32_t>(v));
    }
    pos = end;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> PolicyDirs(Env* env, const std::string& base) {
  std::vector<std::string> dirs;
  auto entries = env->ListDir(base);
  if (!entries.ok()) return dirs;
  for (const auto& e : *entries) {
    if (e.name.rfind("policy", 0) == 0) dirs.push_back(JoinPath(base, e.name));
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace

CpuFreqControl::~CpuFreqControl() { (void)Restore(); }

const char* CpuFreqControl::method_name() const {
  switch (method_) {
    case Method::kUserspace: return "userspace governor (scaling_setspeed)";
    case Method::kMaxFreq: return "scaling_max_freq";
    case Method::kNone: break;
  }
  return "none";
}

Status CpuFreqControl::WriteValue(const std::string& path, const std::string& value) {
  return WriteSysfsValue(env_, path, value);
}

Result<std::string> CpuFreqControl::ReadValue(const std::string& path) {
  return ReadSysfsValue(env_, path);
}

void CpuFreqControl::ReadCurrentFrequency(const std::vector<std::string>& dirs,
                                          const std::string& cpuinfo_path) {
  for (const std::string& d : dirs) {
    for (const char* f : {"cpuinfo_cur_freq", "scaling_cur_freq"}) {
      auto v = ReadValue(JoinPath(d, f));
      uint64_t khz = 0;
      if (v.ok() && ParseSysfsU64(*v, &khz) && khz > 0 && khz <= UINT32_MAX) {
        current_khz_ = static_cast<uint32_t>(khz);
        current_source_ = JoinPath(d, f);
        return;
      }
    }
  }
  auto info = env_->ReadPseudoFile(cpuinfo_path, kMaxCpuinfoBytes);
  if (!info.ok()) return;
  size_t at = info->find("cpu MHz");
  size_t colon = at == std::string::npos ? at : info->find(':', at);
  if (colon == std::string::npos) return;
  double mhz = std::atof(info->c_str() + colon + 1);
  if (mhz > 0 && mhz < 1e6) {
    current_khz_ = static_cast<uint32_t>(std::lround(mhz * 1000));
    current_source_ = cpuinfo_path + " (cpu MHz)";
  }
}

std::vector<uint32_t> CpuFreqControl::CommonFrequencies(const std::vector<std::string>& dirs) {
  std::vector<uint32_t> common;
  for (size_t i = 0; i < dirs.size(); ++i) {
    auto v = ReadValue(JoinPath(dirs[i], "scaling_available_frequencies"));
    std::vector<uint32_t> f = v.ok() ? ParseFrequencies(*v) : std::vector<uint32_t>{};
    if (f.empty()) {
      reason_ = fmt::format("{}/scaling_available_frequencies is not readable", dirs[i]);
      return {};
    }
    if (i == 0) {
      common = f;
    } else {
      std::vector<uint32_t> both;
      std::set_intersection(common.begin(), common.end(), f.begin(), f.end(),
                            std::back_inserter(both));
      common = both;
    }
  }
  if (common.empty()) reason_ = "the cpufreq policies have no available frequency in common";
  return common;
}

// The probe writes a value that changes nothing (or switches the governor,
// which Restore switches back).
bool CpuFreqControl::TryUserspace(uint32_t fallback_khz) {
  for (Policy& p : policies_) {
    auto gov = ReadValue(JoinPath(p.dir, "scaling_governor"));
    auto avail = ReadValue(JoinPath(p.dir, "scaling_available_governors"));
    auto speed = ReadValue(JoinPath(p.dir, "scaling_setspeed"));
    if (!gov.ok() || !speed.ok()) return false;
    p.governor = *gov;
    bool listed = *gov == "userspace" ||
                  (avail.ok() && (" " + *avail + " ").find(" userspace ") != std::string::npos);
    if (!listed) return false;
    if (*gov != "userspace") {
      changed_ = true;
      if (!WriteValue(JoinPath(p.dir, "scaling_governor"), "userspace").ok()) return false;
      auto again = ReadValue(JoinPath(p.dir, "scaling_setspeed"));
      if (again.ok()) speed = again;
    }
    uint64_t khz = 0;
    p.setspeed = ParseSysfsU64(*speed, &khz) ? *speed : "";
    // Probe: write the speed the policy runs at now (or the fallback).
    std::string probe = !p.setspeed.empty() ? p.setspeed
                        : current_khz_ != 0 ? std::to_string(current_khz_)
                                            : std::to_string(fallback_khz);
    if (!WriteValue(JoinPath(p.dir, "scaling_setspeed"), probe).ok()) return false;
    if (p.setspeed.empty()) p.setspeed = probe;
  }
  return true;
}

bool CpuFreqControl::TryMaxFreq() {
  for (Policy& p : policies_) {
    auto lo = ReadValue(JoinPath(p.dir, "scaling_min_freq"));
    auto hi = ReadValue(JoinPath(p.dir, "scaling_max_freq"));
    if (!lo.ok() || !hi.ok() || !WriteValue(JoinPath(p.dir, "scaling_max_freq"), *hi).ok()) {
      return false;
    }
    p.min_freq = *lo;
    p.max_freq = *hi;
    p.governor.clear();
  }
  return true;
}

std::unique_ptr<CpuFreqControl> CpuFreqControl::Open(Env* env, const std::string& sys_root,
                                                     const std::string& cpuinfo_path) {
  std::unique_ptr<CpuFreqControl> c(new CpuFreqControl(env));
  const std::string base = JoinPath(sys_root, "devices/system/cpu/cpufreq");
  const std::vector<std::string> dirs = PolicyDirs(env, base);
  // The current frequency is recorded even when DVFS works.
  c->ReadCurrentFrequency(dirs, cpuinfo_path);
  if (dirs.empty()) {
    c->reason_ = fmt::format("no cpufreq policy under {}", base);
    return c;
  }
  std::vector<uint32_t> common = c->CommonFrequencies(dirs);
  if (common.empty()) return c;
  // Method 1: the userspace governor; method 2: scaling_max_freq.
  for (const std::string& d : dirs) c->policies_.push_back(Policy{d, "", "", "", ""});
  if (c->TryUserspace(common.front())) {
    c->method_ = Method::kUserspace;
    c->frequencies_ = common;
    return c;
  }
  (void)c->Restore();  // undo a partial switch of governors
  c->changed_ = false;
  if (c->TryMaxFreq()) {
    c->method_ = Method::kMaxFreq;
    c->frequencies_ = common;
    return c;
  }
  c->policies_.clear();
  c->reason_ = "no writable userspace governor and scaling_max_freq is not writable (needs root)";
  return c;
}

Status CpuFreqControl::Set(uint32_t khz) {
  if (!can_set()) return Error(Code::kUnsupported, "DVFS unavailable: {}", reason_);
  changed_ = true;
  const std::string value = std::to_string(khz);
  for (const Policy& p : policies_) {
    std::string file;
    if (method_ == Method::kUserspace) {
      file = JoinPath(p.dir, "scaling_setspeed");
      CAIRN_RETURN_IF_ERROR(WriteValue(file, value));
    } else {
      // The kernel refuses max < min: lower min to the lowest first.
      uint64_t min = 0;
      if (ParseSysfsU64(p.min_freq, &min) && min > khz) {
        CAIRN_RETURN_IF_ERROR(
            WriteValue(JoinPath(p.dir, "scaling_min_freq"), std::to_string(frequencies_.front())));
      }
      file = JoinPath(p.dir, "scaling_max_freq");
      CAIRN_RETURN_IF_ERROR(WriteValue(file, value));
    }
    CAIRN_ASSIGN_OR_RETURN(std::string back, ReadValue(file));
    if (back != value) {
      return Error(Code::kIo, "wrote {} to '{}' but it reads back '{}'", value, file, back);
    }
  }
  return Status::Ok();
}

Status CpuFreqControl::Restore() {
  if (!changed_) return Status::Ok();
  Status first;
  auto keep = [&first](Status s) {
    if (first.ok() && !s.ok()) first = s;
  };
  for (const Policy& p : policies_) {
    if (method_ == Method::kMaxFreq) {
      if (!p.max_freq.empty()) keep(WriteValue(JoinPath(p.dir, "scaling_max_freq"), p.max_freq));
      if (!p.min_freq.empty()) keep(WriteValue(JoinPath(p.dir, "scaling_min_freq"), p.min_freq));
    } else {
      if (!p.setspeed.empty() && method_ == Method::kUserspace) {
        keep(WriteValue(JoinPath(p.dir, "scaling_setspeed"), p.setspeed));
      }
      if (!p.governor.empty() && p.governor != "userspace") {
        keep(WriteValue(JoinPath(p.dir, "scaling_governor"), p.governor));
      }
    }
  }
  if (first.ok()) changed_ = false;
  return first;
}

}  // namespace cairn
