#include "model/failure_model.h"

#include <cmath>

namespace cairn {
namespace {

// Beyond this, e^x overflows a double (e^709.78 is the largest finite one).
constexpr double kMaxExponent = 700.0;

Status CheckNonNegative(const char* what, double value) {
  if (!std::isfinite(value) || value < 0) {
    return Error(Code::kInvalidArgument, "{} must be finite and >= 0, got {}", what, value);
  }
  return Status::Ok();
}

Status CheckCosts(const IntervalCosts& c) {
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("failure rate", c.failure_rate));
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("compute time T_A", c.compute_s));
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("checkpoint time T_C", c.checkpoint_s));
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("restart time T_R", c.restart_s));
  return Status::Ok();
}

Status CheckPowers(const StatePowers& p) {
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("compute power W_A", p.compute_w));
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("checkpoint power W_C", p.checkpoint_w));
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("restart power W_R", p.restart_w));
  return Status::Ok();
}

// (e^{λx} − 1) / λ, written with expm1 so that a tiny λ keeps full precision
// and λ = 0 gives its limit x instead of 0/0.
double ExpOverRate(double x, double rate) {
  if (rate == 0) return x;
  return std::expm1(rate * x) / rate;
}

// ψ(x) = x·e^x − (e^x − 1) = Σ_{n>=2} (n−1)·xⁿ/n!. The series avoids the
// cancellation of the closed form for small x, where ψ(x) ≈ x²/2.
double Psi(double x) {
  if (x < 0.5) {
    double term = x * x / 2;  // xⁿ/n! for n = 2
    double sum = 0;
    for (int n = 2; n < 60; ++n) {
      double add = (n - 1) * term;
      sum += add;
      if (add <= sum * 1e-18) break;
      term *= x / (n + 1);
    }
    return sum;
  }
  return x * std::exp(x) - std::expm1(x);
}

// The x > 0 with ψ(x) = c, for c > 0. ψ is increasing and convex on x > 0
// (ψ'(x) = x·e^x, ψ''(x) = (1+x)·e^x), so Newton's method started at a point
// above the root decreases monotonically onto it and cannot overshoot. Two
// upper bounds on the root: ψ(x) >= x²/2 gives sqrt(2c); ψ(x) >= e^x for
// x >= 2 gives max(2, ln c).
Result<double> SolvePsi(double c) {
  double x = std::sqrt(2 * c);
  if (c > 1) x = std::min(x, std::max(2.0, std::log(c)));
  if (!(x <= kMaxExponent)) {
    return Error(Code::kInvalidArgument,
                 "optimal interval out of range: checkpoint/restart cost ratio {} too large", c);
  }
  for (int i = 0; i < 200; ++i) {
    double excess = Psi(x) - c;
    if (excess <= 0) break;  // at the root, up to rounding
    double next = x - excess / (x * std::exp(x));
    if (!(next < x) || next <= 0) break;  // rounding: no further progress
    x = next;
  }
  return x;
}

}  // namespace

Result<StateTimes> ExpectedStateTimes(const IntervalCosts& costs) {
  CAIRN_RETURN_IF_ERROR(CheckCosts(costs));
  const double rate = costs.failure_rate;
  double exponent = rate * (costs.compute_s + costs.checkpoint_s + costs.restart_s);
  if (exponent > kMaxExponent) {
    return Error(Code::kInvalidArgument,
                 "λ·(T_A+T_C+T_R) = {} is too large: expected times overflow", exponent);
  }
  StateTimes t;
  t.compute_s = std::exp(rate * (costs.checkpoint_s + costs.restart_s)) *
                ExpOverRate(costs.compute_s, rate);
  t.checkpoint_s = ExpOverRate(costs.checkpoint_s, rate);
  t.restart_s = t.checkpoint_s * std::expm1(rate * costs.restart_s);
  return t;
}

Result<double> ExpectedEnergy(const IntervalCosts& costs, const StatePowers& powers) {
  CAIRN_RETURN_IF_ERROR(CheckPowers(powers));
  CAIRN_ASSIGN_OR_RETURN(StateTimes t, ExpectedStateTimes(costs));
  return t.compute_s * powers.compute_w + t.checkpoint_s * powers.checkpoint_w +
         t.restart_s * powers.restart_w;
}

Result<double> EnergyPerEffectiveTime(const IntervalCosts& costs, const StatePowers& powers) {
  if (!(costs.compute_s > 0)) {
    return Error(Code::kInvalidArgument, "EPE needs compute time T_A > 0, got {}",
                 costs.compute_s);
  }
  CAIRN_ASSIGN_OR_RETURN(double joules, ExpectedEnergy(costs, powers));
  return joules / costs.compute_s;
}

Result<double> TimePerEffectiveTime(const IntervalCosts& costs) {
  if (!(costs.compute_s > 0)) {
    return Error(Code::kInvalidArgument, "time ratio needs compute time T_A > 0, got {}",
                 costs.compute_s);
  }
  CAIRN_ASSIGN_OR_RETURN(StateTimes t, ExpectedStateTimes(costs));
  return t.total_s() / costs.compute_s;
}

Result<double> YoungInterval(double checkpoint_s, double mtbf_s) {
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("checkpoint time", checkpoint_s));
  if (!std::isfinite(mtbf_s) || mtbf_s <= 0) {
    return Error(Code::kInvalidArgument, "MTBF must be finite and > 0, got {}", mtbf_s);
  }
  return std::sqrt(2 * checkpoint_s * mtbf_s);
}

Result<double> DalyInterval(double checkpoint_s, double mtbf_s) {
  CAIRN_ASSIGN_OR_RETURN(double young, YoungInterval(checkpoint_s, mtbf_s));
  // Daly's expansion is only valid while the checkpoint is shorter than two
  // MTBFs; beyond, he recommends checkpointing once per MTBF.
  if (checkpoint_s >= 2 * mtbf_s) return mtbf_s;
  double r = checkpoint_s / (2 * mtbf_s);
  return young * (1 + std::sqrt(r) / 3 + r / 9) - checkpoint_s;
}

const char* IntervalObjectiveName(IntervalObjective objective) {
  switch (objective) {
    case IntervalObjective::kTime: return "time";
    case IntervalObjective::kEnergy: return "energy";
  }
  return "unknown";
}

Result<IntervalOptimum> OptimizeInterval(const IntervalProblem& problem,
                                         IntervalObjective objective) {
  const double rate = problem.failure_rate;
  const double c_s = problem.checkpoint_s;
  const double r_s = problem.restart_s;
  if (!std::isfinite(rate) || rate <= 0) {
    return Error(Code::kInvalidArgument,
                 "failure rate must be finite and > 0 for an optimal interval, got {} "
                 "(without failures, checkpointing is pure overhead)",
                 rate);
  }
  if (!std::isfinite(c_s) || c_s <= 0) {
    return Error(Code::kInvalidArgument,
                 "checkpoint time must be finite and > 0 for an optimal interval, got {}", c_s);
  }
  CAIRN_RETURN_IF_ERROR(CheckNonNegative("restart time T_R", r_s));
  if (rate * (c_s + r_s) > kMaxExponent) {
    return Error(Code::kInvalidArgument, "λ·(T_C+T_R) = {} is too large: the model overflows",
                 rate * (c_s + r_s));
  }

  // Both objectives are F(T_A) = (a·(e^{λT_A} − 1)/λ + b) / T_A, where a is
  // the power of computing scaled by e^{λ(T_C+T_R)} and b the (constant)
  // checkpoint and restart cost. F' = 0 <=> ψ(λT_A) = λb/a =: c, in closed
  // form below so that no intermediate overflows.
  double c = 0;
  const double expm1_c = std::expm1(rate * c_s);
  const double decay = std::exp(-rate * (c_s + r_s));
  if (objective == IntervalObjective::kTime) {
    c = -std::expm1(-rate * c_s);
  } else {
    const StatePowers& w = problem.powers;
    CAIRN_RETURN_IF_ERROR(CheckPowers(w));
    if (w.compute_w <= 0) {
      return Error(Code::kInvalidArgument, "compute power W_A must be > 0, got {}", w.compute_w);
    }
    c = expm1_c * (w.checkpoint_w + w.restart_w * std::expm1(rate * r_s)) * decay / w.compute_w;
  }
  if (!(c > 0) || !std::isfinite(c)) {
    return Error(Code::kInvalidArgument,
                 "checkpoint and restart cost no {}: there is no finite optimal interval",
                 objective == IntervalObjective::kTime ? "time" : "energy");
  }
  CAIRN_ASSIGN_OR_RETURN(double x, SolvePsi(c));

  IntervalOptimum best;
  best.compute_s = x / rate;
  IntervalCosts costs{rate, best.compute_s, c_s, r_s};
  CAIRN_ASSIGN_OR_RETURN(best.times, ExpectedStateTimes(costs));
  if (objective == IntervalObjective::kTime) {
    CAIRN_ASSIGN_OR_RETURN(best.objective, TimePerEffectiveTime(costs));
  } else {
    CAIRN_ASSIGN_OR_RETURN(best.objective, EnergyPerEffectiveTime(costs, problem.powers));
  }
  return best;
}

}  // namespace cairn
