#include "model/energy_optimizer.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace cairn {
namespace {

Status CheckProblem(const EnergyProblem& p) {
  if (!(std::isfinite(p.checkpoint_bytes) && p.checkpoint_bytes > 0)) {
    return Error(Code::kInvalidArgument, "checkpoint size must be > 0 bytes, got {}",
                 p.checkpoint_bytes);
  }
  if (!(std::isfinite(p.failure_rate) && p.failure_rate > 0)) {
    return Error(Code::kInvalidArgument, "failure rate must be finite and > 0, got {}",
                 p.failure_rate);
  }
  if (!(std::isfinite(p.app_power_w) && p.app_power_w > 0)) {
    return Error(Code::kInvalidArgument, "application power W_A must be > 0, got {}",
                 p.app_power_w);
  }
  return Status::Ok();
}

Result<IoSetting> Setting(const IoProfile& profile, const DeviceIoProfile& device, IoOp op,
                          IoChoice choice, double bytes) {
  if (choice.frequency_index >= profile.frequencies_khz.size() ||
      choice.parallelism_index >= device.parallelism.size() ||
      choice.block_index >= device.blocks.size()) {
    return Error(Code::kInvalidArgument, "{} setting ({}, {}, {}) is outside the profile of '{}'",
                 IoOpName(op), choice.frequency_index, choice.parallelism_index,
                 choice.block_index, device.name);
  }
  IoPoint point = IoProfilePoint(profile, device, op, choice.frequency_index,
                                 choice.parallelism_index, choice.block_index);
  IoSetting s;
  s.choice = choice;
  s.frequency_khz = profile.frequencies_khz[choice.frequency_index];
  s.parallelism = device.parallelism[choice.parallelism_index];
  s.block_size = device.blocks[choice.block_index].block_size;
  s.throughput_bps = point.throughput_bps;
  s.watts = point.watts;
  s.seconds = bytes / point.throughput_bps;
  return s;
}

// Every setting of op not dominated by another (one at most as slow and at
// most as power-hungry). Ties keep the earliest in (frequency, parallelism,
// block) order, which is the lower frequency, the fewer processes and the
// smaller block.
std::vector<IoSetting> ParetoFront(std::vector<IoSetting> all) {
  std::stable_sort(all.begin(), all.end(), [](const IoSetting& a, const IoSetting& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return a.watts < b.watts;
  });
  std::vector<IoSetting> front;
  for (const IoSetting& s : all) {
    if (front.empty() || s.watts < front.back().watts) front.push_back(s);
  }
  return front;
}

Result<EnergyPlan> Plan(const IoSetting& write, const IoSetting& read,
                        const EnergyProblem& problem) {
  IntervalProblem ip;
  ip.failure_rate = problem.failure_rate;
  ip.checkpoint_s = write.seconds;
  ip.restart_s = read.seconds;
  ip.powers = StatePowers{problem.app_power_w, write.watts, read.watts};
  EnergyPlan plan;
  plan.write = write;
  plan.read = read;
  CAIRN_ASSIGN_OR_RETURN(plan.interval, OptimizeInterval(ip, IntervalObjective::kEnergy));
  return plan;
}

}  // namespace

IoChoice FastestBlock(const DeviceIoProfile& device, IoOp op, IoChoice at) {
  at.block_index = 0;
  for (size_t b = 1; b < device.blocks.size(); ++b) {
    const auto& grid = device.blocks[b].op(op).throughput_bps;
    const auto& best = device.blocks[at.block_index].op(op).throughput_bps;
    if (grid[at.frequency_index][at.parallelism_index] >
        best[at.frequency_index][at.parallelism_index]) {
      at.block_index = b;
    }
  }
  return at;
}

Result<EnergyPlan> EvaluateEnergyPlan(const IoProfile& profile, const DeviceIoProfile& device,
                                      const EnergyProblem& problem, IoChoice write,
                                      IoChoice read) {
  CAIRN_RETURN_IF_ERROR(CheckProblem(problem));
  CAIRN_ASSIGN_OR_RETURN(IoSetting w, Setting(profile, device, IoOp::kWrite, write,
                                              problem.checkpoint_bytes));
  CAIRN_ASSIGN_OR_RETURN(IoSetting r, Setting(profile, device, IoOp::kRead, read,
                                              problem.checkpoint_bytes));
  return Plan(w, r, problem);
}

Result<DeviceEnergyReport> OptimizeDeviceEnergy(const IoProfile& profile,
                                                const DeviceIoProfile& device,
                                                const EnergyProblem& problem) {
  CAIRN_RETURN_IF_ERROR(CheckProblem(problem));
  const size_t nf = profile.frequencies_khz.size();
  const size_t np = device.parallelism.size();
  const size_t nb = device.blocks.size();

  std::vector<IoSetting> fronts[kIoOps];
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    std::vector<IoSetting> all;
    for (size_t f = 0; f < nf; ++f) {
      for (size_t p = 0; p < np; ++p) {
        for (size_t b = 0; b < nb; ++b) {
          CAIRN_ASSIGN_OR_RETURN(IoSetting s, Setting(profile, device, op, IoChoice{f, p, b},
                                                      problem.checkpoint_bytes));
          all.push_back(s);
        }
      }
    }
    fronts[static_cast<int>(op)] = ParetoFront(std::move(all));
  }

  DeviceEnergyReport report;
  report.device = device.name;
  bool found = false;
  // Visit candidates in (frequency, parallelism, block) order so that the
  // strict comparison below breaks ties towards lower frequencies, fewer
  // processes and smaller blocks.
  auto by_choice = [](const IoSetting& a, const IoSetting& b) {
    const IoChoice& x = a.choice;
    const IoChoice& y = b.choice;
    return std::tie(x.frequency_index, x.parallelism_index, x.block_index) <
           std::tie(y.frequency_index, y.parallelism_index, y.block_index);
  };
  for (auto& front : fronts) std::sort(front.begin(), front.end(), by_choice);
  for (const IoSetting& w : fronts[static_cast<int>(IoOp::kWrite)]) {
    for (const IoSetting& r : fronts[static_cast<int>(IoOp::kRead)]) {
      CAIRN_ASSIGN_OR_RETURN(EnergyPlan plan, Plan(w, r, problem));
      if (!found || plan.epe_w() < report.best.epe_w()) {
        report.best = plan;
        found = true;
      }
    }
  }

  struct Fixed {
    const char* name;
    IoChoice choice;
  };
  const Fixed fixed[] = {
      {"performance", IoChoice{nf - 1, 0, 0}},
      {"performance", IoChoice{nf - 1, np - 1, 0}},
      {"powersave", IoChoice{0, 0, 0}},
      {"powersave", IoChoice{0, np - 1, 0}},
  };
  std::vector<IoChoice> seen;
  for (const Fixed& alt : fixed) {
    if (std::find(seen.begin(), seen.end(), alt.choice) != seen.end()) continue;
    seen.push_back(alt.choice);
    FixedPlan fp;
    fp.name = alt.name;
    CAIRN_ASSIGN_OR_RETURN(
        fp.plan, EvaluateEnergyPlan(profile, device, problem,
                                    FastestBlock(device, IoOp::kWrite, alt.choice),
                                    FastestBlock(device, IoOp::kRead, alt.choice)));
    fp.improvement = (fp.plan.epe_w() - report.best.epe_w()) / fp.plan.epe_w();
    report.alternatives.push_back(std::move(fp));
  }
  return report;
}

Result<std::vector<DeviceEnergyReport>> OptimizeEnergy(const IoProfile& profile,
                                                       const EnergyProblem& problem) {
  CAIRN_RETURN_IF_ERROR(ValidateIoProfile(profile));
  std::vector<DeviceEnergyReport> reports;
  for (const DeviceIoProfile& device : profile.devices) {
    auto report = OptimizeDeviceEnergy(profile, device, problem);
    if (!report.ok()) return report.status().Annotate(fmt::format("device '{}'", device.name));
    reports.push_back(std::move(report).value());
  }
  return reports;
}

}  // namespace cairn
