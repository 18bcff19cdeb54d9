#include "policy/slowdown.h"

#include <algorithm>

#include "policy/clc.h"

namespace cairn {

SlowdownTracker::SlowdownTracker(const Clock* clock)
    : clock_(clock), mark_(clock->MonotonicSeconds()) {}

void SlowdownTracker::EnterCheckpoint() {
  if (inside_) return;
  double now = clock_->MonotonicSeconds();
  compute_ += std::max(now - mark_, 0.0);
  mark_ = now;
  inside_ = true;
}

void SlowdownTracker::LeaveCheckpoint() {
  if (!inside_) return;
  double now = clock_->MonotonicSeconds();
  checkpoint_ += std::max(now - mark_, 0.0);
  mark_ = now;
  inside_ = false;
}

double SlowdownTracker::compute_seconds() const {
  if (inside_) return compute_;
  return compute_ + std::max(clock_->MonotonicSeconds() - mark_, 0.0);
}

double SlowdownTracker::slowdown() const {
  return SlowdownFraction(checkpoint_seconds(), compute_seconds());
}

}  // namespace cairn
