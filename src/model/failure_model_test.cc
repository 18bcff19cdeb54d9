#include "model/failure_model.h"

#include <cmath>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

namespace cairn {
namespace {

// The running example: λ = 1e-4 /s (MTBF 10^4 s = 2.78 h), T_A = 1000 s,
// T_C = 100 s, T_R = 50 s; W_A = 400 W, W_C = 250 W, W_R = 300 W.
constexpr IntervalCosts kExample{1e-4, 1000, 100, 50};
constexpr StatePowers kExamplePowers{400, 250, 300};

double Rel(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

TEST(FailureModelTest, StateTimesMatchHandComputation) {
  // λ(T_C+T_R) = 0.015, e^0.015 = 1.0151131; λT_A = 0.1, e^0.1 − 1 = 0.1051709
  // T_Ā = 10^4 · 1.0151131 · 0.1051709          = 1067.604 s
  // λT_C = 0.01, e^0.01 − 1 = 0.0100502
  // T_C̄ = 10^4 · 0.0100502                      =  100.502 s
  // λT_R = 0.005, e^0.005 − 1 = 0.0050125
  // T_R̄ = 10^4 · 0.0100502 · 0.0050125          =    0.5038 s
  auto t = ExpectedStateTimes(kExample);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NEAR(t->compute_s, 1067.604, 1e-3);
  EXPECT_NEAR(t->checkpoint_s, 100.502, 1e-3);
  EXPECT_NEAR(t->restart_s, 0.5038, 1e-4);
  // Total 1168.609 s: 16.9 % more than the 1000 s of work.
  auto ratio = TimePerEffectiveTime(kExample);
  ASSERT_TRUE(ratio.ok());
  EXPECT_NEAR(*ratio, 1.168609, 1e-6);
}

TEST(FailureModelTest, EnergyAndEpeMatchHandComputation) {
  // J = 1067.604·400 + 100.502·250 + 0.50377·300
  //   = 427041.5 + 25125.4 + 151.1 = 452318.0 J; EPE = J / 1000 s = 452.318 W.
  auto j = ExpectedEnergy(kExample, kExamplePowers);
  ASSERT_TRUE(j.ok());
  EXPECT_NEAR(*j, 452318.0, 0.5);
  auto epe = EnergyPerEffectiveTime(kExample, kExamplePowers);
  ASSERT_TRUE(epe.ok());
  EXPECT_NEAR(*epe, 452.318, 5e-4);
}

TEST(FailureModelTest, StatesSumToVaidyasIntervalTime) {
  // Σ = λ⁻¹[e^{λ(C+R)}(e^{λA}−1) + (e^{λC}−1) + (e^{λC}−1)(e^{λR}−1)]
  //   = λ⁻¹[e^{λ(A+C+R)} − e^{λR}] = λ⁻¹ e^{λR}(e^{λ(A+C)} − 1), Vaidya's Γ.
  const unsigned seed = 20261122;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_rate(-9, -3), log_time(0, 5);
  for (int i = 0; i < 1000; ++i) {
    IntervalCosts c{std::pow(10, log_rate(rng)), std::pow(10, log_time(rng)),
                    std::pow(10, log_time(rng)), std::pow(10, log_time(rng))};
    if (c.failure_rate * (c.compute_s + c.checkpoint_s + c.restart_s) > 50) continue;
    auto t = ExpectedStateTimes(c);
    ASSERT_TRUE(t.ok()) << "seed " << seed;
    double gamma = std::exp(c.failure_rate * c.restart_s) *
                   std::expm1(c.failure_rate * (c.compute_s + c.checkpoint_s)) / c.failure_rate;
    EXPECT_LT(Rel(t->total_s(), gamma), 1e-11) << "seed " << seed << " case " << i;
  }
}

TEST(FailureModelTest, NoFailuresMeansNoOverheadBeyondTheCheckpoint) {
  IntervalCosts c = kExample;
  c.failure_rate = 0;
  auto t = ExpectedStateTimes(c);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->compute_s, 1000);
  EXPECT_EQ(t->checkpoint_s, 100);
  EXPECT_EQ(t->restart_s, 0);
  EXPECT_DOUBLE_EQ(*TimePerEffectiveTime(c), 1.1);  // 1 + T_C/T_A
  // EPE = (1000·400 + 100·250) / 1000 = 425 W.
  EXPECT_DOUBLE_EQ(*EnergyPerEffectiveTime(c, kExamplePowers), 425.0);
  // And the limit is continuous: a tiny λ is within O(λ·T) of it.
  for (double rate : {1e-8, 1e-10, 1e-14}) {
    c.failure_rate = rate;
    EXPECT_NEAR(*TimePerEffectiveTime(c), 1.1, 10 * rate * 1150) << rate;
    EXPECT_GT(*TimePerEffectiveTime(c), 1.1) << rate;
  }
}

TEST(FailureModelTest, MoreFailuresCostMoreTimeAndEnergy) {
  IntervalCosts c = kExample;
  double last_time = 0, last_epe = 0;
  for (double rate = 0; rate <= 1e-2; rate = rate == 0 ? 1e-9 : rate * 1.5) {
    c.failure_rate = rate;
    double time = *TimePerEffectiveTime(c);
    double epe = *EnergyPerEffectiveTime(c, kExamplePowers);
    EXPECT_GT(time, last_time) << rate;
    EXPECT_GT(epe, last_epe) << rate;
    last_time = time;
    last_epe = epe;
  }
}

TEST(FailureModelTest, RejectsBadInputs) {
  auto bad = [](IntervalCosts c) { return ExpectedStateTimes(c).status().code(); };
  EXPECT_EQ(bad({-1e-5, 1, 1, 1}), Code::kInvalidArgument);
  EXPECT_EQ(bad({1e-5, -1, 1, 1}), Code::kInvalidArgument);
  EXPECT_EQ(bad({1e-5, 1, NAN, 1}), Code::kInvalidArgument);
  EXPECT_EQ(bad({1e-5, 1, 1, INFINITY}), Code::kInvalidArgument);
  // λ·(T_A+T_C+T_R) = 1000: e^1000 is not a double.
  Status overflow = ExpectedStateTimes({1, 998, 1, 1}).status();
  EXPECT_EQ(overflow.code(), Code::kInvalidArgument);
  EXPECT_NE(overflow.message().find("overflow"), std::string::npos) << overflow.message();
  EXPECT_FALSE(EnergyPerEffectiveTime({1e-5, 0, 1, 1}, kExamplePowers).ok());
  EXPECT_FALSE(TimePerEffectiveTime({1e-5, 0, 1, 1}).ok());
  EXPECT_FALSE(ExpectedEnergy(kExample, {400, -1, 300}).ok());
}

TEST(FailureModelTest, YoungAndDalyMatchHandComputation) {
  // δ = 100 s, M = 10^4 s: Young = sqrt(2·100·10^4) = 1414.2136 s.
  // Daly: δ/(2M) = 0.005, sqrt = 0.0707107;
  //   1414.2136 · (1 + 0.0707107/3 + 0.005/9) − 100
  //   = 1414.2136 · 1.0241258 − 100 = 1348.3326 s.
  EXPECT_NEAR(*YoungInterval(100, 1e4), 1414.2136, 1e-4);
  EXPECT_NEAR(*DalyInterval(100, 1e4), 1348.3326, 1e-4);
  // Past δ = 2M, Daly checkpoints once per MTBF.
  EXPECT_EQ(*DalyInterval(2e4, 1e4), 1e4);
  EXPECT_EQ(*DalyInterval(5e4, 1e4), 1e4);
  EXPECT_EQ(*YoungInterval(0, 1e4), 0);
  EXPECT_FALSE(YoungInterval(100, 0).ok());
  EXPECT_FALSE(DalyInterval(-1, 1e4).ok());
}

TEST(FailureModelTest, YoungApproachesDalyForCheapCheckpoints) {
  // Daly − Young = Young·(sqrt(r)/3 + r/9) − δ with r = δ/(2M), and
  // δ/Young = sqrt(r): the relative gap is −(2/3)·sqrt(r) + r/9 → 0.
  const double mtbf = 14 * 3600.0;
  double last_gap = 1;
  for (double ratio : {1e-1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8}) {
    double delta = ratio * mtbf;
    double young = *YoungInterval(delta, mtbf);
    double daly = *DalyInterval(delta, mtbf);
    double gap = std::fabs(daly - young) / young;
    double r = ratio / 2;
    EXPECT_NEAR(gap, 2 * std::sqrt(r) / 3 - r / 9, 1e-9) << ratio;
    EXPECT_LT(gap, last_gap) << ratio;
    last_gap = gap;
  }
  EXPECT_LT(last_gap, 1e-4);
}

// The x > 0 with ψ(x) = x·e^x − e^x + 1 = c, by bisection: the slow,
// obviously right twin of the Newton solver.
double BisectPsi(double c) {
  double lo = 0, hi = 1;
  auto psi = [](double x) { return x * std::exp(x) - std::expm1(x); };
  while (psi(hi) < c) hi *= 2;
  for (int i = 0; i < 300; ++i) {
    double mid = (lo + hi) / 2;
    (psi(mid) < c ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TEST(FailureModelTest, TimeOptimumMatchesHandComputation) {
  // Setting d/dT_A of λ⁻¹e^{λR}(e^{λ(T_A+C)} − 1)/T_A to zero gives
  // ψ(x) = 1 − e^{−λC} with x = λT_A. λ = 1e-4, C = 100: c = 1 − e^{−0.01}
  // = 0.0099501663. Expanding ψ(x) = x²/2 + x³/3 + ... = λC − (λC)²/2 + ...
  // gives x ≈ sqrt(2λC) − (2/3)λC = 0.1414214 − 0.0066667 = 0.1347547,
  // T_A ≈ 1347.55 s (the next term adds about 0.8 s).
  IntervalProblem p{1e-4, 100, 50, {}};
  auto best = OptimizeInterval(p, IntervalObjective::kTime);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  EXPECT_NEAR(best->compute_s, 1347.55, 1.0);
  EXPECT_LT(Rel(best->compute_s * 1e-4, BisectPsi(-std::expm1(-0.01))), 1e-12);
  // The objective reported is the time ratio at that T_A.
  EXPECT_DOUBLE_EQ(best->objective, *TimePerEffectiveTime({1e-4, best->compute_s, 100, 50}));
}

TEST(FailureModelTest, TimeOptimumIgnoresRestartTime) {
  double first = 0;
  for (double restart : {0.0, 10.0, 1000.0, 20000.0}) {
    auto best = OptimizeInterval({2e-5, 300, restart, {}}, IntervalObjective::kTime);
    ASSERT_TRUE(best.ok());
    if (restart == 0) first = best->compute_s;
    EXPECT_LT(Rel(best->compute_s, first), 1e-12) << restart;
  }
}

TEST(FailureModelTest, TimeOptimumAgreesWithDalyToSecondOrder) {
  // Both expand to sqrt(2δM) − 2δ/3 (see above and Daly 2006); what remains
  // is O(δ²/M) — numerically about 0.015·δ²/M.
  const double mtbf = 1e4;
  for (double ratio : {1e-1, 1e-2, 1e-3, 1e-4, 1e-6}) {
    double delta = ratio * mtbf;
    auto best = OptimizeInterval({1 / mtbf, delta, 0, {}}, IntervalObjective::kTime);
    ASSERT_TRUE(best.ok());
    double daly = *DalyInterval(delta, mtbf);
    EXPECT_LT(std::fabs(best->compute_s - daly), delta * ratio) << ratio;
  }
}

TEST(FailureModelTest, EnergyOptimumWithEqualPowersIsTheTimeOptimum) {
  IntervalProblem p{1.89e-5, 291, 237, {471.1, 471.1, 471.1}};
  auto energy = OptimizeInterval(p, IntervalObjective::kEnergy);
  auto time = OptimizeInterval(p, IntervalObjective::kTime);
  ASSERT_TRUE(energy.ok() && time.ok());
  EXPECT_LT(Rel(energy->compute_s, time->compute_s), 1e-12);
  EXPECT_LT(Rel(energy->objective, 471.1 * time->objective), 1e-12);
}

// Brute force: the smallest objective on a fine geometric grid over 0.1 s to
// 10^8 s, which knows nothing about where the optimum should be.
struct Scan {
  double best_a = 0;
  double best_f = INFINITY;
  double step = 0;  // ratio between neighbouring grid points
};
Scan ScanObjective(const IntervalProblem& p, IntervalObjective objective) {
  Scan s;
  const int n = 200000;
  s.step = std::pow(1e9, 1.0 / n);
  double a = 0.1;
  for (int i = 0; i <= n; ++i, a *= s.step) {
    IntervalCosts c{p.failure_rate, a, p.checkpoint_s, p.restart_s};
    auto f = objective == IntervalObjective::kTime ? TimePerEffectiveTime(c)
                                                   : EnergyPerEffectiveTime(c, p.powers);
    if (f.ok() && *f < s.best_f) {
      s.best_f = *f;
      s.best_a = a;
    }
  }
  return s;
}

TEST(FailureModelTest, OptimizerAgreesWithBruteForceScan) {
  const unsigned seed = 7;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_rate(-7, -3), log_cost(0, 3), watts(50, 600);
  for (int i = 0; i < 12; ++i) {
    IntervalProblem p{std::pow(10, log_rate(rng)), std::pow(10, log_cost(rng)),
                      std::pow(10, log_cost(rng)), {watts(rng), watts(rng), watts(rng)}};
    for (auto objective : {IntervalObjective::kTime, IntervalObjective::kEnergy}) {
      auto best = OptimizeInterval(p, objective);
      ASSERT_TRUE(best.ok()) << best.status().ToString() << " seed " << seed << " case " << i;
      Scan scan = ScanObjective(p, objective);
      std::string where = fmt::format("seed {} case {} objective {}: λ={} C={} R={}", seed, i,
                                      IntervalObjectiveName(objective), p.failure_rate,
                                      p.checkpoint_s, p.restart_s);
      // Never worse than any grid point, and at the grid's minimum up to
      // the grid spacing (the objective is flat there, so compare values
      // tightly and positions loosely).
      EXPECT_LE(best->objective, scan.best_f * (1 + 1e-14)) << where;
      EXPECT_LT(Rel(best->objective, scan.best_f), 1e-8) << where;
      EXPECT_LT(Rel(best->compute_s, scan.best_a), 1e-2) << where;
    }
  }
}

TEST(FailureModelTest, CostlierCheckpointsMeanLongerIntervals) {
  for (auto objective : {IntervalObjective::kTime, IntervalObjective::kEnergy}) {
    double last = 0;
    for (double c = 1; c <= 1e5; c *= 2) {
      auto best = OptimizeInterval({1.89e-5, c, 200, {471.1, 250, 260}}, objective);
      ASSERT_TRUE(best.ok()) << c;
      EXPECT_GT(best->compute_s, last) << IntervalObjectiveName(objective) << " T_C=" << c;
      last = best->compute_s;
    }
  }
}

TEST(FailureModelTest, MoreFailuresMeanShorterIntervalsAndHigherCost) {
  double last_a = INFINITY, last_f = 0;
  for (double rate = 1e-9; rate < 1e-2; rate *= 3) {
    auto best = OptimizeInterval({rate, 300, 200, {471.1, 250, 260}}, IntervalObjective::kEnergy);
    ASSERT_TRUE(best.ok()) << rate;
    EXPECT_LT(best->compute_s, last_a) << rate;
    EXPECT_GT(best->objective, last_f) << rate;
    last_a = best->compute_s;
    last_f = best->objective;
  }
}

TEST(FailureModelTest, TinyFailureRatesKeepPrecision) {
  // For λT_C → 0 the optimum tends to Young's sqrt(2·T_C/λ); at λ = 1e-15
  // the relative gap (2/3)·sqrt(λT_C/2) is ~1e-7, so any cancellation in
  // ψ would show up as a much larger error.
  const double rate = 1e-15, c = 10;
  auto best = OptimizeInterval({rate, c, 5, {}}, IntervalObjective::kTime);
  ASSERT_TRUE(best.ok());
  double young = *YoungInterval(c, 1 / rate);
  EXPECT_LT(Rel(best->compute_s, young), 1e-6);
  EXPECT_LT(best->compute_s, young);
}

TEST(FailureModelTest, OptimizerRejectsProblemsWithoutAFiniteOptimum) {
  auto code = [](IntervalProblem p, IntervalObjective o) {
    return OptimizeInterval(p, o).status().code();
  };
  EXPECT_EQ(code({0, 100, 10, {}}, IntervalObjective::kTime), Code::kInvalidArgument);
  EXPECT_EQ(code({1e-5, 0, 10, {}}, IntervalObjective::kTime), Code::kInvalidArgument);
  EXPECT_EQ(code({1e-5, 100, -1, {}}, IntervalObjective::kTime), Code::kInvalidArgument);
  EXPECT_EQ(code({1e-5, 100, 10, {0, 100, 100}}, IntervalObjective::kEnergy),
            Code::kInvalidArgument);
  EXPECT_EQ(code({1e-5, 100, 10, {400, 0, 0}}, IntervalObjective::kEnergy),
            Code::kInvalidArgument);
  EXPECT_EQ(code({1, 800, 10, {}}, IntervalObjective::kTime), Code::kInvalidArgument);
  // A free checkpoint but a costly restart still has an optimum.
  EXPECT_TRUE(OptimizeInterval({1e-5, 100, 10, {400, 0, 300}}, IntervalObjective::kEnergy).ok());
}

}  // namespace
}  // namespace cairn
