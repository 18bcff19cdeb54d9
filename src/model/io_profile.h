// I/O profile: how fast a node reads and writes checkpoints on each of its
// devices, and how much power it draws meanwhile, as a function of the number
// of processes doing the I/O (parallelism), the CPU frequency (DVFS) and the
// size of each read or write call (block size).
// The energy optimizer (energy_optimizer.h) chooses among the measured points;
// `cairn profile` measures them and stated_profile.h builds them from vendor
// figures. docs/model.md documents the JSON form ("format":
// "cairn-io-profile", "version": 2; version 1, which has no block sizes, is
// still read).
// Thread-safety: values and pure functions.
#ifndef CAIRN_MODEL_IO_PROFILE_H_
#define CAIRN_MODEL_IO_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn {

enum class IoOp { kRead = 0, kWrite = 1 };
inline constexpr int kIoOps = 2;
const char* IoOpName(IoOp op);  // "read", "write"

// Where the watts of a profile come from.
enum class PowerSource {
  // Measured (RAPL package + DRAM energy counters, or a meter) at every
  // profile point: IoOpProfile::watts.
  kRapl,
  // Computed from a table: per-frequency node idle watts and watts per busy
  // core (IoProfile::idle_w, core_busy_w) times the cores each point keeps
  // busy (IoOpProfile::busy_cores).
  kTable,
};
const char* PowerSourceName(PowerSource source);  // "rapl", "table"

// What a device's parallelism levels count. Cairn's I/O parallelism
// ([io] parallelism) is processes: ranks of a node doing I/O at once, each on
// its own files. Threads of one process, each on its own file, are what
// `cairn profile` measures when it runs alone; they share one process's
// file table and address space, so they may scale differently.
enum class ParallelismKind { kProcesses, kThreads };
const char* ParallelismKindName(ParallelismKind kind);  // "processes", "threads"

// One operation on one device. Grids are indexed
// [frequency index][parallelism index], matching IoProfile::frequencies_khz
// and DeviceIoProfile::parallelism.
struct IoOpProfile {
  std::vector<std::vector<double>> throughput_bps;  // aggregate bytes/s of the node, > 0
  std::vector<std::vector<double>> busy_cores;      // kTable: cores kept busy, >= 0
  std::vector<std::vector<double>> watts;           // kRapl: node watts, > 0
};

// The grids of one device measured with one block size.
struct IoBlockProfile {
  // Bytes per read or write call; 0: not recorded (a version-1 profile, or
  // one built from stated figures), allowed only as a device's one block.
  uint64_t block_size = 0;
  IoOpProfile ops[kIoOps];  // indexed by IoOp

  const IoOpProfile& op(IoOp o) const { return ops[static_cast<int>(o)]; }
  IoOpProfile& op(IoOp o) { return ops[static_cast<int>(o)]; }
};

struct DeviceIoProfile {
  std::string name;              // the tier it serves: "ssd", "iodrive", "pmem", ...
  std::vector<int> parallelism;  // measured levels, ascending, >= 1
  // What the levels count. JSON "parallelism_kind"; absent: processes, what
  // the levels always meant (stated figures, version-1 profiles).
  ParallelismKind parallelism_kind = ParallelismKind::kProcesses;
  // Watts the device itself draws above its idle draw while reading / while
  // writing, indexed by IoOp. The node figures (table or RAPL) do not see the
  // device, and its idle draw is already in the node's idle and W_A.
  double active_w[kIoOps] = {0, 0};
  std::vector<IoBlockProfile> blocks;  // ascending block_size, at least one

  int max_parallelism() const { return parallelism.empty() ? 0 : parallelism.back(); }
};

struct IoProfile {
  std::string description;  // free text: host, date, how it was made
  // CPU frequencies that I/O may run at, ascending, in kHz as cpufreq lists
  // them. Exactly one entry when DVFS is unavailable; that entry may be 0
  // ("not known"), since only its index matters then.
  std::vector<uint32_t> frequencies_khz;
  int cores = 0;  // cores per node: busy_cores and parallelism beyond it share cores
  PowerSource power_source = PowerSource::kTable;
  // Per frequency. Required for kTable; informational for kRapl.
  std::vector<double> idle_w;       // whole node, no I/O, at this frequency
  std::vector<double> core_busy_w;  // added by each busy core at this frequency
  std::vector<DeviceIoProfile> devices;

  // The device named `name`, or nullptr.
  const DeviceIoProfile* FindDevice(std::string_view name) const;
};

// What the node achieves and draws at one profile point.
struct IoPoint {
  double throughput_bps = 0;
  double watts = 0;  // node power plus the device's active_w
};

// Checks everything the optimizer relies on: shapes of every grid, positive
// finite throughputs and watts, ascending unique frequencies, parallelism and
// block sizes, unique device names of [A-Za-z0-9._-], the grids the power
// source needs. kInvalidArgument naming the first offending field by its
// JSON Pointer ("I/O profile: /devices/1/blocks/0/write/watts: ...").
Status ValidateIoProfile(const IoProfile& profile);

// REQUIRES: ValidateIoProfile(profile) is ok, `device` belongs to it, and the
// indices are in range. With b = device.blocks[block_index]:
//   kRapl:  b.watts[f][p] + active_w[op]
//   kTable: idle_w[f] + b.busy_cores[f][p] · core_busy_w[f] + active_w[op]
IoPoint IoProfilePoint(const IoProfile& profile, const DeviceIoProfile& device, IoOp op,
                       size_t frequency_index, size_t parallelism_index, size_t block_index);

// JSON form; Parse validates (kCorrupt for malformed JSON, a wrong type or a
// missing member, kUnsupported for a version this build does not read,
// kInvalidArgument from ValidateIoProfile). Unknown members are errors, so a
// misspelt key never silently becomes a default. Errors name `file` (when
// given) and the member's JSON Pointer:
//   I/O profile 'p.json': /devices/0/blocks/1/block_size: expected an integer ...
Result<IoProfile> ParseIoProfile(std::string_view json, std::string_view file = {});
// REQUIRES: ValidateIoProfile(profile) is ok (else the output may not parse).
std::string SerializeIoProfile(const IoProfile& profile);

}  // namespace cairn

#endif  // CAIRN_MODEL_IO_PROFILE_H_
