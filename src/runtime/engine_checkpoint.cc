// Engine, the checkpoint pipeline: write this rank's copy, commit it
// collectively, apply retention, drain to lower tiers (engine.h).
#include <algorithm>

#include "base/log.h"
#include "format/layout.h"
#include "policy/retention.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {

Status Engine::WriteVersion(Tier& t, const std::string& name, int64_t version) {
  {
    // A copy of this version left by an earlier run must not be mistaken
    // for the new one while the new one is being written.
    std::lock_guard<std::mutex> lock(mu_);
    CAIRN_RETURN_IF_ERROR(RemoveCopy(t, name, version, /*remove_empty_dir=*/false));
  }
  std::vector<Region> regions = SortedRegions();
  Manifest manifest;
  manifest.name = name;
  manifest.version = version;
  manifest.rank = comm_->rank();
  manifest.nranks = comm_->size();
  manifest.created = clock_->WallSeconds();
  PartHeader header = MakePartHeader(name, version, comm_->rank(), comm_->size(), regions);
  CAIRN_ASSIGN_OR_RETURN(FileEntry part, WritePart(t, header, regions));
  manifest.files.push_back(std::move(part));
  CAIRN_ASSIGN_OR_RETURN(auto routed, PendingRoutedFiles());
  for (const auto& [logical, path] : routed) {
    CAIRN_ASSIGN_OR_RETURN(
        FileEntry entry,
        WriteRoutedFile(t, name, version, RoutedFileName(comm_->rank(), logical), logical, path));
    manifest.files.push_back(std::move(entry));
  }
  if (t.kind() == TierKind::kMemory && EccCodeFor(t.config().ecc)) {
    // Software chipkill: the part's parity sidecar, written before the
    // manifest so that it is committed with the copy.
    CAIRN_ASSIGN_OR_RETURN(FileEntry parity, WriteEccSidecar(t, header, regions, t.config().ecc));
    manifest.files.push_back(std::move(parity));
  }
  return t.PutFile(name, version, ManifestFileName(comm_->rank()), manifest.Encode());
}

Result<std::array<int64_t, kTierKinds>> Engine::GloballyCompleteVersions(const std::string& name) {
  std::vector<int64_t> newest(kTierKinds, kNone);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int k = 0; k < kTierKinds; ++k) {
      if (!tiers_[k]) continue;
      CAIRN_ASSIGN_OR_RETURN(auto versions, tiers_[k]->Versions(name));
      for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
        if (env_->FileExists(tiers_[k]->FilePath(name, *it, ManifestFileName(comm_->rank())))) {
          newest[k] = *it;
          break;
        }
      }
    }
  }
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMin(newest));
  std::array<int64_t, kTierKinds> out;
  std::copy(newest.begin(), newest.end(), out.begin());
  return out;
}

void Engine::ApplyRetention(const std::string& name,
                            const std::array<int64_t, kTierKinds>& global) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int k = 0; k < kTierKinds; ++k) {
    Tier* t = tiers_[k].get();
    if (t == nullptr) continue;
    auto versions = t->Versions(name);
    if (!versions.ok()) continue;
    std::vector<StoredVersion> stored;
    for (int64_t v : *versions) {
      stored.push_back({v, env_->FileExists(t->FilePath(name, v, ManifestFileName(comm_->rank()))),
                        pinned_.count({k, v}) > 0});
    }
    for (int64_t v : VersionsToDelete(stored, config_.KeepFor(static_cast<TierKind>(k)), global[k])) {
      Status s = RemoveCopy(*t, name, v);
      if (!s.ok()) Log(LogLevel::kWarn, "retention on tier '{}': {}", t->name(), s.ToString());
    }
  }
}

Status Engine::Drain(TierKind from, TierKind to, const std::string& name, int64_t version) {
  Tier* src = tier(from);
  Tier* dst = tier(to);
  // REQUIRES: ScheduleDrains pinned (from, version); it is unpinned here.
  std::pair<int, int64_t> pin{static_cast<int>(from), version};
  {
    std::lock_guard<std::mutex> lock(mu_);
    Status s = RemoveCopy(*dst, name, version, /*remove_empty_dir=*/false);
    if (!s.ok()) {
      pinned_.erase(pinned_.find(pin));
      return s;
    }
  }
  Status s = [&]() -> Status {
    bool part_size_wrong = false;
    CAIRN_ASSIGN_OR_RETURN(Manifest m, CheckCopyOrRepairable(*src, name, version, &part_size_wrong));
    const FileEntry* parity = FindParityEntry(m);
    Manifest drained = m;
    drained.files.clear();
    for (const auto& f : m.files) {
      // The ECC sidecar stays on the memory tier: lower tiers use no ecc.
      if (f.kind == FileKind::kParity) continue;
      Status copied = part_size_wrong && f.kind == FileKind::kPart
                          ? Error(Code::kCorrupt, "'{}' has the wrong size", f.name)
                          : CopyBetweenTiers(*src, *dst, name, version, f);
      if (!copied.ok() && copied.code() == Code::kCorrupt && f.kind == FileKind::kPart &&
          parity != nullptr) {
        // Never propagate damage: drain the part as repaired from its sidecar.
        copied = DrainRepairedPart(*src, *dst, name, version, f, *parity, copied);
      }
      CAIRN_RETURN_IF_ERROR(copied);
      drained.files.push_back(f);
    }
    return dst->PutFile(name, version, ManifestFileName(comm_->rank()), drained.Encode());
  }();
  {
    std::lock_guard<std::mutex> lock(mu_);
    pinned_.erase(pinned_.find(pin));
    if (!s.ok()) (void)RemoveCopy(*dst, name, version, /*remove_empty_dir=*/false);
  }
  if (!s.ok()) {
    s = s.Annotate(fmt::format("draining '{}' version {} from {} to {}", name, version,
                               TierKindName(from), TierKindName(to)));
    Log(LogLevel::kWarn, "{}", s.ToString());
  } else {
    Log(LogLevel::kDebug, "drained '{}' version {} from {} to {}", name, version,
        TierKindName(from), TierKindName(to));
  }
  return s;
}

void Engine::ScheduleDrains(TierKind from, const std::string& name, int64_t version,
                            std::vector<Status>* sync_errors) {
  for (int k = static_cast<int>(from) + 1; k < kTierKinds; ++k) {
    Tier* t = tiers_[k].get();
    if (t == nullptr || checkpoints_ % t->config().every != 0) continue;
    auto to = static_cast<TierKind>(k);
    {
      // Pinned from now, not from when the job starts, so that retention
      // cannot delete the source while the job waits in the queue.
      std::lock_guard<std::mutex> lock(mu_);
      pinned_.insert({static_cast<int>(from), version});
    }
    if (t->config().flush == FlushMode::kSync) {
      Status s = Drain(from, to, name, version);
      if (!s.ok()) sync_errors->push_back(s);
    } else {
      flusher_->Add([this, from, to, name, version] { return Drain(from, to, name, version); });
    }
  }
}

Status Engine::Checkpoint(const std::string& name, int64_t version) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", name));
  if (version < 0) return Error(Code::kInvalidArgument, "version {} is negative", version);
  double start = clock_->MonotonicSeconds();
  TierKind kind = config_.placement;
  bool waited = false;
  for (;;) {
    Tier* t = tier(kind);
    Status local = WriteVersion(*t, name, version);
    bool no_space = false;
    Status agreed = Agree(local, &no_space);
    if (agreed.ok()) break;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Every rank has given up on this version here, so none is writing
      // into its directory any more.
      (void)RemoveCopy(*t, name, version);
    }
    if (!no_space) return agreed.Annotate(fmt::format("checkpoint '{}' version {}", name, version));
    if (!waited) {
      // The tier may be full of versions still draining: let the drains
      // finish and retention free them before giving up on this tier.
      Status drained = flusher_->Wait();
      if (!drained.ok()) Log(LogLevel::kWarn, "{}", drained.ToString());
      CAIRN_ASSIGN_OR_RETURN(auto global, GloballyCompleteVersions(name));
      ApplyRetention(name, global);
      waited = true;
      continue;
    }
    int next = static_cast<int>(kind) + 1;
    while (next < kTierKinds && !tiers_[next]) ++next;
    if (next == kTierKinds) {
      return agreed.Annotate(fmt::format("checkpoint '{}' version {}", name, version));
    }
    Log(LogLevel::kWarn, "tier '{}' is full; version {} of '{}' goes to '{}'", TierKindName(kind),
        version, name, TierKindName(static_cast<TierKind>(next)));
    kind = static_cast<TierKind>(next);
    waited = false;
  }
  ++checkpoints_;
  names_written_.insert(name);
  CAIRN_ASSIGN_OR_RETURN(auto routed, PendingRoutedFiles());
  for (const auto& [logical, path] : routed) (void)env_->DeleteFile(path);
  CAIRN_ASSIGN_OR_RETURN(auto global, GloballyCompleteVersions(name));
  ApplyRetention(name, global);
  std::vector<Status> sync_errors;
  ScheduleDrains(kind, name, version, &sync_errors);
  Log(LogLevel::kInfo, "checkpoint '{}' version {} committed on {} in {:.3f} s", name, version,
      TierKindName(kind), clock_->MonotonicSeconds() - start);
  return sync_errors.empty() ? Status::Ok() : sync_errors.front();
}

Status Engine::Wait() { return flusher_->Wait(); }

Status Engine::DrainRepairedPart(const Tier& from, Tier& to, const std::string& name,
                                 int64_t version, const FileEntry& part, const FileEntry& parity,
                                 const Status& cause) {
  CAIRN_ASSIGN_OR_RETURN(RepairedPart repaired,
                         RepairAndCount(from, name, version, part, parity, cause, "drain"));
  return WriteVerifiedBuffer(to, name, version, part, repaired.bytes);
}

}  // namespace cairn
