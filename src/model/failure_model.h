// Failure and energy model of periodic checkpointing: Vaidya's three-state
// (compute, checkpoint, restart) Markov model as used by Saito et al.,
// "Energy-aware I/O optimization for checkpoint and restart on a NAND flash
// memory system" (shared/papers/energy-aware-io.txt), the energy per unit of
// effective time (EPE) built on it, Young's and Daly's checkpoint intervals,
// and the interval that minimizes expected time or EPE. docs/model.md derives
// every formula used here.
//
// Units: seconds, watts, joules, failures per second. Failures are a Poisson
// process of rate λ that can strike in any state, including during a
// checkpoint or a restart.
// Thread-safety: pure functions of their arguments.
#ifndef CAIRN_MODEL_FAILURE_MODEL_H_
#define CAIRN_MODEL_FAILURE_MODEL_H_

#include "base/config.h"
#include "base/status.h"

namespace cairn {

// One checkpoint interval: T_A seconds of useful computation followed by a
// checkpoint of T_C seconds; a failure costs a restart of T_R seconds and a
// rollback to the previous checkpoint.
struct IntervalCosts {
  double failure_rate = 0;  // λ >= 0, in 1/s (1 / MTBF)
  double compute_s = 0;     // T_A >= 0
  double checkpoint_s = 0;  // T_C >= 0
  double restart_s = 0;     // T_R >= 0
};

// Expected seconds spent in each state per interval of T_A useful seconds.
struct StateTimes {
  double compute_s = 0;     // T_Ā: computing, including re-executed work
  double checkpoint_s = 0;  // T_C̄: writing checkpoints, including retries
  double restart_s = 0;     // T_R̄: restarting
  double total_s() const { return compute_s + checkpoint_s + restart_s; }
};

// Node power in each state (W_A, W_C, W_R).
struct StatePowers {
  double compute_w = 0;
  double checkpoint_w = 0;
  double restart_w = 0;
};

// The slides' three expected times:
//   T_Ā = λ⁻¹ e^{λ(T_C+T_R)} (e^{λT_A} − 1)
//   T_C̄ = λ⁻¹ (e^{λT_C} − 1)
//   T_R̄ = λ⁻¹ (e^{λT_C} − 1)(e^{λT_R} − 1)
// Their sum is Vaidya's expected interval time λ⁻¹ e^{λT_R}(e^{λ(T_A+T_C)} − 1).
// λ = 0 is the failure-free limit (T_A, T_C, 0).
// Fails with kInvalidArgument on a negative or non-finite input, or when the
// result overflows a double (λ·(T_A+T_C+T_R) beyond about 700).
Result<StateTimes> ExpectedStateTimes(const IntervalCosts& costs);

// J = T_Ā·W_A + T_C̄·W_C + T_R̄·W_R, in joules per interval.
// Fails as ExpectedStateTimes, or on a negative or non-finite power.
Result<double> ExpectedEnergy(const IntervalCosts& costs, const StatePowers& powers);

// EPE = J / T_A, in watts: the energy spent per second of useful computation.
// REQUIRES: costs.compute_s > 0 (else kInvalidArgument).
Result<double> EnergyPerEffectiveTime(const IntervalCosts& costs, const StatePowers& powers);

// (T_Ā + T_C̄ + T_R̄) / T_A: expected wall-clock seconds per second of useful
// computation (1 means no overhead). REQUIRES: costs.compute_s > 0.
Result<double> TimePerEffectiveTime(const IntervalCosts& costs);

// Young (1974): sqrt(2·T_C·MTBF), seconds of computation between checkpoints.
// REQUIRES: checkpoint_s >= 0, mtbf_s > 0, both finite.
Result<double> YoungInterval(double checkpoint_s, double mtbf_s);

// Daly (2006), higher-order estimate of the same interval:
//   sqrt(2δM)·[1 + (1/3)·sqrt(δ/(2M)) + (1/9)·δ/(2M)] − δ   for δ < 2M,
//   M                                                        for δ >= 2M,
// with δ = T_C and M = MTBF. REQUIRES as YoungInterval.
Result<double> DalyInterval(double checkpoint_s, double mtbf_s);

// IntervalObjective (base/config.h): kTime minimizes TimePerEffectiveTime
// (powers are ignored), kEnergy minimizes EnergyPerEffectiveTime (EPE).
const char* IntervalObjectiveName(IntervalObjective objective);

struct IntervalProblem {
  double failure_rate = 0;  // λ > 0
  double checkpoint_s = 0;  // T_C > 0
  double restart_s = 0;     // T_R >= 0
  StatePowers powers;       // kEnergy: W_A > 0, W_C >= 0, W_R >= 0, not both 0
};

struct IntervalOptimum {
  double compute_s = 0;  // the optimal T_A
  double objective = 0;  // EPE in watts, or expected seconds per useful second
  StateTimes times;      // expected state times at the optimum
};

// The T_A that minimizes the objective. Both objectives have the form
// (a·(e^{λT_A} − 1)/λ + b) / T_A with a, b > 0, which is strictly decreasing
// then strictly increasing in T_A (docs/model.md proves it), so the optimum
// is the unique root of its derivative; it is found by Newton's method from
// an upper bound, which converges monotonically on this convex equation. The
// time optimum does not depend on T_R.
// Fails with kInvalidArgument when an input is out of range (λ = 0 or T_C = 0
// have no finite, positive optimum) or the optimum overflows a double.
Result<IntervalOptimum> OptimizeInterval(const IntervalProblem& problem,
                                         IntervalObjective objective);

}  // namespace cairn

#endif  // CAIRN_MODEL_FAILURE_MODEL_H_
