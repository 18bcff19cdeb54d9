// SlowdownTracker: measures what Eq. (3) of the CLC paper needs — T_chk, the
// time this process has spent inside checkpoint calls, and T_compute, the
// time between them — from timestamps of a Clock (a FakeClock in tests, a
// simulated one in bench/clc_micro). The engine calls EnterCheckpoint when a
// checkpoint call starts and LeaveCheckpoint when it returns, whatever the
// placement (a skipped checkpoint costs only its decision). Time starts at
// construction (the paper counts from the program's launch; Cairn from
// init), so compute before the first checkpoint counts.
// Thread-safety: not thread-safe; the application thread owns it.
#ifndef CAIRN_POLICY_SLOWDOWN_H_
#define CAIRN_POLICY_SLOWDOWN_H_

#include "base/clock.h"

namespace cairn {

class SlowdownTracker {
 public:
  // clock must outlive the tracker; its monotonic time is used.
  explicit SlowdownTracker(const Clock* clock);

  // The time since the last LeaveCheckpoint (or construction) becomes
  // compute time. Entering twice without leaving is ignored, so a nested or
  // retried call is not counted twice.
  void EnterCheckpoint();
  // The time since EnterCheckpoint becomes checkpoint time (Algorithm 1
  // line 17). Ignored when not inside a checkpoint.
  void LeaveCheckpoint();

  bool inside_checkpoint() const { return inside_; }
  // T_chk: completed checkpoint calls only (the call being decided is not
  // over yet, as in Algorithm 1 where update(T_chk) follows the write).
  double checkpoint_seconds() const { return checkpoint_; }
  // T_compute, up to now if outside a checkpoint call, else up to its start.
  double compute_seconds() const;
  // Eq. (3) over the two.
  double slowdown() const;

 private:
  const Clock* clock_;
  double mark_;             // start of the current phase
  bool inside_ = false;
  double checkpoint_ = 0;
  double compute_ = 0;      // completed compute phases
};

}  // namespace cairn

#endif  // CAIRN_POLICY_SLOWDOWN_H_
