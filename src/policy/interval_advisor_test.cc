#include "policy/interval_advisor.h"

#include <cmath>

#include <gtest/gtest.h>

namespace cairn {
namespace {

IntervalSettings Auto(double mtbf) {
  IntervalSettings s;
  s.mode = IntervalMode::kAuto;
  s.mtbf_seconds = mtbf;
  return s;
}

TEST(IntervalAdvisorTest, OffIsAnErrorNamingTheKey) {
  FakeClock clock;
  IntervalAdvisor advisor(IntervalSettings{}, &clock);
  auto due = advisor.Due();
  ASSERT_FALSE(due.ok());
  EXPECT_NE(due.status().message().find("placement.interval"), std::string::npos);
}

TEST(IntervalAdvisorTest, FixedIntervalCountsFromTheLastCheckpoint) {
  FakeClock clock;
  IntervalSettings s;
  s.mode = IntervalMode::kFixed;
  s.fixed_seconds = 30;
  IntervalAdvisor advisor(s, &clock);
  clock.Advance(29.9);
  EXPECT_FALSE(*advisor.Due());
  clock.Advance(0.1);
  EXPECT_TRUE(*advisor.Due());
  advisor.OnCheckpoint(2, true);
  EXPECT_FALSE(*advisor.Due());
  clock.Advance(30);
  EXPECT_TRUE(*advisor.Due());
}

TEST(IntervalAdvisorTest, AutoIsDueAtOnceUntilACheckpointWasMeasured) {
  FakeClock clock;
  IntervalAdvisor advisor(Auto(3600), &clock);
  EXPECT_TRUE(*advisor.Due());
  advisor.OnCheckpoint(0.01, /*wrote=*/false);  // a skipped call measures nothing
  EXPECT_TRUE(*advisor.Due());
  EXPECT_EQ(advisor.checkpoint_seconds(), 0);
}

TEST(IntervalAdvisorTest, AutoFollowsTheTimeOptimumOfTheMeasuredCheckpoints) {
  FakeClock clock;
  const double mtbf = 14 * 3600.0;  // the slides' λ = 1.89e-5
  IntervalAdvisor advisor(Auto(mtbf), &clock);
  advisor.OnCheckpoint(10, true);
  advisor.OnCheckpoint(30, true);  // T_C = mean = 20 s
  EXPECT_DOUBLE_EQ(advisor.checkpoint_seconds(), 20);
  EXPECT_DOUBLE_EQ(advisor.restart_seconds(), 20);  // stands in until a restart is measured
  double interval = *advisor.Interval();
  IntervalProblem p;
  p.failure_rate = 1 / mtbf;
  p.checkpoint_s = 20;
  p.restart_s = 20;
  EXPECT_DOUBLE_EQ(interval, OptimizeInterval(p, IntervalObjective::kTime)->compute_s);
  // Young's sqrt(2 T_C MTBF) = 1420 s is the first-order answer.
  EXPECT_NEAR(interval, std::sqrt(2 * 20 * mtbf), 0.05 * interval);
  clock.Advance(interval - 1);
  EXPECT_FALSE(*advisor.Due());
  clock.Advance(1);
  EXPECT_TRUE(*advisor.Due());
}

TEST(IntervalAdvisorTest, OnlyTheRecentCheckpointsCount) {
  FakeClock clock;
  IntervalAdvisor advisor(Auto(3600), &clock);
  advisor.OnCheckpoint(100, true);
  for (size_t i = 0; i < IntervalAdvisor::kCheckpointSamples; ++i) advisor.OnCheckpoint(1, true);
  EXPECT_DOUBLE_EQ(advisor.checkpoint_seconds(), 1);
}

TEST(IntervalAdvisorTest, EnergyObjectiveUsesTheMeasuredRestart) {
  FakeClock clock;
  IntervalSettings s = Auto(14 * 3600.0);
  s.objective = IntervalObjective::kEnergy;
  s.power_compute = 471.1;
  s.power_checkpoint = 300;
  s.power_restart = 300;
  IntervalAdvisor advisor(s, &clock);
  advisor.OnCheckpoint(20, true);
  advisor.OnRestart(200);
  EXPECT_DOUBLE_EQ(advisor.restart_seconds(), 200);
  IntervalProblem p;
  p.failure_rate = 1 / s.mtbf_seconds;
  p.checkpoint_s = 20;
  p.restart_s = 200;
  p.powers = {471.1, 300, 300};
  EXPECT_DOUBLE_EQ(*advisor.Interval(), OptimizeInterval(p, IntervalObjective::kEnergy)->compute_s);
}

}  // namespace
}  // namespace cairn
