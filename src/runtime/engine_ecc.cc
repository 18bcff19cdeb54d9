// Engine, the memory tier's ECC off the critical path (docs/ecc.md "What
// the sidecar costs at checkpoint time", item 3): a memory-tier copy commits without its
// sidecar; the flusher thread then encodes the sidecar from the committed
// part and rewrites the manifest to list it with the time the copy became
// protected. Until then a restart uses the part alone (its block CRCs), as
// for ecc = none: a sidecar no manifest lists is never read.
#include <algorithm>

#include "base/log.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {
namespace {

// Whether `current`, the copy's manifest now, is still the unprotected copy
// `encoded` the sidecar was computed from (same run, same commit, same
// part bytes by their block CRCs).
bool IsSameUnprotectedCopy(const Manifest& current, const Manifest& encoded) {
  if (current.run_id != encoded.run_id || current.created != encoded.created ||
      FindParityEntry(current) != nullptr || current.files.empty()) {
    return false;
  }
  const FileEntry& now = current.files.front();
  const FileEntry& then = encoded.files.front();
  return now.kind == FileKind::kPart && now.size == then.size &&
         std::equal(now.extents.begin(), now.extents.end(), then.extents.begin(),
                    then.extents.end(), [](const Extent& a, const Extent& b) {
                      return a.offset == b.offset && a.length == b.length && a.crcs == b.crcs;
                    });
}

}  // namespace

bool Engine::WantsEccSidecar(TierKind kind) const {
  // The sidecar's stripes cover any part file's bytes, a paged one's
  // ([dedup]) included; those are encoded after the commit only (a pages
  // file's size is known when its plan is, after the sidecar writer of
  // ecc_sync would have started: Config::CheckDedupWithEcc).
  return kind == TierKind::kMemory && tier(kind) != nullptr &&
         EccCodeFor(tier(kind)->config().ecc).has_value();
}

void Engine::ScheduleEccEncode(const std::string& name, int64_t version, int64_t number) {
  const std::pair<int, int64_t> copy{static_cast<int>(TierKind::kMemory), version};
  const double committed = clock_->WallSeconds();
  {
    // Retention must not delete the copy while it waits or is encoded.
    MutexLock lock(&mu_);
    pinned_.insert(copy);
    ecc_progress_ = EccProgress{number, -1};
  }
  // Superseded like a drain: when checkpoints come faster than encodes, an
  // older version not yet started is skipped (it stays committed, with its
  // block CRCs only) instead of the queue growing without bound.
  flusher_->AddSuperseding(
      "ecc/" + name,
      [this, name, version, number, committed] {
        return EncodeEccPinned(name, version, number, committed);
      },
      [this, copy, name, version] {
        MutexLock lock(&mu_);
        pinned_.erase(pinned_.find(copy));
        ++background_.ecc_skipped;
        Log(LogLevel::kDebug, "'{}' version {}: ECC encode skipped for a newer version", name,
            version);
      });
}

Status Engine::EncodeEccPinned(const std::string& name, int64_t version, int64_t number,
                               double committed) {
  Tier& t = *tier(TierKind::kMemory);
  Result<double> stamped = [&]() -> Result<double> {
    CAIRN_ASSIGN_OR_RETURN(Manifest m, CheckCopy(t, name, version, comm_->rank(), comm_->size()));
    CAIRN_ASSIGN_OR_RETURN(FileEntry sidecar, EncodeCommittedSidecar(t, m, t.config().ecc));
    return ListEccSidecar(t, m, sidecar);
  }();
  MutexLock lock(&mu_);
  pinned_.erase(pinned_.find({static_cast<int>(TierKind::kMemory), version}));
  if (!stamped.ok()) {
    // The copy stays committed and restorable through its block CRCs, only
    // without the sidecar's repair.
    Status s = stamped.status().Annotate(
        fmt::format("encoding the ECC sidecar of '{}' version {}", name, version));
    Log(LogLevel::kWarn, "{} (the version stays committed without ECC)", s.ToString());
    ++background_.ecc_failed;
    background_.last_failure = s.ToString();
    return s;
  }
  ++background_.ecc_encoded;
  const double after = std::max(0.0, *stamped - committed);
  if (ecc_progress_.number == number) ecc_progress_.protected_after = after;
  Log(LogLevel::kDebug, "'{}' version {}: ECC-protected {:.3f} s after its commit", name, version,
      after);
  return Status::Ok();
}

Result<double> Engine::ListEccSidecar(Tier& t, const Manifest& encoded, const FileEntry& sidecar) {
  // Under mu_, as every change of a copy: the application thread may have
  // replaced this copy meanwhile (the same version written again), and
  // then the sidecar belongs to nothing.
  MutexLock lock(&mu_);
  auto current = CheckCopy(t, encoded.name, encoded.version, comm_->rank(), comm_->size());
  if (!current.ok() || !IsSameUnprotectedCopy(*current, encoded)) {
    if (!current.ok() || !FindParityEntry(*current)) {
      (void)t.Remove(encoded.name, encoded.version, sidecar.name);
    }
    return Error(Code::kNotFound, "rank {}'s copy was replaced or removed while it was encoded",
                 comm_->rank());
  }
  Manifest m = std::move(*current);
  m.files.push_back(sidecar);
  // Not before the copy's creation, and so never 0 ("not protected").
  m.ecc_protected = std::max(clock_->WallSeconds(), m.created);
  CAIRN_RETURN_IF_ERROR(t.PutFile(m.name, m.version, ManifestFileName(comm_->rank()), m.Encode()));
  return m.ecc_protected;
}

CheckpointReport Engine::last_checkpoint() {
  CheckpointReport r = last_checkpoint_;
  MutexLock lock(&mu_);
  if (r.placement != Placement::kSkip && r.number == ecc_progress_.number &&
      r.ecc_protected_after < 0) {
    r.ecc_protected_after = ecc_progress_.protected_after;
  }
  return r;
}

}  // namespace cairn
