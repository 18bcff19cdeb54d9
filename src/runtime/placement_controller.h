// PlacementController: the engine's side of the Checkpoint Location
// Controller (policy/clc.h, docs/clc.md "Integration in the engine"). It owns
// what the controller measures — the slowdown tracker (T_chk, T_compute)
// and this rank's writer of its node's SSD wear ledger (PBW_used, B_SSD) —
// and, before each checkpoint, decides collectively where the version goes:
// every rank runs Algorithm 1 on its own inputs, the decisions are gathered
// and CombineDecisions gives every rank the same placement.
//
// It runs for every policy, not just clc: the fixed policies still honour
// forced checkpoints (force_ssd_every, the caller's flag), and `cairn status`
// reports wear and slowdown whatever the policy.
//
// Thread-safety: Decide, EnterCheckpoint and LeaveCheckpoint are called from
// the application thread (Decide is collective); RecordSsdWrite from any
// thread (drains into the SSD run on the flusher).
#ifndef CAIRN_RUNTIME_PLACEMENT_CONTROLLER_H_
#define CAIRN_RUNTIME_PLACEMENT_CONTROLLER_H_

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/config.h"
#include "comm/comm.h"
#include "env/env.h"
#include "policy/clc.h"
#include "policy/slowdown.h"
#include "storage/tier.h"
#include "storage/wear_ledger.h"

namespace cairn {

// The controller's answer for one version, with what it was based on.
struct PlacementOutcome {
  CollectiveDecision decision;
  ClcDecision local;          // this rank's own Algorithm 1 result
  int64_t number = 0;         // checkpoint call number in this run, from 1
  uint64_t node_bytes = 0;    // this node's ranks' bytes for the version
  WearReading wear;           // what the lifetime test read (empty if no ledger)
  bool wear_known = false;    // false: no ledger, the SSD counted as wearing
  SsdWear ssd_wear;           // the lifetime inputs Algorithm 1 used
};

class PlacementController {
 public:
  // Collective (it learns each rank's index on its node). memory (the fast
  // level: the memory tier, or the pmem tier when memory is off) and ssd
  // are the engine's tiers of this node, or null when disabled; they must
  // outlive the controller. A damaged ledger is not fatal: the controller
  // runs without it and treats the SSD as wearing (the safe side for the
  // device), and says so in the log and in every decision's wear problems.
  static Result<std::unique_ptr<PlacementController>> Open(Comm* comm, const Config& config,
                                                            Env* env, Clock* clock,
                                                            const Tier* memory, const Tier* ssd);

  // The slowdown tracker's bracket around a checkpoint call (every call,
  // skipped or failed ones included).
  void EnterCheckpoint() { tracker_.EnterCheckpoint(); }
  void LeaveCheckpoint() { tracker_.LeaveCheckpoint(); }

  // Collective: where the next version goes. bytes: this rank's checkpoint
  // bytes; force: the caller asked for a durable copy.
  Result<PlacementOutcome> Decide(uint64_t bytes, bool force);

  // Bytes this rank wrote to its node's SSD (every byte wears the device).
  // Failures are logged: a lost ledger update under-counts one write and the
  // next successful one persists it.
  void RecordSsdWrite(uint64_t bytes);

  int local_rank() const { return local_rank_; }
  double run_start() const { return run_start_; }

 private:
  PlacementController(Comm* comm, const Config& config, Clock* clock, const Tier* memory);

  // The memory tier's room before the write (ClcInput::memory_capacity).
  uint64_t MemoryRoom() const;

  Comm* comm_;
  ClcSettings settings_;
  SsdEndurance endurance_;
  Clock* clock_;
  const Tier* memory_;
  SlowdownTracker tracker_;
  std::unique_ptr<WearLedger> ledger_;  // null: no SSD tier, or its ledger is unusable
  int local_rank_ = 0;
  double run_start_ = 0;
  int64_t number_ = 0;
};

}  // namespace cairn

#endif  // CAIRN_RUNTIME_PLACEMENT_CONTROLLER_H_
