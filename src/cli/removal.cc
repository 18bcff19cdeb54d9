#include "cli/removal.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "runtime/catalog.h"
#include "storage/job_lock.h"

namespace cairn {
namespace {

// Bytes and count of the regular files directly in dir.
Status MeasureDir(Env* env, RemovalTarget& target) {
  auto entries = env->ListDir(target.dir);
  if (!entries.ok()) return entries.status();
  for (const auto& e : *entries) {
    if (e.is_dir) continue;
    auto size = env->FileSize(JoinPath(target.dir, e.name));
    if (size.ok()) target.bytes += *size;
    ++target.files;
  }
  return Status::Ok();
}

Result<RemovalTarget> VersionTarget(Env* env, const NodeTier& where, const std::string& name,
                                    int64_t version) {
  RemovalTarget t;
  t.tier = where.tier->kind();
  t.node = where.node;
  t.root = where.tier->root();
  t.name = name;
  t.version = version;
  t.dir = where.tier->VersionDir(name, version);
  CAIRN_RETURN_IF_ERROR(MeasureDir(env, t));
  return t;
}

// The tier's parked slots, if name is the only checkpoint name left there.
Result<std::optional<RemovalTarget>> SlotTarget(Env* env, const NodeTier& where,
                                                const std::string& name) {
  CAIRN_ASSIGN_OR_RETURN(auto names, where.tier->Names());
  bool others_left = std::any_of(names.begin(), names.end(),
                                 [&](const std::string& n) { return n != name; });
  RemovalTarget t;
  t.tier = where.tier->kind();
  t.node = where.node;
  t.root = where.tier->root();
  t.dir = where.tier->FreeSlotDir();
  if (others_left || !env->FileExists(t.dir)) return std::optional<RemovalTarget>();
  CAIRN_RETURN_IF_ERROR(MeasureDir(env, t));
  return std::optional<RemovalTarget>(std::move(t));
}

Status AddTargetsOfTier(Env* env, const NodeTier& where, const std::string& name,
                        const std::function<bool(int64_t)>& select, bool with_slots,
                        std::vector<RemovalTarget>& out) {
  CAIRN_ASSIGN_OR_RETURN(auto versions, where.tier->Versions(name));
  for (int64_t v : versions) {
    if (!select(v)) continue;
    CAIRN_ASSIGN_OR_RETURN(RemovalTarget t, VersionTarget(env, where, name, v));
    out.push_back(std::move(t));
  }
  if (with_slots) {
    CAIRN_ASSIGN_OR_RETURN(auto slots, SlotTarget(env, where, name));
    if (slots) out.push_back(std::move(*slots));
  }
  return Status::Ok();
}

}  // namespace

std::set<int64_t> RecoverableVersions(const std::vector<CopyInfo>& copies_of_one_name) {
  // (version, run, nranks) -> ranks with a complete copy that run wrote:
  // the ranks of two runs (two jobs, or a version number reused) never add
  // up to a recoverable version, as cli/inventory.h GroupByRun shows them.
  std::map<std::tuple<int64_t, uint64_t, int>, std::set<int>> complete;
  for (const auto& c : copies_of_one_name) {
    if (c.state == CopyState::kComplete && c.rank >= 0 && c.rank < c.nranks) {
      complete[{c.version, c.run_id, c.nranks}].insert(c.rank);
    }
  }
  std::set<int64_t> out;
  for (const auto& [key, ranks] : complete) {
    if (static_cast<int>(ranks.size()) == std::get<2>(key)) out.insert(std::get<0>(key));
  }
  return out;
}

std::map<std::string, PruneDecision> PlanPrune(const std::vector<CopyInfo>& copies, int keep,
                                               const std::string& only_name) {
  std::map<std::string, std::vector<CopyInfo>> by_name;
  for (const auto& c : copies) {
    if (only_name.empty() || c.name == only_name) by_name[c.name].push_back(c);
  }
  std::map<std::string, PruneDecision> plan;
  for (const auto& [name, of_name] : by_name) {
    PruneDecision& d = plan[name];
    std::set<int64_t> recoverable = RecoverableVersions(of_name);
    for (auto it = recoverable.rbegin(); it != recoverable.rend() && d.keep.size() < static_cast<size_t>(keep); ++it) {
      d.keep.push_back(*it);
    }
    if (d.keep.empty()) continue;
    for (const auto& c : of_name) {
      bool kept = std::count(d.keep.begin(), d.keep.end(), c.version) > 0;
      if (!kept && c.version < d.keep.front()) d.remove.insert(c.version);
    }
  }
  return plan;
}

Result<std::vector<RemovalTarget>> FindRemovalTargets(Env* env, const Config& config,
                                                      const std::string& name,
                                                      const std::function<bool(int64_t)>& select,
                                                      bool with_slots) {
  std::vector<RemovalTarget> out;
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN(auto node_tiers, OpenAllNodeTiers(env, config, static_cast<TierKind>(k)));
    for (const auto& nt : node_tiers) {
      CAIRN_RETURN_IF_ERROR(AddTargetsOfTier(env, nt, name, select, with_slots, out));
    }
  }
  return out;
}

HeldTierLocks::~HeldTierLocks() {
  // Best effort: a lock file left behind is harmless (its lock went with
  // the descriptor); it only keeps an emptied directory from going.
  for (auto& lock : locks_) (void)lock->ReleaseAndRemove();
}

Result<HeldTierLocks> LockAllTierDirectories(Env* env, const Config& config,
                                             const std::string& command) {
  HeldTierLocks held;
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN(auto node_tiers, OpenAllNodeTiers(env, config, static_cast<TierKind>(k)));
    for (const auto& nt : node_tiers) {
      if (!env->FileExists(nt.tier->root())) continue;
      CAIRN_ASSIGN_OR_RETURN(auto lock, LockTierDirectory(*nt.tier, "cairn " + command));
      if (lock) held.Add(std::move(lock));
    }
  }
  return held;
}

Status RemoveTarget(Env* env, const RemovalTarget& target) {
  if (target.name.empty()) return env->DeleteRecursive(target.dir);
  Tier tier(env, target.tier, target.root, TierConfig{});
  CAIRN_RETURN_IF_ERROR(RemoveVersion(tier, target.name, target.version));
  const std::string name_dir = JoinPath(target.root, target.name);
  auto left = env->ListDir(name_dir);
  if (left.ok() && left->empty()) return env->DeleteDir(name_dir);
  return Status::Ok();
}

}  // namespace cairn
