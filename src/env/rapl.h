// Energy counters of RAPL (Intel's Running Average Power Limit) under
// <sys_root>/class/powercap/intel-rapl:*: the package and dram zones (core
// and uncore are inside package and are not added twice). `cairn profile`
// reads them around each measurement (runtime/io_profiler.h). All access
// goes through an Env under sys_root ("/sys"), so tests use a fake tree.
// Thread-safety: a RaplMeter is immutable after Open; Read is reentrant.
#ifndef CAIRN_ENV_RAPL_H_
#define CAIRN_ENV_RAPL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "env/env.h"

namespace cairn {

class RaplMeter {
 public:
  // Never fails: without readable zones, available() is false and reason()
  // says why (energy_uj is root-only since Linux 5.10).
  static RaplMeter Open(Env* env, const std::string& sys_root);
  bool available() const { return !zones_.empty(); }
  const std::string& reason() const { return reason_; }  // why not available
  std::vector<std::string> zone_names() const;
  // Counter of every zone, in µJ. kCorrupt naming the file that holds no
  // number.
  Result<std::vector<uint64_t>> Read() const;
  // Joules between two readings, each zone unwrapped with its
  // max_energy_range_uj.
  double JoulesBetween(const std::vector<uint64_t>& before,
                       const std::vector<uint64_t>& after) const;

 private:
  struct Zone {
    std::string path;  // .../energy_uj
    std::string name;  // "package-0", "dram"
    uint64_t max_range_uj = 0;
  };
  Env* env_ = nullptr;
  std::vector<Zone> zones_;
  std::string reason_;
};

// µJ consumed between two readings of a counter that runs from 0 to
// max_range_uj and then wraps to 0 (at most one wrap between readings).
uint64_t EnergyDeltaUj(uint64_t before, uint64_t after, uint64_t max_range_uj);

}  // namespace cairn

#endif  // CAIRN_ENV_RAPL_H_
