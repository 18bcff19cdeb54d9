// IntervalAdvisor: when the next checkpoint is due ([placement] interval,
// cairn_should_checkpoint). With interval = "auto" it asks the failure model
// (model/failure_model.h: Vaidya's model, optimized for expected time or for
// EPE) for the optimal compute interval T_A, given the job's MTBF and the
// checkpoint and restart times Cairn measured in this run; with a fixed
// interval it uses that. A checkpoint is due once T_A seconds have passed
// since the last checkpoint call returned (or since init).
//
// Measurements: T_C is the mean of the last kCheckpointSamples checkpoint
// calls that wrote something (a skipped call measures no write). T_R is the
// last measured restart of this run; before any, T_C stands in for it (a
// restart reads what a checkpoint wrote), and the time objective does not
// depend on T_R at all. Before the first measured checkpoint there is no T_C,
// so a checkpoint is due at once: the first checkpoint is the measurement.
//
// Thread-safety: not thread-safe; the application thread owns it.
#ifndef CAIRN_POLICY_INTERVAL_ADVISOR_H_
#define CAIRN_POLICY_INTERVAL_ADVISOR_H_

#include <deque>

#include "base/clock.h"
#include "base/config.h"
#include "base/status.h"
#include "model/failure_model.h"

namespace cairn {

class IntervalAdvisor {
 public:
  static constexpr size_t kCheckpointSamples = 8;

  // REQUIRES: settings.Validate().ok(); clock outlives the advisor.
  IntervalAdvisor(const IntervalSettings& settings, const Clock* clock);

  // A checkpoint call returned after `seconds`; wrote: it was not skipped.
  void OnCheckpoint(double seconds, bool wrote);
  // A restart took `seconds`.
  void OnRestart(double seconds);

  // The compute interval T_A in force: the fixed one, or the model's
  // optimum for the measurements so far (0 while there are none). Errors
  // from the model (e.g. overflow for absurd inputs) are returned.
  Result<double> Interval() const;
  // Whether Interval() seconds have passed since the last checkpoint call.
  // REQUIRES: settings.mode != kOff.
  Result<bool> Due() const;

  double checkpoint_seconds() const;  // T_C in use (0: none measured)
  double restart_seconds() const;     // T_R in use

 private:
  IntervalSettings settings_;
  const Clock* clock_;
  double last_ = 0;                   // monotonic end of the last checkpoint call (or start)
  std::deque<double> checkpoints_;    // newest last
  double restart_ = -1;               // < 0: not measured
};

}  // namespace cairn

#endif  // CAIRN_POLICY_INTERVAL_ADVISOR_H_
