#include "runtime/io_parallelism.h"

#include "base/log.h"
#include "model/energy_optimizer.h"
#include "storage/tier.h"
#include "storage/tier_path.h"

namespace cairn {
namespace {

// The parallelism of highest throughput for op at the highest frequency,
// over every block size (ties: fewer processes).
int FastestParallelism(const IoProfile& profile, const DeviceIoProfile& device, IoOp op) {
  size_t f = profile.frequencies_khz.size() - 1;
  double best = 0;
  int best_p = device.parallelism.front();
  for (size_t p = 0; p < device.parallelism.size(); ++p) {
    IoChoice c = FastestBlock(device, op, IoChoice{f, p, 0});
    double bps = device.blocks[c.block_index].op(op).throughput_bps[f][p];
    if (bps > best) {
      best = bps;
      best_p = device.parallelism[p];
    }
  }
  return best_p;
}

}  // namespace

Result<IoParallelism> ProfileParallelism(const IoProfile& profile, const std::string& device,
                                         const IntervalSettings& model, double node_bytes) {
  const DeviceIoProfile* d = profile.FindDevice(device);
  if (d == nullptr) return Error(Code::kNotFound, "the profile has no device '{}'", device);
  IoParallelism out;
  // A grid of threads in one process stands in for as many processes: the
  // device sees the same number of concurrent streams.
  std::string kind = d->parallelism_kind == ParallelismKind::kThreads ? ", measured with threads" : "";
  if (model.power_compute > 0 && node_bytes > 0) {
    EnergyProblem problem{node_bytes, 1 / model.mtbf_seconds, model.power_compute};
    CAIRN_ASSIGN_OR_RETURN(DeviceEnergyReport report, OptimizeDeviceEnergy(profile, *d, problem));
    out.write = report.best.write.parallelism;
    out.read = report.best.read.parallelism;
    out.source = "profile (energy" + kind + ")";
    return out;
  }
  out.write = FastestParallelism(profile, *d, IoOp::kWrite);
  out.read = FastestParallelism(profile, *d, IoOp::kRead);
  out.source = "profile (throughput" + kind + ")";
  return out;
}

ParallelismTuner::ParallelismTuner(int ranks_on_node) {
  candidates_.push_back(0);
  for (int p = ranks_on_node / 2; p >= 1; p /= 2) candidates_.push_back(p);
}

void ParallelismTuner::Record(double seconds) {
  if (done()) return;
  seconds_.push_back(seconds);
  ++next_;
}

int ParallelismTuner::best() const {
  size_t best = 0;
  for (size_t i = 1; i < seconds_.size(); ++i) {
    if (seconds_[i] < seconds_[best]) best = i;
  }
  return candidates_[best];
}

IoParallelism ResolveIoParallelism(const Config& config, Env* env, TierKind kind,
                                   double node_bytes) {
  if (!config.io.auto_parallelism) {
    return IoParallelism{config.io.parallelism, config.io.parallelism, "config"};
  }
  auto expanded = ExpandTierPath(env, config.io.profile, config.dir, "0");
  const std::string path = expanded.ok() ? *expanded : config.io.profile;
  auto chosen = [&]() -> Result<IoParallelism> {
    CAIRN_RETURN_IF_ERROR(expanded.status());
    CAIRN_ASSIGN_OR_RETURN(std::string text, env->ReadFileToString(path));
    CAIRN_ASSIGN_OR_RETURN(IoProfile profile, ParseIoProfile(text));
    return ProfileParallelism(profile, TierKindName(kind), config.interval, node_bytes);
  }();
  if (!chosen.ok()) {
    Log(LogLevel::kWarn,
        "io.parallelism = auto: no optimum for tier '{}' from '{}' ({}); measuring a default on "
        "the first checkpoints instead (run `cairn profile --out {}`)",
        TierKindName(kind), path, chosen.status().ToString(), path);
    return IoParallelism{0, 0, "default", /*no_optimum=*/true};
  }
  return *chosen;
}

}  // namespace cairn
