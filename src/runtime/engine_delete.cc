// Engine, deleting a checkpoint: every version of one name (cairn_delete),
// or one version of it (cairn_delete_version), on every tier of this job
// (engine.h).
#include <algorithm>
#include <functional>
#include <optional>

#include "base/log.h"
#include "format/layout.h"
#include "runtime/engine.h"

namespace cairn {
namespace {

// Collective. For each tier kind, whether this rank is the lowest rank
// whose tier directory is the same as its own: the one rank that cleans a
// directory shared by several ranks (a node's ranks share node-local
// tiers; every rank shares the pfs tier).
Result<std::array<bool, kTierKinds>> LeadsTierDirectory(
    Comm& comm, const std::array<std::unique_ptr<Tier>, kTierKinds>& tiers) {
  std::vector<int64_t> roots(kTierKinds, 0);  // 0: tier not enabled
  for (int k = 0; k < kTierKinds; ++k) {
    if (tiers[k]) roots[k] = static_cast<int64_t>(std::hash<std::string>{}(tiers[k]->root()) | 1);
  }
  CAIRN_ASSIGN_OR_RETURN(auto all, comm.AllgatherWords(roots));
  std::array<bool, kTierKinds> leads{};
  for (int k = 0; k < kTierKinds; ++k) {
    leads[k] = roots[k] != 0;
    for (int r = 0; r < comm.rank() && leads[k]; ++r) {
      if (all[static_cast<size_t>(r) * kTierKinds + k] == roots[k]) leads[k] = false;
    }
  }
  return leads;
}

}  // namespace

Result<int> Engine::RemoveFromEveryTier(const std::string& name, std::optional<int64_t> only,
                                        const std::string& what) {
  // A drain reads one tier's copy and writes another's: none may run while
  // the copies go, or it would write back what was just deleted.
  CAIRN_RETURN_IF_ERROR(
      comm_->Agree(Wait()).Annotate(fmt::format("{}: waiting for background work", what)));
  int removed = 0;
  Status local = [&]() -> Status {
    MutexLock lock(&mu_);
    for (const auto& t : tiers_) {
      if (!t) continue;
      CAIRN_ASSIGN_OR_RETURN(auto versions, t->Versions(name));
      for (int64_t v : versions) {
        if (only && v != *only) continue;
        // Other ranks may still be removing their files from the directory.
        CAIRN_RETURN_IF_ERROR(RemoveCopy(*t, name, v, /*remove_empty_dir=*/false));
        ++removed;
      }
    }
    return Status::Ok();
  }();
  CAIRN_RETURN_IF_ERROR(comm_->Agree(local).Annotate(what));
  // Every rank's own files are gone. What is left is no rank's of this job
  // (a run on more ranks in the same directories, a run killed mid-write):
  // one rank per tier directory removes the rest.
  auto leads = LeadsTierDirectory(*comm_, tiers_);
  Status rest = leads.status();
  for (int k = 0; k < kTierKinds && rest.ok(); ++k) {
    if (!(*leads)[k]) continue;
    // <root>/<name> holds the name's version directories (storage/tier.h).
    rest = env_->DeleteRecursive(only ? tiers_[k]->VersionDir(name, *only)
                                      : JoinPath(tiers_[k]->root(), name));
  }
  CAIRN_RETURN_IF_ERROR(comm_->Agree(rest).Annotate(what));
  return removed;
}

Status Engine::Delete(const std::string& name) {
  CAIRN_RETURN_IF_ERROR(comm_->Agree(ValidateName("checkpoint name", name)));
  CAIRN_RETURN_IF_ERROR(AgreeOnTarget(name, 0));
  CAIRN_ASSIGN_OR_RETURN(int removed,
                         RemoveFromEveryTier(name, std::nullopt, fmt::format("deleting '{}'", name)));
  names_written_.erase(name);
  {
    MutexLock lock(&mu_);
    last_committed_.erase(name);
  }
  std::erase_if(skipped_newest_, [&](const auto& entry) { return entry.first.first == name; });
  // [dedup]: the next version must not refer to pages just deleted.
  if (dedup_) dedup_->Forget();
  Log(LogLevel::kInfo, "deleted '{}': {} copy(ies) of this rank removed", name, removed);
  return Status::Ok();
}

Status Engine::DeleteVersion(const std::string& name, int64_t version) {
  const std::string what = fmt::format("deleting '{}' version {}", name, version);
  Status request = ValidateName("checkpoint name", name);
  if (request.ok() && version < 0) {
    request = Error(Code::kInvalidArgument, "{}: a version is >= 0", what);
  }
  CAIRN_RETURN_IF_ERROR(comm_->Agree(request));
  CAIRN_RETURN_IF_ERROR(AgreeOnTarget(name, version));
  // [dedup] A kept version whose pages refer to this one would lose them:
  // it goes first (every rank's manifest lists the same references).
  Status unreferenced = [&]() -> Status {
    MutexLock lock(&mu_);
    for (int k = 0; k < kTierKinds; ++k) {
      if (!tiers_[k]) continue;
      for (const StoredVersion& kept : StoredCopies(k, name, kNone)) {
        if (std::find(kept.references.begin(), kept.references.end(), version) !=
            kept.references.end()) {
          return Error(Code::kInvalidArgument,
                       "version {} on tier {} refers to its pages ([dedup]): delete that one first",
                       kept.version, TierKindName(static_cast<TierKind>(k)));
        }
      }
    }
    return Status::Ok();
  }();
  CAIRN_RETURN_IF_ERROR(comm_->Agree(unreferenced).Annotate(what));
  CAIRN_ASSIGN_OR_RETURN(int removed, RemoveFromEveryTier(name, version, what));
  std::erase_if(skipped_newest_, [&](const auto& entry) {
    return entry.first.first == name && entry.second.second == version;
  });
  // [dedup] The next version of the name may have been planned against it.
  if (dedup_) dedup_->Forget();
  Log(LogLevel::kInfo, "deleted '{}' version {}: {} copy(ies) of this rank removed", name, version,
      removed);
  return Status::Ok();
}

}  // namespace cairn
