// Engine, the redundancy steps of both pipelines: protecting a committed
// version with its groups, and rebuilding lost copies before a restart
// (engine.h; the work itself is EngineRedundancy's).
#include "base/log.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {

void Engine::ScheduleProtection(TierKind kind, const std::string& name, int64_t version,
                                std::vector<Status>* sync_errors) {
  // The pfs is no node's failure domain: a version there needs no group.
  if (!redundancy_ || kind == TierKind::kPfs) return;
  uint64_t ticket = 0;
  {
    // Retention must not delete the copy while it waits or is encoded.
    MutexLock lock(&mu_);
    pinned_.insert({static_cast<int>(kind), version});
    if (redundancy_->background()) {
      ProtectionQueue& queue = protection_queues_[{static_cast<int>(kind), name}];
      queue.versions.push_back(version);
      ticket = ++queue.scheduled;
    }
  }
  if (!redundancy_->background()) {
    Status s = ProtectPinned(kind, name, version);
    if (!s.ok()) sync_errors->push_back(s);
    return;
  }
  // Not the flusher's own superseding: whether a queued job has started
  // differs from rank to rank, and the encode is collective. The job
  // coalesces instead, with every rank (ProtectNewestQueued).
  flusher_->Add([this, kind, name, ticket] { return ProtectNewestQueued(kind, name, ticket); });
}

Status Engine::ProtectNewestQueued(TierKind kind, const std::string& name, uint64_t ticket) {
  uint64_t waiting = 0;
  {
    MutexLock lock(&mu_);
    const ProtectionQueue& queue = protection_queues_[{static_cast<int>(kind), name}];
    // Every rank has taken the same tickets (each take below is agreed), so
    // every rank skips, or encodes, here alike.
    if (ticket <= queue.taken) return Status::Ok();
    waiting = queue.versions.size();
  }
  // Ranks whose application thread ran ahead have queued more: the newest
  // version queued on every rank is encoded, the older ones are dropped.
  Result<int64_t> agreed = redundancy_->encode_comm().Min(static_cast<int64_t>(waiting));
  // Without an agreement (the comm failed), only this ticket's version goes.
  const uint64_t take = agreed.ok() ? static_cast<uint64_t>(*agreed) : 1;
  int64_t newest = kNone;
  {
    MutexLock lock(&mu_);
    ProtectionQueue& queue = protection_queues_[{static_cast<int>(kind), name}];
    for (uint64_t i = 0; i < take; ++i) {
      newest = queue.versions.front();
      queue.versions.pop_front();
      // Dropped versions are released now; the newest when encoded.
      if (i + 1 < take) pinned_.erase(pinned_.find({static_cast<int>(kind), newest}));
    }
    queue.taken += take;
  }
  if (take > 1) {
    Log(LogLevel::kDebug, "'{}': {} queued redundancy encode(s) superseded by version {}", name,
        take - 1, newest);
  }
  if (!agreed.ok()) {
    MutexLock lock(&mu_);
    pinned_.erase(pinned_.find({static_cast<int>(kind), newest}));
    return agreed.status();
  }
  return ProtectPinned(kind, name, newest);
}

Status Engine::ProtectPinned(TierKind kind, const std::string& name, int64_t version) {
  Result<uint64_t> written = redundancy_->ProtectVersion(*tier(kind), name, version);
  {
    MutexLock lock(&mu_);
    pinned_.erase(pinned_.find({static_cast<int>(kind), version}));
  }
  if (!written.ok()) {
    // The version stays committed, only unprotected against node loss.
    Log(LogLevel::kWarn, "{} (the version stays committed without redundancy)",
        written.status().ToString());
    return written.status();
  }
  // Parity wears the SSD as parts do: the controller must see it.
  if (kind == TierKind::kSsd) controller_->RecordSsdWrite(*written);
  Log(LogLevel::kDebug, "'{}' version {} protected by {} redundancy", name, version,
      RedundancySchemeName(config_.redundancy.scheme));
  return Status::Ok();
}

int64_t Engine::NewestProtected(const std::string& name, int64_t max_version) {
  int64_t newest = kNone;
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k] || static_cast<TierKind>(k) == TierKind::kPfs) continue;
    auto versions = tiers_[k]->Versions(name);
    if (!versions.ok()) continue;
    for (int64_t v : *versions) {
      if (v <= newest || (max_version >= 0 && v > max_version)) continue;
      auto m = CheckCopy(*tiers_[k], name, v, comm_->rank(), comm_->size());
      if (m.ok() && m->redundancy) newest = v;
    }
  }
  return newest;
}

Status Engine::RebuildLostCopies(const std::string& name, int64_t max_version) {
  last_rebuild_error_ = Status::Ok();
  if (!redundancy_) return Status::Ok();
  // Encodes still queued finish first: a copy is protected or not, not
  // half-way there.
  (void)flusher_->Wait();
  std::array<Tier*, kTierKinds> tiers{};
  Tier* write_back = nullptr;
  for (int k = 0; k < kTierKinds; ++k) {
    tiers[k] = tiers_[k].get();
    if (tiers[k] && !write_back && static_cast<TierKind>(k) != TierKind::kPfs) write_back = tiers[k];
  }
  int64_t cap = max_version;
  // Each try reads every rank's copy of one version: a few older versions
  // at most, as retention keeps.
  for (int tries = 0; tries < config_.KeepFor(TierKind::kMemory) + 2; ++tries) {
    int64_t mine = kNone;
    {
      MutexLock lock(&mu_);
      mine = NewestProtected(name, cap);
    }
    CAIRN_ASSIGN_OR_RETURN(int64_t candidate, comm_->Max(mine));
    if (candidate == kNone) return Status::Ok();
    // A copy counts only when every byte checks: a rank whose node-local
    // copies are all gone or corrupt is rebuilt like a lost node's.
    bool have = false;
    for (int k = 0; k < kTierKinds && !have; ++k) {
      if (!tiers[k] || static_cast<TierKind>(k) == TierKind::kPfs) continue;
      Status intact = CheckIntactCopy(*tiers[k], name, candidate, comm_->rank(), comm_->size());
      have = intact.ok();
      if (!intact.ok() && intact.code() != Code::kNotFound) {
        Log(LogLevel::kWarn, "restart: rank {}'s copy of '{}' version {} on tier {} is damaged "
            "({}); unless another node-local tier holds it whole, its redundancy group rebuilds it",
            comm_->rank(), name, candidate,
            tiers[k]->name(), intact.ToString());
      }
    }
    CAIRN_ASSIGN_OR_RETURN(bool everyone, comm_->AllTrue(have));
    if (everyone) return Status::Ok();  // nothing lost: the restore reads the copies
    auto rebuilt = redundancy_->RebuildVersion(tiers, write_back, name, candidate);
    if (rebuilt.ok()) {
      if (write_back != nullptr && write_back->kind() == TierKind::kSsd) {
        controller_->RecordSsdWrite(rebuilt->bytes_written_here);
      }
      last_rebuild_ = LastRebuild{name, *rebuilt};
      Log(LogLevel::kInfo,
          "restart: rebuilt '{}' version {} from {} redundancy groups: {} part(s) and {} "
          "parity file(s), written back to node-local tier {}",
          name, candidate, rebuilt->scheme, rebuilt->parts_rebuilt, rebuilt->parities_rebuilt,
          write_back ? write_back->name() : "none");
      return Status::Ok();
    }
    if (rebuilt.status().code() == Code::kComm) return rebuilt.status();
    last_rebuild_error_ = rebuilt.status();
    Log(LogLevel::kWarn, "restart: '{}' version {} cannot be rebuilt from its redundancy groups "
        "({}); trying older versions and lower tiers", name, candidate,
        rebuilt.status().ToString());
    cap = candidate - 1;
    if (cap < 0) return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace cairn
