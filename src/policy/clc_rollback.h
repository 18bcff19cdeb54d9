// How much work a failure costs under a placement history: the rollback
// distance of the CLC paper's recovery order (hybrid-dram-ssd-clc-ecc.txt,
// §3.4). Restart tries the memory copy first; when the node's memory is lost
// (or its copy fails ECC), it falls back to the newest SSD copy, which may be
// older: the controller trades checkpoint overhead against that distance.
// bench/clc_micro reports it beside the overhead (docs/clc.md).
//
// Everything here is pure. Thread-safety: functions over values.
#ifndef CAIRN_POLICY_CLC_ROLLBACK_H_
#define CAIRN_POLICY_CLC_ROLLBACK_H_

#include <span>

#include "policy/clc.h"

namespace cairn {

// One checkpoint call of a run: seconds since the run started. Call i
// (from 1) checkpoints version i, the state at `start`; its copy can be
// restored once the call has returned (`end`).
struct CheckpointCall {
  double start = 0;
  double end = 0;
  Placement placement = Placement::kMemory;
};

struct RollbackDistance {
  double versions = 0;  // checkpoint calls completed since the restored version
  double seconds = 0;   // work lost: failure time - the restored state's time
};

// The mean rollback distance after a failure at a uniformly random time in
// [0, runtime], computed exactly (the distance is piecewise linear in the
// failure time; no sampling). With memory_lost, only SSD copies survive
// (a node loses its memory, §3.4: "the SSD is always reliable"); otherwise
// the newest written copy of either tier is restored. Before the first
// surviving copy the run restarts from its beginning (version 0, time 0).
// REQUIRES: calls in order, start <= end, end <= runtime; runtime > 0.
RollbackDistance MeanRollback(std::span<const CheckpointCall> calls, double runtime,
                              bool memory_lost);

}  // namespace cairn

#endif  // CAIRN_POLICY_CLC_ROLLBACK_H_
