// Engine, the checkpoint pipeline: write this rank's copy, commit it
// collectively, apply retention, drain to lower tiers (engine.h).
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <set>

#include "base/log.h"
#include "format/layout.h"
#include "policy/retention.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"
#include "runtime/placement_history.h"

namespace cairn {

Result<uint64_t> Engine::WriteVersion(Tier& t, const std::string& name, int64_t version) {
  // A copy of this version left by an earlier run must not be mistaken
  // for the new one while the new one is being written (PlanDedup removed
  // it where it streamed the pages).
  if (!dedup_ || !dedup_->StreamedInto(t, version)) {
    MutexLock lock(&mu_);
    CAIRN_RETURN_IF_ERROR(RemoveCopy(t, name, version, /*remove_empty_dir=*/false));
  }
  std::vector<Region> regions = SortedRegions();
  Manifest manifest;
  manifest.name = name;
  manifest.version = version;
  manifest.rank = comm_->rank();
  manifest.nranks = comm_->size();
  manifest.run_id = run_id_;
  manifest.created = clock_->WallSeconds();
  PartHeader header = MakePartHeader(name, version, comm_->rank(), comm_->size(), regions);
  // Software chipkill: by default the sidecar is encoded after the commit
  // (ScheduleEccEncode); with ecc_sync, as the part is written, and
  // committed before the manifest, with the copy.
  std::unique_ptr<EccSidecarWriter> sidecar;
  if (WantsEccSidecar(t.kind()) && t.config().ecc_sync) {
    CAIRN_ASSIGN_OR_RETURN(sidecar, EccSidecarWriter::Start(t, header, t.config().ecc));
  }
  // With [dedup] the part is the planned pages file (engine_dedup.h),
  // unless the plan is to write the version whole.
  const bool paged = dedup_ && !dedup_->WritesWhole();
  CAIRN_ASSIGN_OR_RETURN(FileEntry part,
                         paged ? dedup_->WritePart(t, name, version, comm_->rank(), comm_->size())
                               : WritePart(t, header, regions, sidecar.get()));
  manifest.files.push_back(std::move(part));
  if (dedup_) manifest.references = dedup_->references();
  CAIRN_ASSIGN_OR_RETURN(auto routed, PendingRoutedFiles());
  for (const auto& [logical, path] : routed) {
    CAIRN_ASSIGN_OR_RETURN(
        FileEntry entry,
        WriteRoutedFile(t, name, version, RoutedFileName(comm_->rank(), logical), logical, path));
    manifest.files.push_back(std::move(entry));
  }
  if (sidecar) {
    CAIRN_ASSIGN_OR_RETURN(FileEntry parity, sidecar->Commit());
    manifest.files.push_back(std::move(parity));
    manifest.ecc_protected = std::max(clock_->WallSeconds(), manifest.created);
  }
  std::string encoded = manifest.Encode();
  CAIRN_RETURN_IF_ERROR(t.PutFile(name, version, ManifestFileName(comm_->rank()), encoded));
  return manifest.DataBytes() + encoded.size();
}

std::vector<StoredVersion> Engine::StoredCopies(int k, const std::string& name,
                                                int64_t committed) {
  std::vector<StoredVersion> out;
  Tier* t = tiers_[k].get();
  auto versions = t->Versions(name);
  if (!versions.ok()) return out;
  for (int64_t v : *versions) {
    auto copy = CheckCopy(*t, name, v, comm_->rank(), comm_->size());
    // A job of another size wrote it: not ours to count or delete.
    if (copy.status().code() == Code::kMismatch) continue;
    StoredVersion stored{v, copy.ok(), pinned_.count({k, v}) > 0, false, {}};
    if (copy.ok()) stored.references = copy->references;  // [dedup]: kept with v
    if (committed != kNone && stored.complete) {
      // What this run has just committed is the job's newest state: a
      // higher version (an abandoned timeline) or an earlier run's copy of
      // the same version is one a restart must never go back to.
      stored.superseded = v > committed || (v == committed && copy->run_id != run_id_);
    }
    if (v == committed && !stored.superseded) stored.pinned = true;
    if (AbandonedLocked(name, v)) {
      // A rollback left v behind: it goes even while a drain pins it, since
      // that drain will not commit it (CopyVersionDown checks under mu_).
      stored.superseded = true;
      stored.pinned = false;
    }
    out.push_back(stored);
  }
  return out;
}

Result<std::array<std::vector<int64_t>, kTierKinds>> Engine::VersionsEverywhere(
    const std::array<std::vector<StoredVersion>, kTierKinds>& stored) {
  // Rank 0's newest complete versions of each tier are the candidates (a
  // version every rank holds is among them); every rank says which of them
  // it holds too. A window a little wider than the tier's `keep` is enough,
  // and no wider than what rank 0 holds: a `keep` of "all" (1000000, as the
  // peers' layers set for the persistent tier) must not cost a million
  // candidates per checkpoint.
  std::array<std::set<int64_t>, kTierKinds> complete;
  for (int k = 0; k < kTierKinds; ++k) {
    for (const StoredVersion& v : stored[k]) {
      if (v.complete && !v.superseded) complete[k].insert(v.version);
    }
  }
  // The wire: per tier, the number of candidates, then the candidates.
  std::vector<int64_t> wire;
  if (comm_->rank() == 0) {
    for (int k = 0; k < kTierKinds; ++k) {
      const size_t window = static_cast<size_t>(config_.KeepFor(static_cast<TierKind>(k))) + 16;
      const size_t count = std::min(window, complete[k].size());
      wire.push_back(static_cast<int64_t>(count));
      wire.insert(wire.end(), complete[k].rbegin(), std::next(complete[k].rbegin(), count));
    }
  }
  std::string bytes(reinterpret_cast<const char*>(wire.data()), wire.size() * sizeof(int64_t));
  CAIRN_RETURN_IF_ERROR(comm_->Broadcast(&bytes, 0));
  wire.resize(bytes.size() / sizeof(int64_t));
  std::memcpy(wire.data(), bytes.data(), wire.size() * sizeof(int64_t));
  // held[i] is 1 where wire[i] is a candidate this rank holds (0 on counts).
  std::vector<int64_t> held(wire.size(), 0);
  for (size_t at = 0, k = 0; k < kTierKinds; ++k) {
    if (at >= wire.size()) return Error(Code::kInternal, "retention: short candidate list from rank 0");
    const size_t count = static_cast<size_t>(wire[at++]);
    if (count > wire.size() - at) return Error(Code::kInternal, "retention: candidate list overruns");
    for (size_t i = 0; i < count; ++i, ++at) held[at] = complete[k].count(wire[at]);
  }
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMin(held));
  std::array<std::vector<int64_t>, kTierKinds> everywhere;
  for (size_t at = 0, k = 0; k < kTierKinds; ++k) {
    const size_t count = static_cast<size_t>(wire[at++]);
    for (size_t i = 0; i < count; ++i, ++at) {
      if (held[at]) everywhere[k].push_back(wire[at]);
    }
  }
  return everywhere;
}

Result<std::array<int64_t, kTierKinds>> Engine::ApplyRetention(const std::string& name,
                                                                int64_t committed) {
  std::array<std::vector<StoredVersion>, kTierKinds> stored;
  {
    MutexLock lock(&mu_);
    for (int k = 0; k < kTierKinds; ++k) {
      if (tiers_[k]) stored[k] = StoredCopies(k, name, committed);
    }
  }
  CAIRN_ASSIGN_OR_RETURN(auto everywhere, VersionsEverywhere(stored));
  std::array<int64_t, kTierKinds> newest;
  newest.fill(kNone);
  MutexLock lock(&mu_);
  for (int k = 0; k < kTierKinds; ++k) {
    Tier* t = tiers_[k].get();
    if (t == nullptr) continue;
    for (int64_t v : everywhere[k]) newest[k] = std::max(newest[k], v);
    for (int64_t v : VersionsToDelete(stored[k], config_.KeepFor(static_cast<TierKind>(k)),
                                      everywhere[k])) {
      if (pinned_.count({k, v})) continue;  // a drain took it up meanwhile
      Status s = RemoveCopy(*t, name, v);
      if (!s.ok()) Log(LogLevel::kWarn, "retention on tier '{}': {}", t->name(), s.ToString());
    }
  }
  return newest;
}

Status Engine::CopyVersionDown(TierKind from, TierKind to, const std::string& name,
                               int64_t version) {
  Tier* src = tier(from);
  Tier* dst = tier(to);
  {
    MutexLock lock(&mu_);
    CAIRN_RETURN_IF_ERROR(RemoveCopy(*dst, name, version, /*remove_empty_dir=*/false));
  }
  Status s = [&]() -> Status {
    bool part_size_wrong = false;
    CAIRN_ASSIGN_OR_RETURN(Manifest m, CheckCopyOrRepairable(*src, name, version, &part_size_wrong));
    const FileEntry* parity = FindParityEntry(m);
    Manifest drained = m;
    drained.files.clear();
    // Redundancy parity goes along to node-local tiers only: the pfs is no
    // node's failure domain.
    if (to == TierKind::kPfs) drained.redundancy.reset();
    drained.ecc_protected = 0;  // the ECC sidecar stays behind (below)
    for (const auto& f : m.files) {
      // The ECC sidecar stays on the memory tier: lower tiers use no ecc.
      if (f.kind == FileKind::kParity) continue;
      if (f.kind == FileKind::kRedundancy && !drained.redundancy) continue;
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
    std::string encoded = drained.Encode();
    {
      // The manifest makes the copy count; never for a version a rollback
      // abandoned meanwhile, whose files that rollback's retention deletes.
      MutexLock lock(&mu_);
      if (AbandonedLocked(name, version)) {
        return Error(Code::kNotFound, "'{}' version {} was abandoned by a rollback", name, version);
      }
      CAIRN_RETURN_IF_ERROR(dst->PutFile(name, version, ManifestFileName(comm_->rank()), encoded));
    }
    if (to == TierKind::kSsd) controller_->RecordSsdWrite(drained.DataBytes() + encoded.size());
    return Status::Ok();
  }();
  if (!s.ok()) {
    MutexLock lock(&mu_);
    (void)RemoveCopy(*dst, name, version, /*remove_empty_dir=*/false);
  }
  return s;
}

bool Engine::MakeRoomBelow(TierKind to, const std::string& name, int64_t version) {
  MutexLock lock(&mu_);
  Tier* dst = tier(to);
  const int k = static_cast<int>(to);
  auto versions = dst->Versions(name);
  if (!versions.ok()) return false;
  // The oldest first: each is superseded by `version`, which is committed
  // on a faster tier and is what this tier is for now.
  for (int64_t v : *versions) {
    if (v >= version || pinned_.count({k, v})) continue;
    if (!HasManifest(*dst, name, v, comm_->rank())) continue;
    if (!RemoveCopy(*dst, name, v).ok()) continue;
    Log(LogLevel::kWarn, "tier '{}' is full: deleted '{}' version {} to make room for version {}",
        dst->name(), name, v, version);
    return true;
  }
  return false;
}

bool Engine::AbandonedLocked(const std::string& name, int64_t version) const {
  auto last = last_committed_.find(name);
  return last != last_committed_.end() && version > last->second;
}

Status Engine::Drain(TierKind from, TierKind to, const std::string& name, int64_t version) {
  // REQUIRES: ScheduleDrains pinned (from, version) and (to, version); both
  // are unpinned here.
  bool abandoned = false;
  {
    MutexLock lock(&mu_);
    abandoned = AbandonedLocked(name, version);
  }
  Status s = abandoned ? Status::Ok() : CopyVersionDown(from, to, name, version);
  // A full tier makes room by deleting older versions there, which the
  // version being drained supersedes, rather than refusing the newest one
  // for ever while keeping the oldest.
  while (s.code() == Code::kNoSpace && MakeRoomBelow(to, name, version)) {
    s = CopyVersionDown(from, to, name, version);
  }
  if (!s.ok()) {
    s = s.Annotate(fmt::format("draining '{}' version {} from {} to {}", name, version,
                               TierKindName(from), TierKindName(to)));
  }
  {
    MutexLock lock(&mu_);
    pinned_.erase(pinned_.find({static_cast<int>(from), version}));
    pinned_.erase(pinned_.find({static_cast<int>(to), version}));
    // The application rolled back while this drain waited or ran: it
    // committed a lower version since, and a restart must never come back
    // to this one. What that commit's retention did not delete yet goes
    // here (the source once no other drain reads it).
    abandoned = AbandonedLocked(name, version);
    if (abandoned) {
      (void)RemoveCopy(*tier(to), name, version, /*remove_empty_dir=*/true);
      if (pinned_.count({static_cast<int>(from), version}) == 0) {
        (void)RemoveCopy(*tier(from), name, version, /*remove_empty_dir=*/true);
      }
    } else {
      ++(s.ok() ? background_.done : background_.failed);
      if (!s.ok()) background_.last_failure = s.ToString();
    }
  }
  if (abandoned) {
    Log(LogLevel::kInfo, "'{}' version {}: a lower version was committed after it (a rollback); "
        "not kept on {} or {}", name, version, TierKindName(from), TierKindName(to));
    return Status::Ok();
  }
  if (!s.ok()) {
    // The version is committed on `from`: the job has lost nothing, so this
    // is a warning (and cairn_checkpoint_wait's report), not a failure.
    Log(LogLevel::kWarn, "{} (the version stays on {})", s.ToString(), TierKindName(from));
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
    if (t == nullptr) continue;
    if (checkpoints_ % t->config().every != 0) {
      if (t->config().finalize_newest) skipped_newest_[{name, k}] = {from, version};
      continue;
    }
    skipped_newest_.erase({name, k});
    // clc and ratio put each version on one of memory and ssd: a memory
    // version drained to the SSD would wear it as always-SSD does.
    if (k == static_cast<int>(TierKind::kSsd) && ChoosesPerVersion(config_.placement.policy)) {
      continue;
    }
    ScheduleDrain(from, static_cast<TierKind>(k), name, version, sync_errors);
  }
}

void Engine::ScheduleDrain(TierKind from, TierKind to, const std::string& name, int64_t version,
                           std::vector<Status>* sync_errors) {
  const std::pair<int, int64_t> source{static_cast<int>(from), version};
  const std::pair<int, int64_t> target{static_cast<int>(to), version};
  {
    // Pinned from now, not from when the job starts, so that retention can
    // delete neither the source while the job waits in the queue nor the
    // copy it is writing (whose manifest is not there yet).
    MutexLock lock(&mu_);
    pinned_.insert(source);
    pinned_.insert(target);
  }
  if (tier(to)->config().flush == FlushMode::kSync) {
    Status s = Drain(from, to, name, version);
    if (!s.ok()) sync_errors->push_back(s);
    return;
  }
  // Drains of this name along the same path that have not started are
  // superseded beyond the target's `keep` newest: retention there would
  // delete an older one on arrival. Any fewer, and a version that tier
  // should keep would be left only on the faster tier, whose retention
  // deletes it (an SCR restart that skips failed or dropped datasets
  // needs the older ones).
  std::string key = fmt::format("{}/{}/{}", name, static_cast<int>(from), static_cast<int>(to));
  flusher_->AddSuperseding(
      key, [this, from, to, name, version] { return Drain(from, to, name, version); },
      [this, source, target] {
        MutexLock lock(&mu_);
        pinned_.erase(pinned_.find(source));
        pinned_.erase(pinned_.find(target));
        ++background_.superseded;
      },
      static_cast<size_t>(config_.KeepFor(to)));
}

void Engine::ResumeAbandonedDrains() {
  std::set<std::string> names;
  for (const auto& t : tiers_) {
    if (!t) continue;
    if (auto listed = t->Names(); listed.ok()) names.insert(listed->begin(), listed->end());
  }
  for (const std::string& name : names) {
    // This rank's newest complete copy (of a job of this size) on its
    // fastest tier; older versions' drains would have been superseded.
    int64_t newest = kNone;
    int from = -1;
    for (int k = 0; k < kTierKinds; ++k) {
      if (!tiers_[k]) continue;
      auto versions = tiers_[k]->Versions(name);
      if (!versions.ok()) continue;
      for (int64_t v : *versions) {
        if (v <= newest) continue;
        if (!CheckCopy(*tiers_[k], name, v, comm_->rank(), comm_->size()).ok()) continue;
        newest = v;
        from = k;
      }
    }
    if (from < 0) continue;
    for (int below = from + 1; below < kTierKinds; ++below) {
      if (!tiers_[below] ||
          (below == static_cast<int>(TierKind::kSsd) && ChoosesPerVersion(config_.placement.policy)) ||
          CheckCopy(*tiers_[below], name, newest, comm_->rank(), comm_->size()).ok()) {
        continue;
      }
      Log(LogLevel::kInfo, "'{}' version {} is not on {}: resuming its drain from {}", name,
          newest, tiers_[below]->name(), tiers_[from]->name());
      std::vector<Status> unused;
      ScheduleDrain(static_cast<TierKind>(from), static_cast<TierKind>(below), name, newest,
                    &unused);
    }
  }
}

std::optional<TierKind> Engine::NextTierBelow(TierKind kind) const {
  for (int k = static_cast<int>(kind) + 1; k < kTierKinds; ++k) {
    if (tiers_[k]) return static_cast<TierKind>(k);
  }
  return std::nullopt;
}

Status Engine::MakeRoomOnTier(TierKind kind, const std::string& name, uint64_t node_bytes) {
  Tier* t = tier(kind);
  const uint64_t capacity = t->config().capacity;
  if (capacity == 0) return Status::Ok();  // only the device limits it: the write will tell
  MutexLock lock(&mu_);
  for (;;) {
    CAIRN_ASSIGN_OR_RETURN(uint64_t held, t->VersionBytes());
    if (held + node_bytes <= capacity) return Status::Ok();
    // The oldest of this rank's copies here that a lower tier also holds
    // complete: superseded by the version about to be written, and safe.
    std::optional<int64_t> victim;
    if (auto versions = t->Versions(name); versions.ok()) {
      for (int64_t v : *versions) {
        if (pinned_.count({static_cast<int>(kind), v})) continue;
        if (!HasManifest(*t, name, v, comm_->rank())) continue;
        bool safe = false;
        for (int k = static_cast<int>(kind) + 1; k < kTierKinds && !safe; ++k) {
          safe = tiers_[k] && CheckCopy(*tiers_[k], name, v, comm_->rank(), comm_->size()).ok();
        }
        if (safe && (!victim || v < *victim)) victim = v;
      }
    }
    if (!victim) {
      return Error(Code::kNoSpace,
                   "tier {} is full ({} of its {} bytes hold versions not yet safe on a lower "
                   "tier; this node's next version needs {})",
                   t->name(), held, capacity, node_bytes);
    }
    CAIRN_RETURN_IF_ERROR(RemoveCopy(*t, name, *victim));
  }
}

Status Engine::Checkpoint(const std::string& name, int64_t version, bool force) {
  // Changed-page notes are for this call only, whatever becomes of it.
  struct ForgetNotes {
    ChangedPagesByRegion& notes;
    ~ForgetNotes() { notes.clear(); }
  } forget_notes{changed_pages_};
  // The background work this call queues starts when it returns
  // (Flusher::HoldNewJobs): an ECC encode started at the commit took a core
  // from the rest of the call, on this rank or on one sharing the node.
  struct HoldBackgroundWork {
    Flusher& flusher;
    explicit HoldBackgroundWork(Flusher& f) : flusher(f) { flusher.HoldNewJobs(); }
    ~HoldBackgroundWork() { flusher.ReleaseHeld(); }
  } hold_background_work{*flusher_};
  // So are the deletions of the slot files its retention retires.
  std::array<std::optional<Tier::SlotHold>, kTierKinds> hold_deletions;
  for (int k = 0; k < kTierKinds; ++k) {
    if (tiers_[k]) hold_deletions[k].emplace(tiers_[k].get(), Tier::SlotWork::kDeletions);
  }
  CAIRN_RETURN_IF_ERROR(comm_->Agree(ValidateRequest(name, version)));
  CAIRN_RETURN_IF_ERROR(AgreeOnTarget(name, version));
  double start = clock_->MonotonicSeconds();
  controller_->EnterCheckpoint();
  CheckpointReport report;
  report.version = version;
  Status s = PlaceAndCommit(name, version, force, &report);
  controller_->LeaveCheckpoint();
  report.seconds = clock_->MonotonicSeconds() - start;
  // A version that failed may be gone on some rank: the next one must not
  // refer to it.
  if (!s.ok() && dedup_) dedup_->Forget();
  interval_.OnCheckpoint(report.seconds, s.ok() && report.placement != Placement::kSkip);
  if (s.ok()) {
    if (WantsEccSidecar(report.tier) && report.placement != Placement::kSkip &&
        tier(report.tier)->config().ecc_sync) {
      report.ecc_protected_after = 0;
    }
    last_checkpoint_ = report;
    AppendHistory(name, report);
  }
  return s;
}

Status Engine::PlaceAndCommit(const std::string& name, int64_t version, bool force,
                              CheckpointReport* report) {
  uint64_t bytes = 0;
  for (const auto& [id, r] : regions_) bytes += r.bytes();
  CAIRN_ASSIGN_OR_RETURN(PlacementOutcome placed, controller_->Decide(bytes, force));
  report->placement = placed.decision.placement;
  report->rule = placed.decision.rule;
  report->forced = placed.decision.ranks_forced > 0;
  report->reason = placed.decision.reason;
  report->number = placed.number;
  last_outcome_ = std::move(placed);
  if (report->placement == Placement::kSkip) {
    Log(LogLevel::kInfo, "checkpoint '{}' version {} skipped: {}", name, version, report->reason);
    return Status::Ok();
  }
  TierKind kind = TierFor(report->placement);
  if (kind == TierKind::kMemory) {
    // A full memory tier sends the version straight to the next tier,
    // instead of failing there and waiting for every drain first.
    Status room = comm_->Agree(MakeRoomOnTier(kind, name, last_outcome_.node_bytes));
    std::optional<TierKind> next = NextTierBelow(kind);
    if (room.code() == Code::kNoSpace && next) {
      report->reason += fmt::format("; {}: placed on {}", room.message(), TierKindName(*next));
      Log(LogLevel::kInfo, "checkpoint '{}' version {}: {}", name, version, report->reason);
      kind = *next;
    } else if (room.code() != Code::kNoSpace) {
      CAIRN_RETURN_IF_ERROR(room);
    }
  }
  CAIRN_RETURN_IF_ERROR(PlanDedup(name, version, kind));
  bool waited = false;
  uint64_t written = 0;
  for (;;) {
    Tier* t = tier(kind);
    double write_start = clock_->MonotonicSeconds();
    Status local = InWaves(IoParallelismFor(kind).write, [&]() -> Status {
      CAIRN_ASSIGN_OR_RETURN(written, WriteVersion(*t, name, version));
      return Status::Ok();
    });
    double write_seconds = clock_->MonotonicSeconds() - write_start;
    Comm::AgreeDetail detail;
    Status agreed = comm_->Agree(local, &detail);
    if (agreed.ok()) {
      RecordWriteTime(kind, write_seconds);
      break;
    }
    {
      MutexLock lock(&mu_);
      // Every rank has given up on this version here, so none is writing
      // into its directory any more.
      (void)RemoveCopy(*t, name, version);
    }
    if (!detail.any_no_space) return agreed.Annotate(fmt::format("checkpoint '{}' version {}", name, version));
    if (!waited) {
      // The tier may be full of versions still draining: let the drains
      // finish and retention free them before giving up on this tier.
      Status drained = flusher_->Wait();
      if (!drained.ok()) Log(LogLevel::kWarn, "{}", drained.ToString());
      CAIRN_RETURN_IF_ERROR(ApplyRetention(name, kNone).status());
      waited = true;
      continue;
    }
    std::optional<TierKind> next = NextTierBelow(kind);
    if (!next) return agreed.Annotate(fmt::format("checkpoint '{}' version {}", name, version));
    Log(LogLevel::kWarn, "tier '{}' is full; version {} of '{}' goes to '{}'", TierKindName(kind),
        version, name, TierKindName(*next));
    report->reason += fmt::format("; tier {} was full: placed on {}", TierKindName(kind),
                                  TierKindName(*next));
    kind = *next;
    waited = false;
  }
  if (kind == TierKind::kSsd) controller_->RecordSsdWrite(written);
  report->tier = kind;
  report->bytes = written;
  if (dedup_) {
    dedup_->Committed(comm_->rank());
    report->pages = dedup_->plan().counts;
    report->hash_seconds = dedup_->plan().hash_seconds;
    report->reduce_seconds = dedup_->plan().reduce_seconds;
    report->dedup_whole = dedup_->plan().whole;
  }
  ++checkpoints_;
  names_written_.insert(name);
  {
    MutexLock lock(&mu_);
    last_committed_[name] = version;
  }
  // The routed files are in the committed version now. Clearing them is
  // housekeeping, not part of the commit: a failure only costs a copy of
  // them in the next checkpoint.
  if (auto routed = PendingRoutedFiles(); routed.ok()) {
    for (const auto& [logical, path] : *routed) (void)env_->DeleteFile(path);
  } else {
    Log(LogLevel::kWarn, "routed files stay for the next checkpoint: {}",
        routed.status().ToString());
  }
  CAIRN_RETURN_IF_ERROR(ApplyRetention(name, version).status());
  std::vector<Status> sync_errors;
  // Protection first: drains then carry the parity to other node-local
  // tiers. The ECC and redundancy encodes each rewrite the manifest, so
  // they must not overlap: on the flusher thread they run in turn (the
  // ECC encode first: it is the shorter, and guards against the likelier
  // fault); a redundancy encode inside this call is done before the ECC
  // encode is queued.
  const bool protect_now = redundancy_ && !redundancy_->background();
  if (protect_now) ScheduleProtection(kind, name, version, &sync_errors);
  if (WantsEccSidecar(kind) && !tier(kind)->config().ecc_sync) {
    ScheduleEccEncode(name, version, report->number);
  }
  if (!protect_now) ScheduleProtection(kind, name, version, &sync_errors);
  ScheduleDrains(kind, name, version, &sync_errors);
  // A synchronous drain or encode is part of the call: its failure anywhere
  // is the call's failure everywhere.
  CAIRN_RETURN_IF_ERROR(comm_->Agree(sync_errors.empty() ? Status::Ok() : sync_errors.front())
                            .Annotate(fmt::format("checkpoint '{}' version {} committed on {}, "
                                                  "but its synchronous drain or redundancy "
                                                  "encode failed",
                                                  name, version, TierKindName(kind))));
  Log(LogLevel::kInfo, "checkpoint '{}' version {} committed on {} ({})", name, version,
      TierKindName(kind), report->reason);
  return Status::Ok();
}

const IoParallelism& Engine::IoParallelismFor(TierKind kind) {
  auto& slot = io_parallelism_[static_cast<int>(kind)];
  double node_bytes = static_cast<double>(last_outcome_.node_bytes);
  // A restart before any checkpoint knows no checkpoint size, which the
  // energy optimum needs: its choice is made again once one is known.
  if (!slot || (!slot->sized && !slot->tuner && node_bytes > 0)) {
    slot = SizedIoParallelism{ResolveIoParallelism(config_, env_, kind, node_bytes),
                              node_bytes > 0, std::nullopt};
    // Every rank must measure, or none: the measurement is collective.
    auto all_default = comm_->AllTrue(slot->chosen.no_optimum);
    if (all_default.ok() && *all_default) {
      slot->tuner.emplace(comm_->ranks_on_node());
      slot->chosen.source = "measuring";
    }
    Log(LogLevel::kInfo, "tier {}: {} rank(s) per node write at once, {} read ({})",
        TierKindName(kind), slot->chosen.write, slot->chosen.read, slot->chosen.source);
  }
  if (slot->tuner && !slot->tuner->done()) slot->chosen.write = slot->tuner->current();
  return slot->chosen;
}

void Engine::RecordWriteTime(TierKind kind, double seconds) {
  auto& slot = io_parallelism_[static_cast<int>(kind)];
  if (!slot || !slot->tuner || slot->tuner->done()) return;
  auto slowest = comm_->Max(static_cast<int64_t>(seconds * 1e9));
  if (!slowest.ok()) return;
  ParallelismTuner& tuner = *slot->tuner;
  tuner.Record(static_cast<double>(*slowest) / 1e9);
  if (!tuner.done()) return;
  slot->chosen = IoParallelism{tuner.best(), tuner.best(), "measured"};
  std::string trials;
  for (size_t i = 0; i < tuner.seconds().size(); ++i) {
    trials += fmt::format("{}{}: {:.3f} s", i ? ", " : "", tuner.candidates()[i],
                          tuner.seconds()[i]);
  }
  Log(LogLevel::kInfo, "tier {}: measured write parallelism {} (0 = all ranks) from {}",
      TierKindName(kind), tuner.best(), trials);
}

Status Engine::InWaves(int parallelism, const std::function<Status()>& io) {
  int ranks = comm_->ranks_on_node();
  if (parallelism <= 0 || parallelism >= ranks) return io();
  int mine = controller_->local_rank() / parallelism;
  Status result = Status::Ok();
  for (int wave = 0; wave < (ranks + parallelism - 1) / parallelism; ++wave) {
    if (wave == mine) result = io();
    Status barrier = comm_->NodeBarrier();
    if (result.ok()) result = barrier;
  }
  return result;
}

TierKind Engine::TierFor(Placement placement) const {
  int k = placement == Placement::kMemory ? static_cast<int>(TierKind::kMemory)
                                          : static_cast<int>(TierKind::kSsd);
  while (k < kTierKinds && !tiers_[k]) ++k;
  if (k == kTierKinds) {  // only faster tiers are enabled: the durable level is the slowest
    k = kTierKinds - 1;
    while (!tiers_[k]) --k;
  }
  return static_cast<TierKind>(k);
}

Status Engine::Wait() {
  // A drain that failed was reported as a warning: the version it carried
  // is committed on a faster tier. What the drains did is in last_wait().
  (void)flusher_->Wait();
  // The slot reservation and the deletion of surplus slots are background
  // work too: after a wait, the next checkpoint copies into faulted-in
  // memory. They go second: the jobs above add to their work (an ECC
  // encode takes a parked sidecar slot, a drain's retention retires one).
  for (auto& t : tiers_) {
    if (t) t->WaitForSlots();
  }
  MutexLock lock(&mu_);
  last_wait_ = background_;
  background_ = WaitCounts{};
  return Status::Ok();
}

Result<bool> Engine::ShouldCheckpoint() {
  Result<bool> due = interval_.Due();
  CAIRN_RETURN_IF_ERROR(comm_->Agree(due.status()));
  CAIRN_ASSIGN_OR_RETURN(int64_t any, comm_->Max(*due ? 1 : 0));
  if (any) {
    auto interval = interval_.Interval();
    Log(LogLevel::kDebug, "checkpoint due: interval {:.1f} s (T_C {:.3f} s, T_R {:.3f} s)",
        interval.ok() ? *interval : 0.0, interval_.checkpoint_seconds(),
        interval_.restart_seconds());
  }
  return any != 0;
}

Status Engine::DrainRepairedPart(const Tier& from, Tier& to, const std::string& name,
                                 int64_t version, const FileEntry& part, const FileEntry& parity,
                                 const Status& cause) {
  CAIRN_ASSIGN_OR_RETURN(RepairedPart repaired,
                         RepairAndCount(from, name, version, part, parity, cause, "drain"));
  return WriteVerifiedBuffer(to, name, version, part, repaired.bytes);
}

void Engine::AppendHistory(const std::string& name, const CheckpointReport& report) {
  Tier* ssd = tier(TierKind::kSsd);
  if (ssd == nullptr || controller_->local_rank() != 0) return;
  const PlacementOutcome& o = last_outcome_;
  PlacementRecord r;
  r.run_start = controller_->run_start();
  r.time = clock_->WallSeconds();
  r.name = name;
  r.version = report.version;
  r.number = report.number;
  r.placement = PlacementName(report.placement);
  r.rule = ClcRuleName(report.rule);
  r.forced = report.forced;
  r.node_bytes = o.node_bytes;
  r.ssd_bytes_used = o.ssd_wear.used_bytes;
  r.ssd_rating_bytes = o.ssd_wear.rating_bytes;
  r.warranty_seconds = o.ssd_wear.warranty_seconds;
  r.bandwidth = o.local.bandwidth;
  r.wear_source = o.wear_known ? WearSourceName(o.wear.bandwidth_source) : "none";
  r.expected_lifetime_seconds = o.local.expected_lifetime_seconds;
  r.estimated_lifetime_seconds = o.local.estimated_lifetime_seconds;
  r.slowdown = o.decision.max_slowdown;
  r.slowdown_bound = config_.placement.slowdown_bound;
  r.checkpoint_seconds = report.seconds;
  r.policy = PlacementPolicyName(config_.placement.policy);
  r.lifetime_checked = o.local.lifetime_checked;
  r.slowdown_checked = o.local.slowdown_checked;
  Status s = AppendPlacementRecord(env_, ssd->root(), r);
  if (!s.ok()) Log(LogLevel::kWarn, "placement history: {}", s.ToString());
}

}  // namespace cairn
