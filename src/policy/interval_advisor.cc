#include "policy/interval_advisor.h"

#include <numeric>

namespace cairn {

IntervalAdvisor::IntervalAdvisor(const IntervalSettings& settings, const Clock* clock)
    : settings_(settings), clock_(clock), last_(clock->MonotonicSeconds()) {}

void IntervalAdvisor::OnCheckpoint(double seconds, bool wrote) {
  last_ = clock_->MonotonicSeconds();
  if (!wrote) return;
  checkpoints_.push_back(seconds);
  if (checkpoints_.size() > kCheckpointSamples) checkpoints_.pop_front();
}

void IntervalAdvisor::OnRestart(double seconds) { restart_ = seconds; }

double IntervalAdvisor::checkpoint_seconds() const {
  if (checkpoints_.empty()) return 0;
  return std::accumulate(checkpoints_.begin(), checkpoints_.end(), 0.0) /
         static_cast<double>(checkpoints_.size());
}

double IntervalAdvisor::restart_seconds() const {
  return restart_ >= 0 ? restart_ : checkpoint_seconds();
}

Result<double> IntervalAdvisor::Interval() const {
  if (settings_.mode == IntervalMode::kFixed) return settings_.fixed_seconds;
  double tc = checkpoint_seconds();
  if (settings_.mode == IntervalMode::kOff || !(tc > 0)) return 0.0;
  IntervalProblem problem;
  problem.failure_rate = 1 / settings_.mtbf_seconds;
  problem.checkpoint_s = tc;
  problem.restart_s = restart_seconds();
  problem.powers = {settings_.power_compute, settings_.power_checkpoint, settings_.power_restart};
  CAIRN_ASSIGN_OR_RETURN(IntervalOptimum best, OptimizeInterval(problem, settings_.objective));
  return best.compute_s;
}

Result<bool> IntervalAdvisor::Due() const {
  if (settings_.mode == IntervalMode::kOff) {
    return Error(Code::kInvalidArgument,
                 "placement.interval is off: set it to auto or to seconds to use "
                 "cairn_should_checkpoint");
  }
  CAIRN_ASSIGN_OR_RETURN(double interval, Interval());
  return clock_->MonotonicSeconds() - last_ >= interval;
}

}  // namespace cairn
