#include "runtime/placement_controller.h"

#include <limits>

#include "base/log.h"
#include "env/device.h"

namespace cairn {

PlacementController::PlacementController(Comm* comm, const Config& config, Clock* clock,
                                         const Tier* memory)
    : comm_(comm),
      settings_(config.placement),
      endurance_(config.ssd_endurance()),
      clock_(clock),
      memory_(memory),
      tracker_(clock),
      run_start_(clock->WallSeconds()) {}

Result<std::unique_ptr<PlacementController>> PlacementController::Open(
    Comm* comm, const Config& config, Env* env, Clock* clock, const Tier* memory,
    const Tier* ssd) {
  std::unique_ptr<PlacementController> c(
      new PlacementController(comm, config, clock, memory));
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> nodes, comm->Allgather(comm->node()));
  for (int r = 0; r < comm->rank(); ++r) c->local_rank_ += nodes[r] == comm->node();
  if (ssd == nullptr) return c;
  std::optional<DeviceNumber> device;
  if (auto dev = DeviceOf(ssd->root()); dev.ok()) device = *dev;
  WearLedgerOptions options;
  options.dir = WearLedgerDir(ssd->root(), device);
  options.writer = "r" + std::to_string(c->local_rank_);
  options.device = device;
  auto ledger = WearLedger::Open(env, options, clock->WallSeconds());
  if (ledger.ok()) {
    c->ledger_ = std::move(ledger).value();
  } else {
    Log(LogLevel::kWarn,
        "SSD wear ledger unusable ({}); the controller treats the SSD as wearing out",
        ledger.status().ToString());
  }
  return c;
}

uint64_t PlacementController::MemoryRoom() const {
  if (memory_ == nullptr || memory_->config().capacity == 0) return kNoMemoryLimit;
  // Parked slots are room for a version: it is written into one, or they
  // are released to make room for it.
  auto used = memory_->VersionBytes();
  if (!used.ok()) return 0;  // unknown room: nothing fits, the safe answer
  uint64_t capacity = memory_->config().capacity;
  return *used >= capacity ? 0 : capacity - *used;
}

Result<PlacementOutcome> PlacementController::Decide(uint64_t bytes, bool force) {
  PlacementOutcome out;
  out.number = ++number_;
  ClcInput input;
  input.checkpoint_number = out.number;
  input.force_ssd = force;
  input.checkpoint_bytes = bytes;
  input.memory_capacity = MemoryRoom();
  input.ranks_on_node = comm_->ranks_on_node();
  input.checkpoint_seconds = tracker_.checkpoint_seconds();
  input.compute_seconds = tracker_.compute_seconds();
  if (ledger_) {
    auto reading = ledger_->Read(clock_->WallSeconds(), settings_.bandwidth_window, run_start_);
    if (reading.ok()) {
      out.wear = std::move(reading).value();
      out.wear_known = true;
    } else {
      Log(LogLevel::kWarn, "reading the SSD wear ledger: {}", reading.status().ToString());
    }
  }
  input.wear = MakeSsdWear(endurance_, out.wear);
  // Without a reading the SSD counts as wearing (B_SSD infinite: L_estimated
  // is 0), which keeps versions off a device whose wear is unknown.
  if (!out.wear_known) input.wear.bandwidth = std::numeric_limits<double>::infinity();
  out.ssd_wear = input.wear;
  out.local = DecidePlacement(settings_, input);

  ClcWire wire = EncodeDecision({comm_->node(), out.local});
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> words,
                         comm_->AllgatherWords(std::vector<int64_t>(wire.begin(), wire.end())));
  std::array<std::vector<int64_t>, kClcWireWords> gathered;
  for (int w = 0; w < kClcWireWords; ++w) {
    for (int r = 0; r < comm_->size(); ++r) gathered[w].push_back(words[r * kClcWireWords + w]);
  }
  CAIRN_ASSIGN_OR_RETURN(std::vector<RankDecision> all, DecodeGathered(gathered));
  for (const auto& rd : all) {
    if (rd.node == comm_->node()) out.node_bytes += rd.decision.checkpoint_bytes;
  }
  CAIRN_ASSIGN_OR_RETURN(out.decision, CombineDecisions(all));
  Log(LogLevel::kInfo, "placement of checkpoint call {}: {}", out.number, out.decision.reason);
  return out;
}

void PlacementController::RecordSsdWrite(uint64_t bytes) {
  if (!ledger_) return;
  Status s = ledger_->Record(bytes, clock_->WallSeconds());
  if (!s.ok()) Log(LogLevel::kWarn, "SSD wear ledger update: {}", s.ToString());
}

}  // namespace cairn
