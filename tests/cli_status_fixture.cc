// Writes what two runs of a job leave on one node's SSD tier for `cairn
// status` to read: the wear ledger (writer r0, in the ledger directory the
// engine uses) and the placement history, through the same functions the
// engine calls (WearLedger, MakeSsdWear, EstimateLifetime,
// AppendPlacementRecord). Used by tests/cli_test.sh.
//
//   cli_status_fixture SSD_TIER_ROOT
//
// Run 1 (start 1767225600, 2026-01-01) makes 10 checkpoint calls, run 2
// (start 1767312000, a day later) 6, one every 60 s, 10 GB per call on the
// node. Placements cycle memory, ssd, memory, skip, memory, ssd; only ssd
// calls are recorded in the ledger. So the ledger holds 5 ssd calls
// (50 GB), run 2's split is 3 memory, 2 ssd, 1 skip, and all 16 calls are
// 8 memory, 5 ssd, 3 skip. Run 2 wrote 20 GB to the SSD in its 360 s:
// B_SSD 55.6 MB/s, under the 92.5 MB/s that 14.6 PBW over 5 years allows,
// so the SSD lasts 8.3 years at that rate. Deterministic: every time is
// given, none is read.
#include <cstdio>
#include <optional>

#include "env/device.h"
#include "policy/clc.h"
#include "runtime/placement_history.h"
#include "storage/wear_ledger.h"

namespace cairn {
namespace {

constexpr uint64_t kBytesPerCall = 10'000'000'000;
constexpr double kRunStarts[] = {1767225600, 1767312000};
constexpr int kCalls[] = {10, 6};
const char* const kCycle[] = {"memory", "ssd", "memory", "skip", "memory", "ssd"};

Status Write(const std::string& root) {
  Env* env = PosixEnv();
  CAIRN_RETURN_IF_ERROR(env->CreateDirs(root));
  auto device = DeviceOf(root);
  WearLedgerOptions options;
  options.dir = WearLedgerDir(root, device.ok() ? std::optional(*device) : std::nullopt);
  options.writer = "r0";
  CAIRN_ASSIGN_OR_RETURN(auto ledger, WearLedger::Open(env, options, kRunStarts[0]));
  const SsdEndurance endurance;  // the config's defaults
  int cycle = 0;
  for (int run = 0; run < 2; ++run) {
    for (int i = 1; i <= kCalls[run]; ++i) {
      PlacementRecord r;
      r.run_start = kRunStarts[run];
      r.time = r.run_start + 60.0 * i;
      r.name = "heat";
      r.version = 10 * i;
      r.number = i;
      r.placement = kCycle[cycle++ % 6];
      r.rule = r.placement == "ssd" ? "within-limits" : "lifetime";
      r.node_bytes = kBytesPerCall;
      CAIRN_ASSIGN_OR_RETURN(WearReading reading, ledger->Read(r.time, 0, r.run_start));
      SsdWear wear = MakeSsdWear(endurance, reading);
      LifetimeEstimate life = EstimateLifetime(wear);
      r.ssd_bytes_used = wear.used_bytes;
      r.ssd_rating_bytes = wear.rating_bytes;
      r.warranty_seconds = wear.warranty_seconds;
      r.bandwidth = wear.bandwidth;
      r.wear_source = WearSourceName(reading.bandwidth_source);
      r.expected_lifetime_seconds = life.expected_seconds;
      r.estimated_lifetime_seconds = life.estimated_seconds;
      r.slowdown = 0.01 * i;
      r.slowdown_bound = 0.1;
      r.checkpoint_seconds = r.placement == "ssd" ? 0.5 : r.placement == "memory" ? 0.05 : 0;
      r.policy = "clc";  // with both tests on, as the config's defaults for clc
      r.lifetime_checked = r.slowdown_checked = true;
      if (r.placement == "ssd") {
        CAIRN_RETURN_IF_ERROR(ledger->Record(kBytesPerCall, r.time + r.checkpoint_seconds));
      }
      CAIRN_RETURN_IF_ERROR(AppendPlacementRecord(env, root, r));
    }
  }
  return Status::Ok();
}

}  // namespace
}  // namespace cairn

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SSD_TIER_ROOT\n", argv[0]);
    return 2;
  }
  cairn::Status s = cairn::Write(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "cli_status_fixture: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
