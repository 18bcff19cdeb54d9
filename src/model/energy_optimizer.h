// Energy-aware choice of checkpoint I/O settings: from an I/O profile, the
// checkpoint size per node, the failure rate and the application's power,
// pick the CPU frequency, number of I/O processes and block size for
// checkpoint writes and for restart reads, and the checkpoint interval, that
// minimize the
// energy per unit of effective time (EPE) of Vaidya's model
// (failure_model.h). This is the "profile lookup" of Saito et al.; the fixed
// alternatives it is compared with are the cpufreq governors "performance"
// (highest frequency) and "powersave" (lowest), each with the fewest and the
// most I/O processes the profile measured.
// Thread-safety: pure functions.
#ifndef CAIRN_MODEL_ENERGY_OPTIMIZER_H_
#define CAIRN_MODEL_ENERGY_OPTIMIZER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/failure_model.h"
#include "model/io_profile.h"

namespace cairn {

struct EnergyProblem {
  double checkpoint_bytes = 0;  // written per node per checkpoint, read per restart; > 0
  double failure_rate = 0;      // λ > 0, failures per second (1 / MTBF)
  double app_power_w = 0;       // W_A > 0, node power while computing
};

// A point of the profile: indices into IoProfile::frequencies_khz,
// DeviceIoProfile::parallelism and DeviceIoProfile::blocks.
struct IoChoice {
  size_t frequency_index = 0;
  size_t parallelism_index = 0;
  size_t block_index = 0;
  friend bool operator==(const IoChoice&, const IoChoice&) = default;
};

// What one checkpoint write (or one restart read) costs at a choice.
struct IoSetting {
  IoChoice choice;
  uint32_t frequency_khz = 0;
  int parallelism = 0;
  uint64_t block_size = 0;  // 0: not recorded in the profile
  double throughput_bps = 0;
  double watts = 0;    // W_C or W_R
  double seconds = 0;  // T_C or T_R: checkpoint_bytes / throughput
  double joules() const { return watts * seconds; }
};

struct EnergyPlan {
  IoSetting write;           // checkpoint
  IoSetting read;            // restart
  IntervalOptimum interval;  // the EPE-optimal T_A for these settings; objective = EPE
  double epe_w() const { return interval.objective; }
};

struct FixedPlan {
  std::string name;         // "performance", "powersave"
  // Read and write at the same frequency and parallelism, each with the
  // block size of highest throughput there: the alternatives differ from
  // the optimum only in what the governors and a fixed process count decide.
  EnergyPlan plan;
  double improvement = 0;   // (EPE of this plan − best EPE) / EPE of this plan
};

struct DeviceEnergyReport {
  std::string device;
  EnergyPlan best;
  // performance and powersave, each with the fewest then the most processes,
  // each at its own EPE-optimal interval; duplicates (one frequency, one
  // parallelism level) are dropped.
  std::vector<FixedPlan> alternatives;
};

// The block of highest throughput for op at (frequency, parallelism) of
// `at` (ties: the smaller block); `at` with that block_index. REQUIRES:
// ValidateIoProfile(profile) is ok, device belongs to it, indices in range.
IoChoice FastestBlock(const DeviceIoProfile& device, IoOp op, IoChoice at);

// The cost of writing with `write` and reading with `read`, at the interval
// that minimizes EPE for them. REQUIRES: ValidateIoProfile(profile) is ok and
// device belongs to profile. kInvalidArgument for an index out of range or a
// problem out of range (see EnergyProblem), or one the model cannot evaluate.
Result<EnergyPlan> EvaluateEnergyPlan(const IoProfile& profile, const DeviceIoProfile& device,
                                      const EnergyProblem& problem, IoChoice write, IoChoice read);

// The plan of least EPE over every frequency, parallelism and block size for
// write and for read, and the fixed alternatives. The search is exact: EPE,
// even after minimizing over the interval, only grows with T_C, W_C, T_R and
// W_R, so only settings on the time/power Pareto front of each operation are
// combined. Ties go to the lower frequency, then the fewer processes, then
// the smaller block.
Result<DeviceEnergyReport> OptimizeDeviceEnergy(const IoProfile& profile,
                                                const DeviceIoProfile& device,
                                                const EnergyProblem& problem);

// OptimizeDeviceEnergy for every device of the profile, in profile order;
// validates the profile first.
Result<std::vector<DeviceEnergyReport>> OptimizeEnergy(const IoProfile& profile,
                                                       const EnergyProblem& problem);

}  // namespace cairn

#endif  // CAIRN_MODEL_ENERGY_OPTIMIZER_H_
