// Clock: the one source of time for the controller, the model and the
// flusher, so that they can be tested with a FakeClock.
// Thread-safety: RealClock is thread-safe; FakeClock is not.
#ifndef CAIRN_BASE_CLOCK_H_
#define CAIRN_BASE_CLOCK_H_

namespace cairn {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds on a monotonic clock (for durations).
  virtual double MonotonicSeconds() const = 0;
  // Seconds since the Unix epoch (for timestamps stored on disk).
  virtual double WallSeconds() const = 0;

  // The process-wide real clock; never null, never destroyed.
  static Clock* Real();
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(double start = 1000.0) : now_(start) {}
  double MonotonicSeconds() const override { return now_; }
  double WallSeconds() const override { return now_; }
  void Advance(double seconds) { now_ += seconds; }

 private:
  double now_;
};

}  // namespace cairn

#endif  // CAIRN_BASE_CLOCK_H_
