// I/O profiler: measures how fast this node writes and reads checkpoint-like
// files on each enabled tier (memory, ssd, pfs) as a function of I/O
// parallelism and block size, at every CPU frequency the OS lets it set
// (DVFS), with the node's power from RAPL or from a user's power table, and
// returns the result as an IoProfile (model/io_profile.h) that `cairn model
// --profile` reads. `cairn profile` (cli/profile_command.h) is the command;
// docs/model.md "Measuring a profile" documents what is measured.
//
// Parallelism is processes when the ranks of a Comm (mpirun) put two or more
// ranks on rank 0's node: 1..N of them write and read at once, as Cairn's
// ranks do. Otherwise it is 1..P threads of one process.
//
// The profile has one grid per block size (IoBlockProfile), so that the
// optimizer can choose the block size too. Before each read pass on a tier
// that persists (ssd, pfs), the files just written are evicted from the
// page cache (Env::EvictFromCache), so that reads come from the device.
//
// Every file access — tier files, sysfs (cpufreq, powercap) and
// /proc/cpuinfo — goes through the Env, so tests run the whole profiler over
// an in-memory Env holding a fake sysfs tree.
//
// Thread-safety: RunIoProfile is not reentrant for one sysfs root (it changes
// the CPU frequency of the node) and calls the Comm from the caller's thread
// only; the other functions are pure or touch only their own objects.
#ifndef CAIRN_RUNTIME_IO_PROFILER_H_
#define CAIRN_RUNTIME_IO_PROFILER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"
#include "env/env.h"
#include "model/io_profile.h"

namespace cairn {

// Power table a user supplies when RAPL is not readable (`--power-table`):
//   {"format": "cairn-power-table",
//    "frequencies_khz": [1400000, 2100000],   // ascending; one entry = any frequency
//    "idle_w": [250, 260],                     // whole node, idle, per frequency
//    "core_busy_w": [2.3, 4.6],                // added per busy core, per frequency
//    "devices": {"ssd": {"read": 2.5, "write": 2.5}}}  // optional, active watts
struct PowerTable {
  std::vector<uint32_t> frequencies_khz;
  std::vector<double> idle_w;
  std::vector<double> core_busy_w;
  std::map<std::string, std::array<double, kIoOps>> device_active_w;  // by device name

  // Index of the row for frequency khz: the only row, the exact one, or the
  // nearest (then *exact is false).
  size_t RowFor(uint32_t khz, bool* exact) const;
};
// kCorrupt for malformed JSON, kInvalidArgument naming the bad member.
Result<PowerTable> ParsePowerTable(std::string_view json);

// cpufreq under <sys_root>/devices/system/cpu/cpufreq/policy*. Open never
// fails: a node without a writable interface gives can_set() == false and
// reason() says why. While frequencies are being set, the original governor
// and limits are saved; Restore (also run by the destructor) puts them back.
class CpuFreqControl {
 public:
  enum class Method { kNone, kUserspace, kMaxFreq };

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
  CpuFreqControl(Env* env) : env_(env) {}
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

// Energy counters of RAPL (<sys_root>/class/powercap/intel-rapl:*), package
// and dram zones (core/uncore are inside package and are not added twice).
class RaplMeter {
 public:
  static RaplMeter Open(Env* env, const std::string& sys_root);
  bool available() const { return !zones_.empty(); }
  const std::string& reason() const { return reason_; }  // why not available
  std::vector<std::string> zone_names() const;
  // Counter of every zone, in µJ.
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

struct ProfilerOptions {
  std::string sys_root = "/sys";
  std::string cpuinfo_path = "/proc/cpuinfo";
  // P, the most writers measured; 0: the hardware threads of the node
  // (threads), or every rank on rank 0's node (processes).
  int max_parallelism = 0;
  uint64_t bytes = 32ull << 20;  // per measurement, all writers together
  std::vector<uint64_t> block_sizes = {64ull << 10, 1ull << 20, 4ull << 20};
  std::optional<PowerTable> power_table;
  std::string power_table_name;  // for the description ("power.json")
  // Called before each measurement (done of total), on rank 0's calling
  // thread only.
  std::function<void(int done, int total, const std::string& what)> progress;
  Clock* clock = nullptr;  // null: Clock::Real()
  int node = 0;            // the node whose tier directories are measured
  // The ranks that measure together; null: this process alone.
  Comm* comm = nullptr;
};

// One measurement.
struct ProfileSample {
  std::string device;  // tier name
  IoOp op = IoOp::kWrite;
  uint32_t frequency_khz = 0;
  int parallelism = 1;  // writers: processes or threads, as the device's grid
  uint64_t block_size = 0;
  uint64_t bytes = 0;
  double seconds = 0;
  double throughput_bps = 0;
  double busy_cores = 0;  // process CPU time / wall time
  double watts = 0;       // RAPL only; 0 otherwise
};

// Rank 0's holds the profile; the other ranks' only say that they helped.
struct ProfileResult {
  IoProfile profile;  // valid (ValidateIoProfile) unless helper
  std::vector<ProfileSample> samples;
  std::vector<std::string> notes;  // also joined into profile.description
  bool helper = false;             // a rank other than 0: rank 0 has the profile
};

// Measures every enabled tier of config (kConfig when none is enabled, or
// when neither RAPL nor a power table gives the power). Leaves no file
// behind in the tier directories (each rank's scratch directory
// ".cairn-profile-<pid>-<rank>" is removed) and restores the CPU frequency
// settings.
//
// Collective over options.comm: every rank calls it with the same config and
// options. Rank 0 alone sets the CPU frequency, reads RAPL and builds the
// profile. With two or more ranks on rank 0's node, for each p the first p
// of them each write (then read) their own file of bytes/p at once, started
// by a barrier; throughput is all bytes over the slowest rank's time and
// busy_cores the writing ranks' CPU time over that time. Otherwise rank 0
// runs p threads and other ranks only keep up with the collectives. A
// failure on any rank fails the call on every rank with that rank's error,
// "rank R: ..." when there are several ranks.
Result<ProfileResult> RunIoProfile(Env* env, const Config& config, const ProfilerOptions& options);

// The parallelism levels measured for P: 1..P when P <= 8, else powers of two
// and P.
std::vector<int> ParallelismLevels(int max_parallelism);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_IO_PROFILER_H_
