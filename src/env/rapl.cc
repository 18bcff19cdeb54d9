#include "env/rapl.h"

#include <algorithm>

#include <fmt/format.h>

#include "env/sysfs.h"

namespace cairn {

uint64_t EnergyDeltaUj(uint64_t before, uint64_t after, uint64_t max_range_uj) {
  if (after >= before) return after - before;
  return (max_range_uj - before) + after;
}

RaplMeter RaplMeter::Open(Env* env, const std::string& sys_root) {
  RaplMeter m;
  m.env_ = env;
  const std::string base = JoinPath(sys_root, "class/powercap");
  auto entries = env->ListDir(base);
  if (!entries.ok()) {
    m.reason_ = fmt::format("no {}", base);
    return m;
  }
  std::vector<std::string> names;
  for (const auto& e : *entries) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  bool any_zone = false;
  for (const std::string& n : names) {
    if (n.rfind("intel-rapl:", 0) != 0) continue;  // intel-rapl-mmio duplicates package
    any_zone = true;
    std::string dir = JoinPath(base, n);
    auto zone_name = ReadSysfsValue(env, JoinPath(dir, "name"));
    if (!zone_name.ok()) continue;
    if (zone_name->rfind("package", 0) != 0 && *zone_name != "dram") continue;
    uint64_t energy = 0, range = 0;
    auto e = env->ReadPseudoFile(JoinPath(dir, "energy_uj"));
    auto r = env->ReadPseudoFile(JoinPath(dir, "max_energy_range_uj"));
    if (!e.ok() || !ParseSysfsU64(*e, &energy) || !r.ok() || !ParseSysfsU64(*r, &range) ||
        range == 0) {
      m.reason_ = fmt::format("{}/energy_uj is not readable (root only since Linux 5.10)", dir);
      continue;
    }
    m.zones_.push_back(Zone{JoinPath(dir, "energy_uj"), *zone_name, range});
  }
  if (!m.zones_.empty()) {
    m.reason_.clear();
  } else if (m.reason_.empty()) {
    m.reason_ = any_zone ? "no package or dram RAPL zone" : fmt::format("no RAPL zone in {}", base);
  }
  return m;
}

std::vector<std::string> RaplMeter::zone_names() const {
  std::vector<std::string> out;
  for (const Zone& z : zones_) out.push_back(z.name);
  return out;
}

Result<std::vector<uint64_t>> RaplMeter::Read() const {
  std::vector<uint64_t> out;
  for (const Zone& z : zones_) {
    CAIRN_ASSIGN_OR_RETURN(std::string s, env_->ReadPseudoFile(z.path));
    uint64_t v = 0;
    if (!ParseSysfsU64(s, &v)) {
      return Error(Code::kCorrupt, "'{}' holds '{}'", z.path, TrimSysfsValue(s));
    }
    out.push_back(v);
  }
  return out;
}

double RaplMeter::JoulesBetween(const std::vector<uint64_t>& before,
                                const std::vector<uint64_t>& after) const {
  double uj = 0;
  for (size_t i = 0; i < zones_.size() && i < before.size() && i < after.size(); ++i) {
    uj += static_cast<double>(EnergyDeltaUj(before[i], after[i], zones_[i].max_range_uj));
  }
  return uj * 1e-6;
}

}  // namespace cairn
