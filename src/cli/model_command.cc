#include "cli/model_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/config.h"
#include "base/json.h"
#include "cli/plot.h"
#include "env/env.h"
#include "model/energy_optimizer.h"
#include "model/failure_model.h"
#include "model/stated_profile.h"

namespace cairn {

namespace {

// The slides' experimental setting (Saito et al.): the defaults, so that a
// bare `cairn model` reproduces it.
constexpr const char* kDefaultCheckpointSize = "64GB";
constexpr double kDefaultFailureRate = 1.89e-5;
constexpr double kDefaultAppPower = 471.1;

struct ModelFlags {
  std::string profile_path;
  std::vector<std::string> devices;
  std::string checkpoint_size = kDefaultCheckpointSize;
  double lambda = 0;
  const CLI::Option* lambda_option = nullptr;  // to tell "--lambda 0" from no --lambda
  std::string mtbf;
  double app_power_w = kDefaultAppPower;
  std::string save_profile;
  std::string plot;
  bool json = false;
};

// Everything the report shows about one device.
struct DeviceResult {
  DeviceEnergyReport report;
  double time_optimal_s = 0;  // Vaidya, minimizing expected time
  double young_s = 0;
  double daly_s = 0;
};

// "14h", "840min", "50400s", "0.5d" or plain seconds.
Result<double> ParseDuration(const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return Error(Code::kInvalidArgument, "'{}' is not a duration such as 14h or 50400s", text);
  }
  std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else {
    return Error(Code::kInvalidArgument, "unknown duration unit '{}' in '{}' (use s, min, h, d)",
                 unit, text);
  }
  double seconds = value * scale;
  if (!std::isfinite(seconds) || seconds <= 0) {
    return Error(Code::kInvalidArgument, "duration '{}' must be > 0", text);
  }
  return seconds;
}

std::string Ghz(uint32_t khz) {
  if (khz == 0) return "fixed";
  return fmt::format("{}", khz / 1e6);
}

std::string Procs(int n) { return fmt::format("{} proc{}", n, n == 1 ? "" : "s"); }

std::string Hours(double seconds) { return fmt::format("{:.2f} h", seconds / 3600); }

// "64 KiB", "1 MiB"; 0 is a profile without block sizes.
std::string Block(uint64_t bytes) {
  if (bytes == 0) return "-";
  if (bytes % (1 << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes % (1 << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

Json SettingJson(const IoSetting& s) {
  return {{"frequency_khz", s.frequency_khz}, {"parallelism", s.parallelism},
          {"block_size", s.block_size},       {"throughput_bps", s.throughput_bps},
          {"watts", s.watts},                 {"seconds", s.seconds},
          {"joules", s.joules()}};
}

Json PlanJson(const EnergyPlan& plan) {
  const StateTimes& times = plan.interval.times;
  return {{"write", SettingJson(plan.write)},
          {"read", SettingJson(plan.read)},
          {"interval_s", plan.interval.compute_s},
          {"epe_w", plan.epe_w()},
          {"expected_times",
           {{"compute_s", times.compute_s},
            {"checkpoint_s", times.checkpoint_s},
            {"restart_s", times.restart_s}}}};
}

Json DeviceJson(const DeviceResult& r, const IoProfile& profile, const EnergyProblem& problem,
                const std::string& profile_origin) {
  Json alternatives = Json::array();
  for (const FixedPlan& alt : r.report.alternatives) {
    Json a = {{"name", alt.name}};
    a.update(PlanJson(alt.plan));
    a["saving"] = alt.improvement;
    alternatives.push_back(std::move(a));
  }
  return {{"device", r.report.device},
          {"profile", profile_origin},
          {"power_source", PowerSourceName(profile.power_source)},
          {"checkpoint_bytes", problem.checkpoint_bytes},
          {"failure_rate", problem.failure_rate},
          {"app_power_w", problem.app_power_w},
          {"best", PlanJson(r.report.best)},
          {"alternatives", std::move(alternatives)},
          {"intervals",
           {{"epe_optimal_s", r.report.best.interval.compute_s},
            {"time_optimal_s", r.time_optimal_s},
            {"young_s", r.young_s},
            {"daly_s", r.daly_s}}}};
}

void PrintJson(const std::vector<DeviceResult>& results, const IoProfile& profile,
               const EnergyProblem& problem, const std::string& profile_origin) {
  std::string out;
  for (const DeviceResult& r : results) {
    out += DeviceJson(r, profile, problem, profile_origin).dump() + "\n";
  }
  std::fputs(out.c_str(), stdout);
}

// The slides' "summary of experiment": per operation and device, the best
// CPU frequency and number of I/O processes.
std::string SummaryTable(const std::vector<DeviceResult>& results) {
  size_t width = 7;
  for (const DeviceResult& r : results) width = std::max(width, r.report.device.size() + 2);
  const int w = static_cast<int>(width);
  const int block = w * static_cast<int>(results.size());
  std::string out = "Energy-aware optimal CPU frequency and number of I/O processes\n";
  out += fmt::format("{:<15}|{:^{}}|{:^{}}\n", "", "Read", block + 1, "Write", block + 1);
  // The block size row only when the profile recorded block sizes.
  bool blocks = false;
  for (const DeviceResult& r : results) {
    blocks = blocks || r.report.best.read.block_size != 0 || r.report.best.write.block_size != 0;
  }
  std::string lines[4] = {fmt::format("{:<15}|", ""), fmt::format("{:<15}|", "CPU freq [GHz]"),
                          fmt::format("{:<15}|", "# of procs"),
                          fmt::format("{:<15}|", "block size")};
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    for (const DeviceResult& r : results) {
      const IoSetting& s = op == IoOp::kRead ? r.report.best.read : r.report.best.write;
      lines[0] += fmt::format("{:>{}}", r.report.device, w);
      lines[1] += fmt::format("{:>{}}", Ghz(s.frequency_khz), w);
      lines[2] += fmt::format("{:>{}}", s.parallelism, w);
      lines[3] += fmt::format("{:>{}}", Block(s.block_size), w);
    }
    if (op == IoOp::kRead) {
      for (std::string& line : lines) line += " |";
    }
  }
  for (int i = 0; i < (blocks ? 4 : 3); ++i) out += lines[i] + "\n";
  return out;
}

// Column layout of the per-device table; the header and the rows share it.
constexpr const char* kRowFormat =
    "{:<22} | {:>5} {:>5} {:>8} {:>8} {:>8} | {:>5} {:>5} {:>8} {:>8} | {:>8} | {:>8} | {:>7}\n";

std::string PlanRow(const std::string& label, const EnergyPlan& plan, const std::string& saving) {
  return fmt::format(
      fmt::runtime(kRowFormat), label, Ghz(plan.write.frequency_khz), plan.write.parallelism,
      fmt::format("{:.1f}", plan.write.seconds), fmt::format("{:.1f}", plan.write.watts),
      fmt::format("{:.1f}", plan.write.joules() / 1e3), Ghz(plan.read.frequency_khz),
      plan.read.parallelism, fmt::format("{:.1f}", plan.read.seconds),
      fmt::format("{:.1f}", plan.read.watts), fmt::format("{:.0f}", plan.interval.compute_s),
      fmt::format("{:.2f}", plan.epe_w()), saving);
}

std::string DeviceTable(const DeviceResult& r, double app_power_w) {
  const DeviceEnergyReport& report = r.report;
  std::string out = fmt::format("\n{}: each plan at its own EPE-optimal checkpoint interval T_A\n",
                                report.device);
  out += fmt::format("{:<22} | {:<38} | {:<29} | {:>8} | {:>8} | {:>7}\n", "plan",
                     "checkpoint write", "restart read", "T_A", "EPE", "saving");
  out += fmt::format(fmt::runtime(kRowFormat), "", "GHz", "procs", "T_C [s]", "W_C [W]",
                     "E_C [kJ]", "GHz", "procs", "T_R [s]", "W_R [W]", "[s]", "[W]", "");
  out += PlanRow("energy-optimal", report.best, "");
  for (const FixedPlan& alt : report.alternatives) {
    out += PlanRow(fmt::format("{}, {}", alt.name, Procs(alt.plan.write.parallelism)), alt.plan,
                   fmt::format("{:.2f} %", 100 * alt.improvement));
  }
  const EnergyPlan& best = report.best;
  out += fmt::format(
      "saving: how much less EPE the energy-optimal plan needs than that row's.\n"
      "EPE {:.2f} W = W_A x {:.4f}. Per T_A = {:.0f} s ({}) of work expect {:.1f} s computing "
      "(with re-execution), {:.1f} s checkpointing, {:.2f} s restarting.\n"
      "Interval for T_C = {:.1f} s: EPE-optimal {:.0f} s, time-optimal {:.0f} s, Young {:.0f} s, "
      "Daly {:.0f} s.\n",
      best.epe_w(), best.epe_w() / app_power_w, best.interval.compute_s,
      Hours(best.interval.compute_s), best.interval.times.compute_s,
      best.interval.times.checkpoint_s, best.interval.times.restart_s, best.write.seconds,
      best.interval.compute_s, r.time_optimal_s, r.young_s, r.daly_s);
  if (best.write.block_size != 0) {
    out += fmt::format(
        "Block size per read/write call: {} for checkpoint writes, {} for restart reads (the "
        "fixed plans use each operation's fastest block at their setting).\n",
        Block(best.write.block_size), Block(best.read.block_size));
  }
  return out;
}

void PrintText(const std::vector<DeviceResult>& results, const IoProfile& profile,
               const EnergyProblem& problem, const std::string& profile_origin) {
  std::string out =
      "cairn model: energy-aware checkpoint/restart I/O (Vaidya's three-state model, EPE)\n";
  out += fmt::format("profile: {} (power: {})\n", profile_origin,
                     PowerSourceName(profile.power_source));
  if (!profile.description.empty() && profile_origin != profile.description) {
    out += fmt::format("  {}\n", profile.description);
  }
  out += fmt::format(
      "checkpoint {:.4g} GB per node, failure rate λ = {:.3g} /s (MTBF {:.0f} s = {}), "
      "W_A = {} W\n\n",
      problem.checkpoint_bytes / 1e9, problem.failure_rate, 1 / problem.failure_rate,
      Hours(1 / problem.failure_rate), problem.app_power_w);
  out += SummaryTable(results);
  for (const DeviceResult& r : results) out += DeviceTable(r, problem.app_power_w);
  // Centred and empty cells leave trailing blanks; drop them.
  std::string trimmed;
  for (char c : out) {
    if (c == '\n') {
      while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
    }
    trimmed.push_back(c);
  }
  std::fputs(trimmed.c_str(), stdout);
}

constexpr int kCurvePoints = 160;
// Each EPE curve spans this factor on either side of the optima.
constexpr double kIntervalSpan = 10;

std::string PlanLabel(const FixedPlan& alt) {
  return fmt::format("{}, {}", alt.name, Procs(alt.plan.write.parallelism));
}

// EPE against T_A for one plan's T_C, T_R, W_C and W_R, on the grid `t_s`;
// points where the model overflows (λ·(T_A+T_C+T_R) > 700) are left out.
Json IntervalCurve(const std::string& label, const EnergyPlan& plan, const EnergyProblem& problem,
                   const std::vector<double>& t_s) {
  const StatePowers powers{problem.app_power_w, plan.write.watts, plan.read.watts};
  std::vector<double> ts, epe;
  for (double t : t_s) {
    auto e = EnergyPerEffectiveTime(
        IntervalCosts{problem.failure_rate, t, plan.write.seconds, plan.read.seconds}, powers);
    if (!e.ok()) continue;
    ts.push_back(t);
    epe.push_back(*e);
  }
  return {{"label", label},
          {"t_s", ts},
          {"epe_w", epe},
          {"optimum_s", plan.interval.compute_s},
          {"optimum_epe_w", plan.epe_w()}};
}

// EPE (each at its own optimal interval) against the parallelism of `op`,
// at the optimum's frequency and block size for op, the other operation
// staying at its optimum.
Result<Json> ParallelismCurve(const IoProfile& profile, const DeviceIoProfile& device,
                              const EnergyProblem& problem, const EnergyPlan& best, IoOp op) {
  const IoSetting& chosen = op == IoOp::kWrite ? best.write : best.read;
  std::vector<double> epe;
  for (size_t p = 0; p < device.parallelism.size(); ++p) {
    IoChoice write = best.write.choice;
    IoChoice read = best.read.choice;
    IoChoice& varied = op == IoOp::kWrite ? write : read;
    varied.parallelism_index = p;
    CAIRN_ASSIGN_OR_RETURN(EnergyPlan plan,
                           EvaluateEnergyPlan(profile, device, problem, write, read));
    epe.push_back(plan.epe_w());
  }
  return Json{{"frequency", chosen.frequency_khz == 0 ? std::string("the fixed frequency")
                                                      : Ghz(chosen.frequency_khz) + " GHz"},
              {"block", chosen.block_size == 0 ? Json() : Json(Block(chosen.block_size))},
              {"epe_w", epe},
              {"best_parallelism", chosen.parallelism},
              {"best_epe_w", best.epe_w()}};
}

// The interval grid of a device's curves: kCurvePoints from a tenth of the
// shortest optimum to ten times the longest, evenly on a log scale.
std::vector<double> IntervalGrid(const DeviceEnergyReport& report) {
  double lo = report.best.interval.compute_s, hi = lo;
  for (const FixedPlan& alt : report.alternatives) {
    lo = std::min(lo, alt.plan.interval.compute_s);
    hi = std::max(hi, alt.plan.interval.compute_s);
  }
  lo /= kIntervalSpan;
  hi *= kIntervalSpan;
  std::vector<double> t_s;
  for (int i = 0; i < kCurvePoints; ++i) {
    t_s.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / (kCurvePoints - 1)));
  }
  return t_s;
}

Result<Json> DevicePlotData(const DeviceResult& r, const IoProfile& profile,
                            const EnergyProblem& problem) {
  const DeviceEnergyReport& report = r.report;
  const DeviceIoProfile* device = profile.FindDevice(report.device);
  if (device == nullptr) return Error(Code::kInternal, "no device '{}'", report.device);
  const std::vector<double> t_s = IntervalGrid(report);
  Json curves = Json::array();
  curves.push_back(IntervalCurve("energy-optimal", report.best, problem, t_s));
  for (const FixedPlan& alt : report.alternatives) {
    curves.push_back(IntervalCurve(PlanLabel(alt), alt.plan, problem, t_s));
  }
  Json parallelism = {{"levels", device->parallelism}};
  for (IoOp op : {IoOp::kWrite, IoOp::kRead}) {
    CAIRN_ASSIGN_OR_RETURN(parallelism[IoOpName(op)],
                           ParallelismCurve(profile, *device, problem, report.best, op));
  }
  return Json{{"device", report.device},
              {"interval", {{"curves", std::move(curves)}, {"young_s", r.young_s},
                            {"daly_s", r.daly_s}}},
              {"parallelism", std::move(parallelism)}};
}

// The data of the figure (scripts/cairn_plot.py, kind "model"): per device,
// EPE against the checkpoint interval for the optimal plan and the fixed
// alternatives, and EPE against I/O parallelism.
Result<Json> PlotData(const std::vector<DeviceResult>& results, const IoProfile& profile,
                      const EnergyProblem& problem, const std::string& profile_origin) {
  Json devices = Json::array();
  for (const DeviceResult& r : results) {
    CAIRN_ASSIGN_OR_RETURN(Json device, DevicePlotData(r, profile, problem));
    devices.push_back(std::move(device));
  }
  return Json{{"kind", "model"},
              {"title", fmt::format("cairn model: {:.4g} GB per node, MTBF {}, W_A {} W; profile: {}",
                                    problem.checkpoint_bytes / 1e9, Hours(1 / problem.failure_rate),
                                    problem.app_power_w, profile_origin)},
              {"app_power_w", problem.app_power_w},
              {"devices", std::move(devices)}};
}

// The steps of RunModel. Each prints its own error and returns the exit
// status: 0 to go on, 2 for a bad option value, 1 for anything else.

int Usage(const std::string& option, const Status& s) {
  fmt::print(stderr, "cairn model: {}: {}\n", option, s.ToString());
  return 2;
}

int ReadProblem(const ModelFlags& flags, EnergyProblem* problem) {
  auto size = ParseSize(flags.checkpoint_size);
  if (!size.ok()) return Usage("--checkpoint-size", size.status());
  if (*size == 0) return Usage("--checkpoint-size", Error(Code::kInvalidArgument, "must be > 0"));
  problem->checkpoint_bytes = static_cast<double>(*size);
  problem->failure_rate = kDefaultFailureRate;
  if (!flags.mtbf.empty()) {
    auto mtbf = ParseDuration(flags.mtbf);
    if (!mtbf.ok()) return Usage("--mtbf", mtbf.status());
    problem->failure_rate = 1 / *mtbf;
  } else if (flags.lambda_option != nullptr && flags.lambda_option->count() > 0) {
    if (!std::isfinite(flags.lambda) || flags.lambda <= 0) {
      return Usage("--lambda", Error(Code::kInvalidArgument, "must be > 0, got {}", flags.lambda));
    }
    problem->failure_rate = flags.lambda;
  }
  if (!std::isfinite(flags.app_power_w) || flags.app_power_w <= 0) {
    return Usage("--app-power",
                 Error(Code::kInvalidArgument, "must be > 0 W, got {}", flags.app_power_w));
  }
  problem->app_power_w = flags.app_power_w;
  return 0;
}

int BuildStated(const ModelFlags& flags, const EnergyProblem& problem, IoProfile* profile) {
  std::vector<std::string> names = flags.devices;
  if (names.empty()) names = {"ssd", "iodrive"};
  std::vector<StatedDevice> devices;
  for (const std::string& name : names) {
    auto d = StatedDeviceByName(name);
    if (!d.ok()) return Usage("--device", d.status());
    devices.push_back(*d);
  }
  // W_A is both the problem's compute power and, in the stated model, what
  // fixes a busy core's power; keep them the same figure.
  StatedNode node = SlidesNode();
  if (problem.app_power_w <= node.idle_w) {
    return Usage("--app-power",
                 Error(Code::kInvalidArgument, "{} W is not above the stated node's idle power "
                                               "of {} W",
                       problem.app_power_w, node.idle_w));
  }
  node.app_power_w = problem.app_power_w;
  auto built = BuildStatedProfile(node, devices);
  if (!built.ok()) {
    fmt::print(stderr, "cairn model: {}\n", built.status().ToString());
    return 1;
  }
  *profile = std::move(built).value();
  return 0;
}

// The profile of --profile, or built from stated figures; --save-profile.
int LoadProfile(const ModelFlags& flags, const EnergyProblem& problem, IoProfile* profile,
                std::string* origin) {
  if (!flags.profile_path.empty()) {
    auto text = PosixEnv()->ReadFileToString(flags.profile_path);
    if (!text.ok()) return Usage("--profile", text.status());
    auto parsed = ParseIoProfile(*text, flags.profile_path);
    if (!parsed.ok()) {
      fmt::print(stderr, "cairn model: {}\n", parsed.status().ToString());
      return 1;
    }
    *profile = std::move(parsed).value();
    *origin = flags.profile_path;
  } else {
    if (int rc = BuildStated(flags, problem, profile)) return rc;
    *origin = "built from stated device figures (see docs/model.md)";
  }
  if (!flags.save_profile.empty()) {
    std::string text = SerializeIoProfile(*profile);
    Status s = PosixEnv()->WriteFileAtomic(flags.save_profile, text.data(), text.size(), true);
    if (!s.ok()) {
      fmt::print(stderr, "cairn model: --save-profile: {}\n", s.ToString());
      return 1;
    }
  }
  return 0;
}

// Per device: the energy-optimal plan and the intervals to compare it with.
int Evaluate(const IoProfile& profile, const EnergyProblem& problem,
             std::vector<DeviceResult>* results) {
  auto reports = OptimizeEnergy(profile, problem);
  if (!reports.ok()) {
    fmt::print(stderr, "cairn model: {}\n", reports.status().ToString());
    return 1;
  }
  for (DeviceEnergyReport& report : *reports) {
    DeviceResult r;
    const EnergyPlan& best = report.best;
    IntervalProblem time_problem{problem.failure_rate, best.write.seconds, best.read.seconds, {}};
    auto time_opt = OptimizeInterval(time_problem, IntervalObjective::kTime);
    auto young = YoungInterval(best.write.seconds, 1 / problem.failure_rate);
    auto daly = DalyInterval(best.write.seconds, 1 / problem.failure_rate);
    for (const Status& s : {time_opt.status(), young.status(), daly.status()}) {
      if (!s.ok()) {
        fmt::print(stderr, "cairn model: device '{}': {}\n", report.device, s.ToString());
        return 1;
      }
    }
    r.time_optimal_s = time_opt->compute_s;
    r.young_s = *young;
    r.daly_s = *daly;
    r.report = std::move(report);
    results->push_back(std::move(r));
  }
  return 0;
}

int RunModel(const ModelFlags& flags) {
  EnergyProblem problem;
  if (int rc = ReadProblem(flags, &problem)) return rc;
  IoProfile profile;
  std::string origin;
  if (int rc = LoadProfile(flags, problem, &profile, &origin)) return rc;
  std::vector<DeviceResult> results;
  if (int rc = Evaluate(profile, problem, &results)) return rc;
  if (flags.json) {
    std::string source = flags.profile_path.empty() ? "stated" : flags.profile_path;
    PrintJson(results, profile, problem, source);
  } else {
    PrintText(results, profile, problem, origin);
  }
  std::fflush(stdout);
  if (!flags.plot.empty()) {
    auto data = PlotData(results, profile, problem, origin);
    Status drawn = data.ok() ? DrawPlot(*data, flags.plot) : data.status();
    if (!drawn.ok()) {
      fmt::print(stderr, "cairn model: --plot {}: {}\n", flags.plot, drawn.ToString());
      return 1;
    }
    if (!flags.json) fmt::print("wrote {}\n", flags.plot);
  }
  return 0;
}

}  // namespace

void AddModelCommand(CLI::App& app, int& exit_code) {
  // The flags must live as long as app (CLI11 writes into them while
  // parsing); the callback, stored in the subcommand, owns them.
  auto flags = std::make_shared<ModelFlags>();
  CLI::App* cmd = app.add_subcommand(
      "model",
      "Energy-aware checkpoint I/O: the CPU frequency, number of I/O processes and block size "
      "for checkpoint writes and restart reads, and the checkpoint interval, that minimize the "
      "energy per unit of effective time (EPE) under Vaidya's failure model");
  CLI::Option* profile =
      cmd->add_option("--profile", flags->profile_path,
                      "I/O profile (JSON, docs/model.md): throughput and power per device, "
                      "operation, I/O parallelism, CPU frequency and block size, as `cairn "
                      "profile` measures it")
          ->check(CLI::ExistingFile);
  cmd->add_option("--device", flags->devices,
                  "instead of a profile, model these devices from their stated figures on the "
                  "slides' node (4x Opteron 6172): ssd (Intel SSD 320, 270/220 MB/s read/write), "
                  "iodrive (Fusion-io ioDrive, 735/510 MB/s); comma-separated or repeated "
                  "(default: both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"ssd", "iodrive"}))
      ->excludes(profile);
  cmd->add_option("--checkpoint-size", flags->checkpoint_size,
                  "checkpoint bytes written per node (and read back on restart), e.g. 64GB "
                  "(10^9 bytes) or 60GiB")
      ->capture_default_str();
  CLI::Option* lambda =
      cmd->add_option("--lambda", flags->lambda,
                      "failure rate λ of the job, failures per second (1/MTBF); default 1.89e-5, "
                      "the slides' TSUBAME2.0 figure (MTBF about 14 h)");
  cmd->add_option("--mtbf", flags->mtbf,
                  "mean time between failures instead of --lambda: seconds, or with a unit "
                  "s, min, h, d (e.g. 14h)")
      ->excludes(lambda);
  flags->lambda_option = lambda;
  cmd->add_option("--app-power", flags->app_power_w,
                  "W_A: node power while the application computes, in watts (NPB SP class C "
                  "on the slides' node)")
      ->capture_default_str();
  cmd->add_option("--save-profile", flags->save_profile,
                  "also write the profile used (e.g. the stated one) to this JSON file, a "
                  "starting point for your own");
  cmd->add_flag("--json", flags->json,
                "one JSON object per device and line instead of tables: best plan, fixed "
                "alternatives with their saving, intervals");
  cmd->add_option("--plot", flags->plot,
                  "also draw FILE.png: per device, EPE against the checkpoint interval (optimal "
                  "plan and fixed alternatives, Young and Daly marked) and EPE against the "
                  "number of I/O processes at the chosen frequency and block size; needs "
                  "python3 with matplotlib")
      ->type_name("FILE.png");
  cmd->footer(
      "Plans: energy-optimal is the profile lookup over frequency, processes and block size; "
      "performance/powersave run I/O at the highest/lowest frequency with 1 or with the most "
      "processes, each operation with its fastest block size there. Each plan uses the "
      "checkpoint interval that minimizes its EPE; saving = (EPE of the plan - optimal EPE) / "
      "EPE of the plan. Exit status: 0 ok, 2 bad option value, 1 profile unreadable, model "
      "not evaluable or plot not drawn.");
  cmd->callback([flags, &exit_code]() { exit_code = RunModel(*flags); });
}

}  // namespace cairn
