#include "policy/clc_rollback.h"

#include <algorithm>

namespace cairn {

RollbackDistance MeanRollback(std::span<const CheckpointCall> calls, double runtime,
                              bool memory_lost) {
  // Between two consecutive call ends nothing changes but the failure time:
  // the calls completed (c), the restored version (v) and the time of its
  // state (state_time) are constant, and the work lost grows as t does.
  RollbackDistance sum;
  double from = 0;
  int64_t completed = 0, restored = 0;
  double state_time = 0;
  auto add_segment = [&](double to) {
    const double length = std::max(to - from, 0.0);
    sum.versions += static_cast<double>(completed - restored) * length;
    sum.seconds += length * ((from + to) / 2 - state_time);
    from = std::max(from, to);
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    add_segment(std::min(calls[i].end, runtime));
    ++completed;
    const Placement p = calls[i].placement;
    if (p == Placement::kSsd || (p == Placement::kMemory && !memory_lost)) {
      restored = static_cast<int64_t>(i) + 1;
      state_time = calls[i].start;
    }
  }
  add_segment(runtime);
  return {sum.versions / runtime, sum.seconds / runtime};
}

}  // namespace cairn
