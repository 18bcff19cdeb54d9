// Engine, the restart pipeline: agree on the newest version every rank can
// recover, check shapes, read each part from the fastest valid copy, and
// measure how far behind the newest checkpoint that leaves the job
// (engine.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <iterator>
#include <optional>
#include <utility>

#include "base/log.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {

// This rank's copies of one checkpoint as one restart sees them. Each
// (tier, version) copy is checked at most once (manifest read and decoded,
// listed files present with their sizes), its part header read at most once
// and its repair from the ECC sidecar made at most once, however many steps
// look at it: the agreement, the shape check, the restore, and all of them
// again after falling back to an older version. A copy that changes during
// the restart (a drain or retention running) is judged as it was when first
// looked at; every byte restored is still checked against its CRC as read.
// A repaired part (a part-sized buffer, rare) is held until the restart
// returns. Used by the application thread only; tiers are read as Engine's members
// do (LocalRecoverable holds mu_ while listing and checking).
class Engine::RestartCopies {
 public:
  struct Copy {
    // CheckCopyOrRepairable's answer; when OK, files.front() is the part.
    Result<Manifest> manifest;
    bool part_size_wrong = false;  // usable only through a repair
    std::optional<Result<PartHeader>> header;        // from the part file
    std::optional<Result<RepairedPart>> repaired;  // from the sidecar
  };

  RestartCopies(Engine& engine, std::string name) : engine_(engine), name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  Copy& Get(int k, int64_t version) {
    auto key = std::make_pair(k, version);
    auto it = copies_.find(key);
    if (it != copies_.end()) return it->second;
    bool wrong = false;
    auto m = engine_.CheckCopyOrRepairable(*engine_.tiers_[k], name_, version, &wrong);
    if (m.ok() && (m->files.empty() || m->files.front().kind != FileKind::kPart)) {
      m = Error(Code::kCorrupt, "manifest of '{}' version {} on tier '{}' lists no part file",
                name_, version, engine_.tiers_[k]->name());
    }
    if (m.status().code() == Code::kMismatch && other_job_size_.ok()) {
      other_job_size_ = m.status();
    }
    return copies_.emplace(key, Copy{std::move(m), wrong, std::nullopt, std::nullopt})
        .first->second;
  }

  // REQUIRES: Get(k, version).manifest.ok() and its part size is right.
  const Result<PartHeader>& Header(int k, int64_t version) {
    Copy& c = Get(k, version);
    if (!c.header) c.header = ReadPartHeader(*engine_.tiers_[k], name_, version, Part(c));
    return *c.header;
  }

  // The part rebuilt from its sidecar; `cause` is why the copy needs it.
  // REQUIRES: Get(k, version).manifest.ok() and it lists a sidecar.
  const Result<RepairedPart>& Repaired(int k, int64_t version, const Status& cause) {
    Copy& c = Get(k, version);
    if (!c.repaired) {
      c.repaired = engine_.RepairAndCount(*engine_.tiers_[k], name_, version, Part(c),
                                          *FindParityEntry(*c.manifest), cause, "restart");
    }
    return *c.repaired;
  }

  static const FileEntry& Part(const Copy& c) { return c.manifest->files.front(); }

  // Whether copy (k, version) is one of `agreed`'s: usable and of its run.
  bool OfAgreed(int k, const AgreedVersion& agreed) {
    const Copy& c = Get(k, agreed.version);
    return c.manifest.ok() && c.manifest->run_id == agreed.run_id;
  }

  // The first copy passed over because a job of another size wrote it.
  const Status& other_job_size() const { return other_job_size_; }

 private:
  Engine& engine_;
  std::string name_;
  Status other_job_size_;
  std::map<std::pair<int, int64_t>, Copy> copies_;
};

namespace {

constexpr int64_t kUnknownTime = -1;

// Wall-clock seconds as whole microseconds, for an integer max-reduce.
int64_t Micros(double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return kUnknownTime;
  return std::llround(seconds * 1e6);
}

}  // namespace

namespace {

// [dedup]: a version whose pages refer to an older version that this rank
// holds no copy of (or only one that is itself unresolvable) cannot be
// restored bit-exactly, so it is not recoverable: the agreement passes
// over it to an older one. Every rank holds a copy of each version a kept
// version refers to (retention keeps them: the manifests list the union
// of all ranks' references), so each rank checks its own.
void DropUnresolvable(const std::string& name,
                      const std::map<int64_t, std::set<int64_t>>& references,
                      std::map<int64_t, std::set<uint64_t>, std::greater<>>* recoverable) {
  // Oldest first: a reference is always to an older version, whose own
  // references are then settled.
  for (const auto& [version, targets] : references) {
    for (int64_t target : targets) {
      if (recoverable->count(target)) continue;
      Log(LogLevel::kInfo, "'{}' version {} is not recoverable: its pages refer to version {}, "
          "of which this rank has no usable copy", name, version, target);
      recoverable->erase(version);
      break;
    }
  }
}

}  // namespace

std::map<int64_t, std::set<uint64_t>, std::greater<>> Engine::LocalRecoverable(
    RestartCopies& copies, int64_t max_version) {
  std::map<int64_t, std::set<uint64_t>, std::greater<>> out;
  std::map<int64_t, std::set<int64_t>> references;  // of each version's copies
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k]) continue;
    MutexLock lock(&mu_);
    auto versions = tiers_[k]->Versions(copies.name());
    if (!versions.ok()) continue;
    for (int64_t v : *versions) {
      if (max_version >= 0 && v > max_version) continue;
      // A copy whose part only its sidecar can rebuild (truncated) counts:
      // StageLocal repairs it, and falls back if that fails.
      const RestartCopies::Copy& c = copies.Get(k, v);
      if (!c.manifest.ok()) continue;
      out[v].insert(c.manifest->run_id);
      references[v].insert(c.manifest->references.begin(), c.manifest->references.end());
    }
  }
  DropUnresolvable(copies.name(), references, &out);
  return out;
}

namespace {

// Padding of a rank's list of runs in the agreement (no run has this id).
constexpr int64_t kNoRun = -1;

// The runs that every rank has a copy from, given every rank's list of
// kTierKinds words (rank-major, padded with kNoRun).
std::set<uint64_t> RunsOnEveryRank(const std::vector<int64_t>& words, int ranks) {
  std::set<uint64_t> common;
  for (int r = 0; r < ranks; ++r) {
    std::set<uint64_t> runs;
    for (int i = 0; i < kTierKinds; ++i) {
      int64_t w = words[static_cast<size_t>(r * kTierKinds + i)];
      if (w != kNoRun) runs.insert(static_cast<uint64_t>(w));
    }
    if (r == 0) {
      common = std::move(runs);
      continue;
    }
    std::set<uint64_t> both;
    std::set_intersection(common.begin(), common.end(), runs.begin(), runs.end(),
                          std::inserter(both, both.end()));
    common = std::move(both);
  }
  return common;
}

}  // namespace

Result<Engine::AgreedVersion> Engine::AgreeOnVersion(RestartCopies& copies,
                                                     int64_t max_version) {
  auto mine = LocalRecoverable(copies, max_version);
  int64_t candidate = max_version >= 0 ? max_version : std::numeric_limits<int64_t>::max();
  for (;;) {
    auto it = mine.lower_bound(candidate);  // greatest <= candidate (map is descending)
    CAIRN_ASSIGN_OR_RETURN(int64_t agreed, comm_->Min(it == mine.end() ? kNone : it->first));
    if (agreed == kNone) return AgreedVersion{};
    std::vector<int64_t> runs(kTierKinds, kNoRun);
    if (auto found = mine.find(agreed); found != mine.end()) {
      size_t i = 0;
      for (uint64_t run : found->second) runs[i++] = static_cast<int64_t>(run);
    }
    CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> all, comm_->AllgatherWords(runs));
    std::set<uint64_t> common = RunsOnEveryRank(all, comm_->size());
    // The newest run wins: a version number reused by a later run (after a
    // rollback) is that run's, never a mix of both runs' copies.
    if (!common.empty()) return AgreedVersion{agreed, *common.rbegin()};
    if (mine.count(agreed)) {
      Log(LogLevel::kInfo, "'{}' version {}: the ranks' copies come from different runs",
          copies.name(), agreed);
    }
    candidate = agreed - 1;
  }
}

Result<Engine::AgreedVersion> Engine::AgreeOnOlderVersion(RestartCopies& copies,
                                                          int64_t version) {
  // Below version 0 there is none (a negative bound means the newest).
  if (version <= 0) return AgreedVersion{};
  return AgreeOnVersion(copies, version - 1);
}

Status Engine::OtherJobSizeError(RestartCopies& copies) {
  return comm_->Agree(copies.other_job_size())
      .Annotate(fmt::format("checkpoint '{}': no version this job of {} ranks can restart from "
                            "(restarting on another number of ranks is not supported)",
                            copies.name(), comm_->size()));
}

Result<int64_t> Engine::RestartTest(const std::string& name, int64_t max_version) {
  CAIRN_RETURN_IF_ERROR(comm_->Agree(ValidateName("checkpoint name", name)));
  CAIRN_RETURN_IF_ERROR(AgreeOnTarget(name, max_version));
  // A version whose lost copies its groups can rebuild is recoverable:
  // rebuilt now, so that the agreement finds it.
  CAIRN_RETURN_IF_ERROR(RebuildLostCopies(name, max_version));
  RestartCopies copies(*this, name);
  CAIRN_ASSIGN_OR_RETURN(AgreedVersion agreed, AgreeOnVersion(copies, max_version));
  if (agreed.version == kNone) CAIRN_RETURN_IF_ERROR(OtherJobSizeError(copies));
  // Copies were lost and their groups could not rebuild them: not the
  // plain "none" of a job that never checkpointed (docs/redundancy.md).
  if (agreed.version == kNone && !last_rebuild_error_.ok()) {
    return Error(last_rebuild_error_.code(), "no recoverable version of checkpoint '{}': {}", name,
                 last_rebuild_error_.message());
  }
  if (agreed.version == kNone) {
    CAIRN_RETURN_IF_ERROR(WarnOfVersionsNotOnEveryRank(copies, max_version));
  }
  return agreed.version;
}

Status Engine::WarnOfVersionsNotOnEveryRank(RestartCopies& copies, int64_t max_version) {
  const bool holds = !LocalRecoverable(copies, max_version).empty();
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> all, comm_->Allgather(holds ? 1 : 0));
  const auto holding = std::count(all.begin(), all.end(), 1);
  // A job that never checkpointed this name starts over without a word; one
  // whose versions some ranks lost (a node gone with its tiers, and no
  // redundancy or lower-tier copy) should be told why it does.
  if (holding > 0 && comm_->rank() == 0) {
    Log(LogLevel::kWarn,
        "checkpoint '{}': {} of {} ranks hold versions of it, but no version has a copy on every "
        "rank (a node lost without redundancy or a copy on a shared tier?); none can be restored, "
        "and the job starts over",
        copies.name(), holding, comm_->size());
  }
  return Status::Ok();
}

Status Engine::CheckRestoreShape(RestartCopies& copies, const AgreedVersion& agreed) {
  const int64_t version = agreed.version;
  std::vector<Region> regions = SortedRegions();
  Status last = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", copies.name(),
                      version);
  Status mismatch;  // a copy that holds other regions: passed over
  // A part file's own header first (a small read); only if no copy has a
  // readable one, the header of a copy rebuilt from its sidecar, which
  // StageLocal then uses without repairing it again.
  std::vector<int> repairable;
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k] || !copies.OfAgreed(k, agreed)) continue;
    RestartCopies::Copy& c = copies.Get(k, version);
    bool has_sidecar = FindParityEntry(*c.manifest) != nullptr;
    if (c.part_size_wrong) {
      if (has_sidecar) repairable.push_back(k);
      continue;
    }
    const Result<PartHeader>& header = copies.Header(k, version);
    if (header.ok()) {
      Status fits = CheckRegionsMatch(*header, regions);
      if (fits.ok()) return fits;
      mismatch = fits;
      continue;
    }
    last = header.status();
    if (has_sidecar && last.code() == Code::kCorrupt) repairable.push_back(k);
  }
  for (int k : repairable) {
    RestartCopies::Copy& c = copies.Get(k, version);
    const FileEntry& part = RestartCopies::Part(c);
    std::string path = tiers_[k]->FilePath(copies.name(), version, part.name);
    Status cause = c.part_size_wrong ? Error(Code::kCorrupt, "'{}' has the wrong size", path)
                                     : c.header->status();
    const Result<RepairedPart>& repaired = copies.Repaired(k, version, cause);
    if (!repaired.ok()) {
      last = repaired.status();
      continue;
    }
    auto header = PartHeaderFromBuffer(repaired->bytes, copies.name(), version, part, path);
    if (!header.ok()) {
      last = header.status();
      continue;
    }
    Status fits = CheckRegionsMatch(*header, regions);
    if (fits.ok()) return fits;
    mismatch = fits;
  }
  return mismatch.ok() ? last : mismatch;
}

Status Engine::StageLocal(RestartCopies& copies, const AgreedVersion& agreed,
                          StagedCopy* staged) {
  const std::string& name = copies.name();
  const int64_t version = agreed.version;
  std::vector<Region> regions = SortedRegions();
  Status last = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", name, version);
  for (int k = 0; k < kTierKinds; ++k) {
    Tier* t = tiers_[k].get();
    if (t == nullptr || !copies.OfAgreed(k, agreed)) continue;
    StagedCopy candidate;
    candidate.tier = k;
    Status s = VerifyCopy(copies, k, version, regions, &candidate);
    if (s.ok()) {
      *staged = candidate;
      return s;
    }
    if (s.code() != Code::kNotFound) {
      Log(LogLevel::kWarn, "copy of '{}' version {} on tier '{}' is unusable: {}", name, version,
          t->name(), s.ToString());
    }
    last = s;
  }
  return last;
}

Status Engine::VerifyCopy(RestartCopies& copies, int k, int64_t version,
                          const std::vector<Region>& regions, StagedCopy* staged) {
  const std::string& name = copies.name();
  const Tier& t = *tiers_[k];
  RestartCopies::Copy& c = copies.Get(k, version);
  const Manifest& m = *c.manifest;
  const FileEntry& part = RestartCopies::Part(c);
  std::string path = t.FilePath(name, version, part.name);
  Status read = [&]() -> Status {
    if (c.part_size_wrong) return Error(Code::kCorrupt, "'{}' has the wrong size", path);
    const Result<PartHeader>& header = copies.Header(k, version);
    CAIRN_RETURN_IF_ERROR(header.status());
    CAIRN_RETURN_IF_ERROR(CheckRegionsMatch(*header, regions));
    CAIRN_ASSIGN_OR_RETURN(staged->part, StagePart(t, name, version, part));
    return Status::Ok();
  }();
  const FileEntry* parity = FindParityEntry(m);
  if (!read.ok() && read.code() == Code::kCorrupt && parity != nullptr) {
    // Repair before giving up on the copy (software chipkill); the repaired
    // part lives in `copies` until the restart returns.
    const Result<RepairedPart>& repaired = copies.Repaired(k, version, read);
    auto from_buffer =
        repaired.ok() ? StagePartBuffer(repaired->bytes, name, version, part, regions, path)
                      : Result<std::unique_ptr<StagedPart>>(repaired.status());
    read = from_buffer.status();
    if (read.ok()) staged->part = std::move(from_buffer).value();
  }
  CAIRN_RETURN_IF_ERROR(read);
  for (size_t i = 1; i < m.files.size(); ++i) {
    if (m.files[i].kind == FileKind::kRouted) {
      CAIRN_RETURN_IF_ERROR(VerifyFile(t, name, version, m.files[i]));
    }
  }
  staged->bytes = m.DataBytes() - (parity != nullptr ? parity->size : 0);  // data, not parity
  for (const FileEntry& f : m.files) {
    if (f.kind == FileKind::kRedundancy) staged->bytes -= f.size;  // nor redundancy parity
  }
  staged->created = m.created;
  return Status::Ok();
}

Status Engine::CopyStaged(RestartCopies& copies, int64_t version, const StagedCopy& staged) {
  const std::string& name = copies.name();
  const Tier& t = *tiers_[staged.tier];
  RestartCopies::Copy& c = copies.Get(staged.tier, version);
  const Manifest& m = *c.manifest;
  // Routed files first: writing them can fail (the file system), a copy
  // into the regions from the memory tier or a repaired buffer cannot.
  bool any_routed = false;
  for (size_t i = 1; i < m.files.size(); ++i) {
    if (m.files[i].kind != FileKind::kRouted) continue;
    if (!any_routed) CAIRN_RETURN_IF_ERROR(env_->CreateDirs(route_dir_));
    any_routed = true;
    CAIRN_RETURN_IF_ERROR(CopyOutVerified(t, name, version, m.files[i], env_,
                                          JoinPath(route_dir_, m.files[i].logical)));
  }
  return staged.part->CopyInto(SortedRegions());
}

Status Engine::MeasureRollback(RestartCopies& copies, double restored_created,
                               RestartReport* report) {
  const std::string& name = copies.name();
  // The newest version with a manifest of this rank: on each tier, the
  // first from the top of its listing.
  int64_t newest = report->version;
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers_[k]) continue;
    MutexLock lock(&mu_);
    auto versions = tiers_[k]->Versions(name);
    if (!versions.ok()) continue;
    std::sort(versions->begin(), versions->end(), std::greater<>());
    for (int64_t v : *versions) {
      if (v <= newest) break;
      if (HasManifest(*tiers_[k], name, v, comm_->rank())) {
        newest = v;
        break;
      }
    }
  }
  // [0]: newest version, [1]: latest creation time of the restored one.
  std::vector<int64_t> agreed{newest, Micros(restored_created)};
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMax(agreed));
  report->newest = agreed[0];
  report->rollback_versions = report->newest - report->version;
  report->rollback_seconds = 0;
  if (report->rollback_versions == 0) return Status::Ok();
  // Only ranks holding a manifest of the newest version know when it was
  // made; its files may be damaged (that may be why it was not restored),
  // so the manifest is read on its own when the copy did not check.
  int64_t newest_created = kUnknownTime;
  for (int k = 0; k < kTierKinds && newest_created == kUnknownTime; ++k) {
    if (!tiers_[k] || !HasManifest(*tiers_[k], name, report->newest, comm_->rank())) continue;
    RestartCopies::Copy& c = copies.Get(k, report->newest);
    if (c.manifest.ok()) {
      newest_created = Micros(c.manifest->created);
    } else if (auto m = ReadManifest(*tiers_[k], name, report->newest, comm_->rank()); m.ok()) {
      newest_created = Micros(m->created);
    }
  }
  std::vector<int64_t> latest{newest_created};
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMax(latest));
  if (latest[0] != kUnknownTime && agreed[1] != kUnknownTime && latest[0] > agreed[1]) {
    report->rollback_seconds = static_cast<double>(latest[0] - agreed[1]) * 1e-6;
  }
  return Status::Ok();
}

Result<RestartReport> Engine::Restart(const std::string& name, int64_t version) {
  CAIRN_RETURN_IF_ERROR(comm_->Agree(ValidateRequest(name, version)));
  CAIRN_RETURN_IF_ERROR(AgreeOnTarget(name, version));
  // The job waits for its restart: the slots reserved for its next
  // checkpoints are made after it, not beside it.
  Tier::SlotHold hold_reservation(FastLevelTier(), Tier::SlotWork::kAll);
  double start = clock_->MonotonicSeconds();
  RestartReport report;
  report.requested = version;
  uint64_t corrected_before = ecc_shards_corrected();
  // Lost node-local copies come back from the redundancy groups first, then
  // the fastest valid copy of each rank is restored as usual.
  CAIRN_RETURN_IF_ERROR(RebuildLostCopies(name, version));
  RestartCopies copies(*this, name);
  CAIRN_ASSIGN_OR_RETURN(AgreedVersion agreed, AgreeOnVersion(copies, version));
  if (agreed.version == kNone) CAIRN_RETURN_IF_ERROR(OtherJobSizeError(copies));
  Status cause = Error(Code::kNotFound,
                       "no version <= {} of checkpoint '{}' is recoverable on every rank", version,
                       name);
  Status mismatch;  // the last version whose copies hold other regions on some rank
  while (agreed.version != kNone) {
    const int64_t v = agreed.version;
    // Shapes first, on every rank, so that a version whose copies hold
    // other regions somewhere leaves every rank's memory untouched; an
    // older version may still fit.
    Status shape = CheckRestoreShape(copies, agreed);
    Status shapes = comm_->Agree(shape.code() == Code::kMismatch ? shape : Status::Ok());
    if (!shapes.ok()) {
      Log(LogLevel::kWarn, "'{}' version {} does not fit the protected regions ({}); trying an "
          "older version", name, v, shapes.ToString());
      mismatch = shapes;
      CAIRN_ASSIGN_OR_RETURN(agreed, AgreeOnOlderVersion(copies, v));
      continue;
    }
    // Two phases, so that damage found anywhere leaves every rank's
    // protected memory untouched (cairn.h): every rank checks a whole copy
    // first, and only when all have one do they copy it in. The node's
    // ranks take turns as [io] parallelism says for the durable level,
    // which a restart after a failure mostly reads.
    const int wave = IoParallelismFor(TierFor(Placement::kSsd)).read;
    StagedCopy staged;
    // The next checkpoint is planned afresh: the planner's previous
    // version may be newer than this one, or this one written whole.
    if (dedup_) dedup_->Forget();
    // A paged ([dedup]) version resolves its references collectively, so
    // its ranks stage at once (engine_dedup_steps.cc).
    CAIRN_ASSIGN_OR_RETURN(bool paged, IsDeduplicated(name, agreed));
    Status restored =
        paged ? comm_->Agree(StageDeduplicated(name, agreed, &staged))
              : comm_->Agree(InWaves(wave, [&] { return StageLocal(copies, agreed, &staged); }));
    if (restored.ok()) {
      // All at once, not in waves: phase one left the bytes in memory (the
      // memory tier, a repaired buffer, or the page cache of a device).
      // Fails only if a checked copy changed or its device failed since;
      // the regions may then hold part of it, and an older version is
      // restored over them.
      restored = comm_->Agree(CopyStaged(copies, v, staged));
    }
    if (restored.ok()) {
      report.version = v;
      report.tier = tiers_[staged.tier]->name();
      report.bytes = staged.bytes;
      CAIRN_RETURN_IF_ERROR(MeasureRollback(copies, staged.created, &report));
      report.seconds = clock_->MonotonicSeconds() - start;
      report.ecc_shards_corrected = ecc_shards_corrected() - corrected_before;
      // The scheme only when it rebuilt something (cairn.h: "" otherwise).
      if (last_rebuild_.name == name && last_rebuild_.summary.version == v &&
          last_rebuild_.summary.parts_rebuilt > 0) {
        report.parts_rebuilt = last_rebuild_.summary.parts_rebuilt;
        report.redundancy = last_rebuild_.summary.scheme;
      }
      interval_.OnRestart(report.seconds);
      Log(LogLevel::kInfo,
          "restart: '{}' version {} from tier {} ({} bytes, {:.3f} s); newest version {}, "
          "rolled back {} version(s), {:.6g} s ({} failed to restore)",
          name, v, report.tier, report.bytes, report.seconds, report.newest, report.rollback_versions,
          report.rollback_seconds, report.versions_failed);
      return report;
    }
    Log(LogLevel::kWarn, "'{}' version {} could not be restored ({}); trying an older version",
        name, v, restored.ToString());
    cause = restored;
    ++report.versions_failed;
    CAIRN_ASSIGN_OR_RETURN(agreed, AgreeOnOlderVersion(copies, v));
  }
  // MISMATCH only when no copy of any version fits the protected regions.
  if (!mismatch.ok() && cause.code() == Code::kNotFound) return mismatch;
  if (!last_rebuild_error_.ok()) {
    // Which nodes were lost, and what the scheme survives.
    return Error(cause.code(), "no recoverable version <= {} of checkpoint '{}' (last cause: {}; "
                 "{})", version, name, cause.message(), last_rebuild_error_.message());
  }
  // The last cause keeps its code (a rank's CORRUPT, IO or NOT_FOUND), so
  // that every rank reports what the failing rank found.
  return Error(cause.code(), "no recoverable version <= {} of checkpoint '{}' (last cause: {})",
               version, name, cause.message());
}

}  // namespace cairn
