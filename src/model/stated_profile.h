// An I/O profile built from stated figures (a datasheet's sequential read and
// write bandwidth, a node's idle and loaded power) instead of measurements,
// so that the optimizer can be run before `cairn profile` has measured a
// machine, and so that the setting of Saito et al. (AMD Opteron 6172 × 4,
// Intel SSD 320, Fusion-io ioDrive) can be reproduced.
//
// The figures say how fast a device is at its best; how throughput and power
// vary with I/O parallelism p and CPU frequency f is a model, with these
// assumptions (docs/model.md discusses them):
//
//  * One I/O stream alone moves α₀ of the device's bandwidth B at the highest
//    frequency; a fraction s of its time per byte is CPU work (system call,
//    copy, and for a host-managed flash card like the ioDrive, the driver's
//    mapping, grooming and wear levelling), which slows as 1/f. So at f its
//    share of B is α(f) = α₀ / (s·f_max/f + 1 − s).
//  * p independent streams keep the device busy whenever at least one has a
//    request there: a fraction 1 − (1 − α(f))^p of the time. Interleaving
//    streams costs a fraction k per stream beyond the first (seeks inside the
//    FTL, lost sequentiality, lock contention):
//        throughput(p, f) = B · (1 − (1 − α(f))^p) / (1 + k·(p − 1)).
//    B is set so that the best point at the highest frequency equals the
//    stated figure.
//  * CPU work busies cores: throughput · s·(f_max/f)/(α₀·B) core-seconds per
//    second; a driver that polls while it waits also busies a fraction w of
//    the rest of each stream's time. busy_cores = min(cores, u + w·(p − u)).
//  * Node power = idle + busy_cores · core_busy_w(f) + the device's active
//    watts. Idle power does not depend on the frequency (idle cores halt);
//    a busy core's power scales as f·V(f)², with V linear in f between the
//    lowest and highest frequency's voltage; core_busy_w(f_max) is
//    (W_A − idle) / cores, since the application keeps every core busy at
//    f_max while drawing W_A.
//
// Thread-safety: pure functions.
#ifndef CAIRN_MODEL_STATED_PROFILE_H_
#define CAIRN_MODEL_STATED_PROFILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/io_profile.h"

namespace cairn {

struct StatedDevice {
  std::string name;
  double stated_bps[kIoOps] = {0, 0};  // best sequential bytes/s, by IoOp
  double single_stream_fraction = 1;   // α₀ in (0, 1]
  double cpu_fraction = 0;             // s in [0, 1)
  double contention = 0;               // k >= 0, throughput lost per extra stream
  double wait_busy_fraction = 0;       // w in [0, 1]
  double active_w[kIoOps] = {0, 0};    // device watts above idle, by IoOp
  std::string source;                  // where the figures come from (docs)
};

struct StatedNode {
  std::vector<uint32_t> frequencies_khz;  // ascending
  int cores = 0;
  int max_parallelism = 0;  // the profile covers p = 1..max_parallelism
  double idle_w = 0;        // whole node, idle
  double app_power_w = 0;   // W_A: whole node, all cores busy at the highest frequency
  double min_volts = 0;     // core voltage at the lowest frequency
  double max_volts = 0;     // core voltage at the highest frequency
};

// The slides' node: 4 × AMD Opteron 6172 (48 cores, P-states 0.8, 1.1, 1.4,
// 1.7, 2.1 GHz), W_A = 471.1 W; idle 250 W and 0.9–1.2 V are assumptions.
StatedNode SlidesNode();
// Intel SSD 320 600 GB: 270 / 220 MB/s sequential read / write.
StatedDevice StatedSsd();
// Fusion-io ioDrive MLC 320 GB: 735 / 510 MB/s read / write.
StatedDevice StatedIoDrive();
// "ssd" or "iodrive"; kNotFound otherwise.
Result<StatedDevice> StatedDeviceByName(std::string_view name);

// The profile (power source kTable) of `devices` on `node`, one point per
// frequency and per p in 1..max_parallelism. kInvalidArgument when a figure
// is out of its range above.
Result<IoProfile> BuildStatedProfile(const StatedNode& node,
                                     const std::vector<StatedDevice>& devices);

}  // namespace cairn

#endif  // CAIRN_MODEL_STATED_PROFILE_H_
