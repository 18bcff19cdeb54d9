#include "runtime/engine.h"

#include <algorithm>
#include <limits>

#include "base/log.h"
#include "format/layout.h"
#include "policy/retention.h"
#include "runtime/catalog.h"
#include "runtime/ecc_sidecar.h"

namespace cairn {
namespace {

constexpr int64_t kNone = -1;

LogLevel ParseLogLevel(const std::string& name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return LogLevel::kWarn;
}

bool IsOwnFile(const std::string& file, int rank) {
  std::string prefix = RankFilePrefix(rank);
  return file.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Engine::Engine(std::unique_ptr<Comm> comm, const Config& config, Env* env, Clock* clock)
    : comm_(std::move(comm)), config_(config), env_(env), clock_(clock) {}

Engine::~Engine() {
  if (flusher_) flusher_->Shutdown();
}

Result<std::unique_ptr<Engine>> Engine::Create(std::unique_ptr<Comm> comm, const Config& config,
                                               Env* env, Clock* clock) {
  std::unique_ptr<Engine> engine(new Engine(std::move(comm), config, env, clock));
  Status local = engine->Open();
  bool unused = false;
  CAIRN_RETURN_IF_ERROR(engine->Agree(local, &unused));
  return engine;
}

Status Engine::Open() {
  SetLogLevel(ParseLogLevel(config_.log_level));
  SetLogRank(comm_->rank());
  for (int k = 0; k < kTierKinds; ++k) {
    tiers_[k] = OpenNodeTier(env_, config_, static_cast<TierKind>(k), comm_->node());
    if (!tiers_[k]) continue;
    CAIRN_RETURN_IF_ERROR(env_->CreateDirs(tiers_[k]->root())
                              .Annotate(fmt::format("opening tier '{}'", tiers_[k]->name())));
    // Leftovers of this rank from a run that died mid-write: temporary files
    // and copies whose manifest was never written.
    CAIRN_ASSIGN_OR_RETURN(auto names, tiers_[k]->Names());
    for (const auto& name : names) {
      CAIRN_ASSIGN_OR_RETURN(auto versions, tiers_[k]->Versions(name));
      for (int64_t v : versions) {
        CAIRN_ASSIGN_OR_RETURN(auto files, tiers_[k]->Files(name, v));
        bool has_manifest = std::count(files.begin(), files.end(), ManifestFileName(comm_->rank()));
        for (const auto& f : files) {
          if (IsOwnFile(f, comm_->rank()) &&
              (!has_manifest || f.find(".tmp.") != std::string::npos)) {
            CAIRN_RETURN_IF_ERROR(tiers_[k]->Remove(name, v, f));
          }
        }
        CAIRN_RETURN_IF_ERROR(tiers_[k]->RemoveVersionDirIfEmpty(name, v));
      }
    }
  }
  for (auto& t : tiers_) {
    // One parked part file per rank and tier is what steady state needs:
    // the next checkpoint takes it as the oldest kept version is retired.
    if (t) t->EnableSlots(RankFilePrefix(comm_->rank()), /*max_free=*/1);
  }
  route_dir_ = JoinPath(JoinPath(tier(config_.placement)->root(), ".route"),
                        fmt::format("r{:06}", comm_->rank()));
  flusher_ = std::make_unique<Flusher>();
  Log(LogLevel::kInfo, "rank {} of {} on node {} of {}; checkpoints go to '{}'", comm_->rank(),
      comm_->size(), comm_->node(), comm_->nodes(), TierKindName(config_.placement));
  return Status::Ok();
}

Status Engine::Protect(int id, void* ptr, uint64_t count, uint64_t elem_size) {
  if (id < 0) return Error(Code::kInvalidArgument, "region id {} is negative", id);
  if (ptr == nullptr) return Error(Code::kInvalidArgument, "region {}: pointer is NULL", id);
  if (count == 0 || elem_size == 0) {
    return Error(Code::kInvalidArgument, "region {}: size is zero ({} x {} bytes)", id, count,
                 elem_size);
  }
  if (count > std::numeric_limits<uint64_t>::max() / elem_size) {
    return Error(Code::kInvalidArgument, "region {}: {} x {} bytes overflows", id, count,
                 elem_size);
  }
  regions_[id] = Region{id, ptr, count, elem_size};
  return Status::Ok();
}

Status Engine::Unprotect(int id) {
  if (regions_.erase(id) == 0) return Error(Code::kNotFound, "region {} is not protected", id);
  return Status::Ok();
}

std::vector<Region> Engine::SortedRegions() const {
  std::vector<Region> out;
  for (const auto& [id, r] : regions_) out.push_back(r);  // std::map: sorted by id
  return out;
}

Result<std::map<std::string, std::string>> Engine::PendingRoutedFiles() const {
  std::map<std::string, std::string> out;
  auto entries = env_->ListDir(route_dir_);
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return out;
    return entries.status();
  }
  for (const auto& e : *entries) {
    if (!e.is_dir && ValidateName("file", e.name).ok()) out[e.name] = JoinPath(route_dir_, e.name);
  }
  return out;
}

Status Engine::RemoveCopy(Tier& t, const std::string& name, int64_t version,
                          bool remove_empty_dir) {
  CAIRN_ASSIGN_OR_RETURN(auto files, t.Files(name, version));
  std::string manifest = ManifestFileName(comm_->rank());
  // The manifest goes first: from then on the copy counts as incomplete.
  if (std::count(files.begin(), files.end(), manifest)) {
    CAIRN_RETURN_IF_ERROR(t.Remove(name, version, manifest));
  }
  for (const auto& f : files) {
    if (!IsOwnFile(f, comm_->rank()) || f == manifest) continue;
    // Only part files are parked for reuse: a parked sidecar or routed file
    // would take the one slot the next part file needs.
    CAIRN_RETURN_IF_ERROR(f == PartFileName(comm_->rank()) ? t.Retire(name, version, f)
                                                           : t.Remove(name, version, f));
  }
  return remove_empty_dir ? t.RemoveVersionDirIfEmpty(name, version) : Status::Ok();
}

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

Status Engine::Agree(const Status& local, bool* any_no_space) {
  // [0]: lowest failing rank (size if none), [1]: some rank is out of space.
  std::vector<int64_t> failed{local.ok() ? comm_->size() : comm_->rank()};
  std::vector<int64_t> no_space{local.code() == Code::kNoSpace ? 1 : 0};
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMin(failed));
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMax(no_space));
  *any_no_space = no_space[0] != 0;
  if (failed[0] == comm_->size()) return Status::Ok();
  if (!local.ok()) return local;
  return Error(no_space[0] ? Code::kNoSpace : Code::kIo, "failed on rank {} (see its message)",
               failed[0]);
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

std::set<int64_t, std::greater<>> Engine::LocalRecoverable(const std::string& name,
                                                           int64_t max_version) {
  std::set<int64_t, std::greater<>> out;
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k]) continue;
    std::lock_guard<std::mutex> lock(mu_);
    auto versions = tiers_[k]->Versions(name);
    if (!versions.ok()) continue;
    for (int64_t v : *versions) {
      if (max_version >= 0 && v > max_version) continue;
      if (out.count(v)) continue;
      if (CheckCopy(*tiers_[k], name, v, comm_->rank(), comm_->size()).ok()) out.insert(v);
    }
  }
  return out;
}

Result<int64_t> Engine::AgreeOnVersion(const std::string& name, int64_t max_version) {
  auto mine = LocalRecoverable(name, max_version);
  int64_t candidate = max_version >= 0 ? max_version : std::numeric_limits<int64_t>::max();
  for (;;) {
    auto it = mine.lower_bound(candidate);  // greatest <= candidate (set is descending)
    CAIRN_ASSIGN_OR_RETURN(int64_t agreed, comm_->Min(it == mine.end() ? kNone : *it));
    if (agreed == kNone) return kNone;
    CAIRN_ASSIGN_OR_RETURN(bool everyone, comm_->AllTrue(mine.count(agreed) > 0));
    if (everyone) return agreed;
    candidate = agreed - 1;
  }
}

Result<int64_t> Engine::RestartTest(const std::string& name, int64_t max_version) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", name));
  return AgreeOnVersion(name, max_version);
}

Status Engine::CheckRestoreShape(const std::string& name, int64_t version) {
  std::vector<Region> regions = SortedRegions();
  Status last = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", name, version);
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k]) continue;
    auto m = CheckCopy(*tiers_[k], name, version, comm_->rank(), comm_->size());
    if (!m.ok()) continue;
    auto header = ReadPartHeader(*tiers_[k], name, version, m->files.front());
    if (!header.ok()) {
      last = header.status();
      continue;
    }
    return CheckRegionsMatch(*header, regions);
  }
  return last;
}

Status Engine::RestoreLocal(const std::string& name, int64_t version, std::string* source,
                            uint64_t* bytes) {
  std::vector<Region> regions = SortedRegions();
  Status last = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", name, version);
  for (int k = 0; k < kTierKinds; ++k) {
    Tier* t = tiers_[k].get();
    if (t == nullptr) continue;
    Status s = [&]() -> Status {
      bool part_size_wrong = false;
      CAIRN_ASSIGN_OR_RETURN(Manifest m, CheckCopyOrRepairable(*t, name, version, &part_size_wrong));
      if (m.files.empty() || m.files.front().kind != FileKind::kPart) {
        return Error(Code::kCorrupt, "manifest of '{}' version {} lists no part file", name, version);
      }
      const FileEntry& part = m.files.front();
      Status read = [&]() -> Status {
        if (part_size_wrong) return Error(Code::kCorrupt, "'{}' has the wrong size", part.name);
        CAIRN_ASSIGN_OR_RETURN(PartHeader header, ReadPartHeader(*t, name, version, part));
        CAIRN_RETURN_IF_ERROR(CheckRegionsMatch(header, regions));
        return ReadPartInto(*t, name, version, part, header, regions);
      }();
      const FileEntry* parity = FindParityEntry(m);
      if (!read.ok() && read.code() == Code::kCorrupt && parity != nullptr) {
        // Repair before giving up on the copy (software chipkill).
        read = RestoreRepairedPart(*t, name, version, part, *parity, regions, read);
      }
      CAIRN_RETURN_IF_ERROR(read);
      bool any_routed = false;
      for (size_t i = 1; i < m.files.size(); ++i) {
        if (m.files[i].kind != FileKind::kRouted) continue;
        if (!any_routed) CAIRN_RETURN_IF_ERROR(env_->CreateDirs(route_dir_));
        any_routed = true;
        CAIRN_RETURN_IF_ERROR(CopyOutVerified(*t, name, version, m.files[i], env_,
                                              JoinPath(route_dir_, m.files[i].logical)));
      }
      *bytes = m.DataBytes() - (parity != nullptr ? parity->size : 0);  // data, not parity
      return Status::Ok();
    }();
    if (s.ok()) {
      *source = t->name();
      return s;
    }
    if (s.code() == Code::kMismatch) return s;
    if (s.code() != Code::kNotFound) {
      Log(LogLevel::kWarn, "copy of '{}' version {} on tier '{}' is unusable: {}", name, version,
          t->name(), s.ToString());
    }
    last = s;
  }
  return last;
}

Result<RestartReport> Engine::Restart(const std::string& name, int64_t version) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", name));
  if (version < 0) return Error(Code::kInvalidArgument, "version {} is negative", version);
  double start = clock_->MonotonicSeconds();
  RestartReport report;
  report.requested = version;
  CAIRN_ASSIGN_OR_RETURN(int64_t v, AgreeOnVersion(name, version));
  Status cause = Error(Code::kNotFound,
                       "no version <= {} of checkpoint '{}' is recoverable on every rank", version,
                       name);
  while (v != kNone) {
    // Shapes first, on every rank, so that a mismatch anywhere leaves
    // every rank's memory untouched.
    Status shape = CheckRestoreShape(name, v);
    std::vector<int64_t> mismatch{shape.code() == Code::kMismatch ? 1 : 0};
    CAIRN_RETURN_IF_ERROR(comm_->AllreduceMax(mismatch));
    if (mismatch[0]) {
      if (shape.code() == Code::kMismatch) return shape;
      return Error(Code::kMismatch,
                   "checkpoint '{}' version {}: another rank's regions do not match", name, v);
    }
    std::string source;
    uint64_t bytes = 0;
    Status local = RestoreLocal(name, v, &source, &bytes);
    bool unused = false;
    Status agreed = Agree(local, &unused);
    if (agreed.ok()) {
      report.version = v;
      report.tier = source;
      report.bytes = bytes;
      report.seconds = clock_->MonotonicSeconds() - start;
      Log(LogLevel::kInfo,
          "restart: '{}' version {} from tier {} ({} bytes, {:.3f} s, {} older version(s) tried)",
          name, v, source, bytes, report.seconds, report.versions_rolled_back);
      return report;
    }
    Log(LogLevel::kWarn, "'{}' version {} could not be restored ({}); trying an older version",
        name, v, agreed.ToString());
    cause = agreed;
    ++report.versions_rolled_back;
    CAIRN_ASSIGN_OR_RETURN(v, AgreeOnVersion(name, v - 1));
  }
  return Error(cause.code() == Code::kNotFound ? Code::kNotFound : Code::kCorrupt,
               "no recoverable version <= {} of checkpoint '{}' (last cause: {})", version, name,
               cause.ToString());
}

Result<std::string> Engine::RouteFile(const std::string& logical) {
  CAIRN_RETURN_IF_ERROR(ValidateName("routed file name", logical));
  CAIRN_RETURN_IF_ERROR(env_->CreateDirs(route_dir_));
  return JoinPath(route_dir_, logical);
}

Status Engine::Finalize() {
  Status drained = flusher_->Wait();
  flusher_->Shutdown();
  // Drained tiers learn which versions every rank holds only here and at
  // checkpoints, so their retention catches up now.
  for (const auto& name : names_written_) {
    CAIRN_ASSIGN_OR_RETURN(auto global, GloballyCompleteVersions(name));
    ApplyRetention(name, global);
  }
  Status barrier = comm_->Barrier();
  return drained.ok() ? barrier : drained;
}

// ---- ECC sidecar (software chipkill for the memory tier)

uint64_t Engine::ecc_shards_corrected() {
  std::lock_guard<std::mutex> lock(mu_);
  return ecc_shards_corrected_;
}

Result<Manifest> Engine::CheckCopyOrRepairable(const Tier& t, const std::string& name,
                                               int64_t version, bool* part_size_wrong) {
  *part_size_wrong = false;
  auto checked = CheckCopy(t, name, version, comm_->rank(), comm_->size());
  if (checked.ok() || checked.status().code() != Code::kCorrupt) return checked;
  // A part of the wrong size (truncated) may still be rebuilt from its
  // sidecar: the shards it lost are erasures.
  auto repairable = CheckCopyForRepair(t, name, version, comm_->rank(), comm_->size());
  if (!repairable.ok()) return checked;
  *part_size_wrong = true;
  return repairable;
}

Result<RepairedPart> Engine::RepairAndCount(const Tier& t, const std::string& name,
                                            int64_t version, const FileEntry& part,
                                            const FileEntry& parity, const Status& cause,
                                            const char* what) {
  auto repaired = RepairPart(t, name, version, part, parity);
  if (!repaired.ok()) {
    return Error(Code::kCorrupt, "{}; not repairable from its ECC sidecar: {}", cause.ToString(),
                 repaired.status().ToString());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ecc_shards_corrected_ += repaired->shards_corrected;
  }
  Log(LogLevel::kInfo,
      "{}: '{}' version {} on tier {}: {} shard(s) in {} stripe(s) corrected from the ECC "
      "sidecar ({})",
      what, name, version, t.name(), repaired->shards_corrected, repaired->stripes_repaired,
      cause.ToString());
  return repaired;
}

Status Engine::RestoreRepairedPart(const Tier& t, const std::string& name, int64_t version,
                                   const FileEntry& part, const FileEntry& parity,
                                   const std::vector<Region>& regions, const Status& cause) {
  CAIRN_ASSIGN_OR_RETURN(RepairedPart repaired,
                         RepairAndCount(t, name, version, part, parity, cause, "restart"));
  return ReadPartFromBuffer(repaired.bytes, name, version, part, regions,
                            t.FilePath(name, version, part.name));
}

Status Engine::DrainRepairedPart(const Tier& from, Tier& to, const std::string& name,
                                 int64_t version, const FileEntry& part, const FileEntry& parity,
                                 const Status& cause) {
  CAIRN_ASSIGN_OR_RETURN(RepairedPart repaired,
                         RepairAndCount(from, name, version, part, parity, cause, "drain"));
  return WriteVerifiedBuffer(to, name, version, part, repaired.bytes);
}

}  // namespace cairn
