#include "base/clock.h"

#include <chrono>

namespace cairn {
namespace {

class RealClock final : public Clock {
 public:
  double MonotonicSeconds() const override {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double WallSeconds() const override {
    return std::chrono::duration<double>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock* Clock::Real() {
  static RealClock* clock = new RealClock();  // never destroyed: used at exit
  return clock;
}

}  // namespace cairn
