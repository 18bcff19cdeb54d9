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
// The concerns live apart: cpufreq and RAPL in env/ (env/cpufreq.h,
// env/rapl.h), the power table with the model (model/power_table.h), every
// agreement between ranks in Comm::Agree; this file is the sweep. Every file
// access — tier files, sysfs and /proc/cpuinfo — goes through the Env, so
// tests run the whole profiler over an in-memory Env holding a fake sysfs
// tree (env/fake_sysfs.h).
//
// Thread-safety: RunIoProfile is not reentrant for one sysfs root (it changes
// the CPU frequency of the node) and calls the Comm from the caller's thread
// only; the other functions are pure or touch only their own objects.
#ifndef CAIRN_RUNTIME_IO_PROFILER_H_
#define CAIRN_RUNTIME_IO_PROFILER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"
#include "env/env.h"
#include "model/io_profile.h"
#include "model/power_table.h"

namespace cairn {

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
