// I/O parallelism: how many of a node's ranks write (or read) a tier at
// once ([io] parallelism). A fixed number comes from the configuration;
// "auto" takes the optimum of the I/O profile `cairn profile` measured
// (model/io_profile.h) for the tier's device:
//  - with model.power_compute set, the energy optimizer's choice
//    (OptimizeDeviceEnergy: least EPE for this node's checkpoint size and
//    model.mtbf), as on the slides' "summary of experiment";
//  - otherwise the parallelism of highest throughput at the highest
//    frequency (the fastest checkpoint, which is the time optimum).
// Cairn does not change the CPU frequency itself, so only the parallelism
// of the optimum is applied. Without a profile, or without the tier's device
// in it, a warning says why and the engine measures a default instead
// (ParallelismTuner): the tier's first checkpoints try every rank at once,
// then half as many, down to one, and the fastest is kept.
// Thread-safety: pure over its arguments, plus reads through Env.
#ifndef CAIRN_RUNTIME_IO_PARALLELISM_H_
#define CAIRN_RUNTIME_IO_PARALLELISM_H_

#include <string>
#include <vector>

#include "base/config.h"
#include "env/env.h"
#include "model/io_profile.h"

namespace cairn {

struct IoParallelism {
  int write = 0;  // ranks of a node writing at once; 0: all
  int read = 0;   // ranks of a node reading at once (restart); 0: all
  // "config", "profile (energy)", "profile (throughput)", "default",
  // "measuring", "measured"; for logs.
  std::string source;
  bool no_optimum = false;  // auto without a usable profile: the default stands in
};

// From a parsed profile. node_bytes: the node's checkpoint size (> 0 for the
// energy optimum). kNotFound when the device is not in the profile.
Result<IoParallelism> ProfileParallelism(const IoProfile& profile, const std::string& device,
                                         const IntervalSettings& model, double node_bytes);

// The measured default: write parallelism tried on successive checkpoints
// of one tier, fastest kept. Candidates: 0 (all ranks at once), then
// ranks/2, ranks/4, ..., 1. The caller times each write (the node's slowest
// rank) and records it.
class ParallelismTuner {
 public:
  explicit ParallelismTuner(int ranks_on_node);
  bool done() const { return next_ >= candidates_.size(); }
  // The parallelism to use for the next write: the candidate being tried,
  // then the best.
  int current() const { return done() ? best() : candidates_[next_]; }
  void Record(double seconds);
  int best() const;
  const std::vector<int>& candidates() const { return candidates_; }
  const std::vector<double>& seconds() const { return seconds_; }

 private:
  std::vector<int> candidates_;
  std::vector<double> seconds_;
  size_t next_ = 0;
};

// The setting for `kind` under config; never fails (a missing or bad
// profile falls back to the default with a warning in the log).
IoParallelism ResolveIoParallelism(const Config& config, Env* env, TierKind kind,
                                   double node_bytes);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_IO_PARALLELISM_H_
