#include "cli/inventory.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "format/layout.h"
#include "runtime/catalog.h"
#include "storage/tier_path.h"

namespace cairn {
namespace {

// Ranks with any file in the version directory: a rank without a manifest
// there has an incomplete copy, which the inventory also shows.
Result<std::set<int>> RanksWithFiles(const Tier& tier, const std::string& name, int64_t version) {
  CAIRN_ASSIGN_OR_RETURN(auto files, tier.Files(name, version));
  std::set<int> ranks;
  for (const auto& f : files) {
    if (auto rank = ParseRankFilePrefix(f)) ranks.insert(*rank);
  }
  return ranks;
}

CopyInfo DescribeCopy(Env* env, const NodeTier& where, const std::string& name, int64_t version,
                      int rank) {
  const Tier& tier = *where.tier;
  CopyInfo info;
  info.tier = tier.kind();
  info.node = where.node;
  info.name = name;
  info.version = version;
  info.rank = rank;
  info.root = tier.root();
  info.dir = tier.VersionDir(name, version);
  auto m = CheckCopy(tier, name, version, rank, -1);
  if (m.ok()) {
    info.state = CopyState::kComplete;
    info.nranks = m->nranks;
    info.run_id = m->run_id;
    info.manifest = std::move(m).value();
  } else if (m.status().code() == Code::kNotFound &&
             !env->FileExists(tier.FilePath(name, version, ManifestFileName(rank)))) {
    info.state = CopyState::kIncomplete;
  } else {
    info.state = CopyState::kDamaged;
    info.problem = m.status().ToString();
  }
  return info;
}

Status AddCopiesOfTier(Env* env, const NodeTier& where, std::vector<CopyInfo>& out) {
  CAIRN_ASSIGN_OR_RETURN(auto names, where.tier->Names());
  for (const auto& name : names) {
    CAIRN_ASSIGN_OR_RETURN(auto versions, where.tier->Versions(name));
    for (int64_t v : versions) {
      CAIRN_ASSIGN_OR_RETURN(auto ranks, RanksWithFiles(*where.tier, name, v));
      for (int rank : ranks) out.push_back(DescribeCopy(env, where, name, v, rank));
    }
  }
  return Status::Ok();
}

// Where a copy without a manifest goes: the one run of its version on its
// tier whose job has that rank, else nowhere known (null).
RunCopies* OnlyRunHolding(std::vector<RunCopies*>& runs_of_version, int rank) {
  if (runs_of_version.size() != 1 || rank >= runs_of_version.front()->nranks) return nullptr;
  return runs_of_version.front();
}

}  // namespace

int RunCopies::CompleteRanks() const {
  std::set<int> ranks;
  for (const CopyInfo* c : copies) {
    if (c->state == CopyState::kComplete) ranks.insert(c->rank);
  }
  return static_cast<int>(ranks.size());
}

std::vector<RunCopies> GroupByRun(const std::vector<CopyInfo>& copies) {
  using Version = std::tuple<int, std::string, int64_t>;  // tier, name, version
  using Key = std::tuple<int, std::string, int64_t, uint64_t, int>;  // + run_id, nranks
  std::map<Key, RunCopies> groups;
  auto group = [&](const CopyInfo& c, uint64_t run_id, int nranks) -> RunCopies& {
    RunCopies& g = groups[{static_cast<int>(c.tier), c.name, c.version, run_id, nranks}];
    g.tier = c.tier;
    g.name = c.name;
    g.version = c.version;
    g.run_id = run_id;
    g.nranks = nranks;
    return g;
  };
  for (const CopyInfo& c : copies) {
    if (c.state == CopyState::kComplete) group(c, c.run_id, c.nranks).copies.push_back(&c);
  }
  // std::map never moves its elements: the pointers stay valid.
  std::map<Version, std::vector<RunCopies*>> runs;
  for (auto& [key, g] : groups) runs[{static_cast<int>(g.tier), g.name, g.version}].push_back(&g);
  std::vector<std::pair<const CopyInfo*, RunCopies*>> placed;
  for (const CopyInfo& c : copies) {
    if (c.state == CopyState::kComplete) continue;
    placed.emplace_back(&c, OnlyRunHolding(runs[{static_cast<int>(c.tier), c.name, c.version}],
                                           c.rank));
  }
  for (auto& [c, run] : placed) (run != nullptr ? *run : group(*c, 0, 0)).copies.push_back(c);
  std::vector<RunCopies> out;
  for (auto& [key, g] : groups) {
    std::stable_sort(g.copies.begin(), g.copies.end(),
                     [](const CopyInfo* a, const CopyInfo* b) { return a->rank < b->rank; });
    out.push_back(std::move(g));
  }
  return out;
}

RunRedundancy RedundancyOf(const RunCopies& run) {
  RunRedundancy out;
  for (const CopyInfo* c : run.copies) {
    if (c->state != CopyState::kComplete || !c->manifest.redundancy) continue;
    ++out.protected_ranks;
    out.scheme = ParitySchemeName(c->manifest.redundancy->scheme);
  }
  out.complete = run.complete() && out.protected_ranks == run.nranks;
  return out;
}

std::string RunRedundancy::Text(const RunCopies& run) const {
  if (protected_ranks == 0 || complete) return scheme;
  return fmt::format("{} {}/{}", scheme, protected_ranks,
                     run.nranks > 0 ? std::to_string(run.nranks) : "?");
}

std::string RunIdText(uint64_t run_id) {
  return run_id == 0 ? "-" : fmt::format("{:016x}", run_id);
}

Result<Config> LoadCliConfig(const std::string& path) {
  return LoadConfig(path.empty() ? nullptr : path.c_str(), ProcessEnvLookup(), ProcessEnvNames(),
                    [](const std::string& p, uint64_t max_bytes) {
                      return PosixEnv()->ReadFileUpTo(p, max_bytes);
                    });
}

Tier TierOf(Env* env, const CopyInfo& copy) {
  // Reading needs no tier settings: what the bytes are is in the manifest.
  return Tier(env, copy.tier, copy.root, TierConfig{});
}

Result<std::vector<CopyInfo>> TakeInventory(Env* env, const Config& config) {
  std::vector<CopyInfo> out;
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN(auto node_tiers, OpenAllNodeTiers(env, config, static_cast<TierKind>(k)));
    for (const auto& nt : node_tiers) CAIRN_RETURN_IF_ERROR(AddCopiesOfTier(env, nt, out));
  }
  return out;
}

std::string DescribeSearchedTiers(Env* env, const Config& config) {
  std::string out;
  for (int k = 0; k < kTierKinds; ++k) {
    const auto kind = static_cast<TierKind>(k);
    const TierConfig& tc = config.tier(kind);
    if (!tc.enabled) continue;
    // "{node}" stays as it is: the inventory looks at every node's directory.
    auto where = ExpandTierPath(env, tc.path, config.dir, "{node}");
    out += fmt::format("{}{} tier {}", out.empty() ? "" : ", ", TierKindName(kind),
                       where.ok() ? *where : tc.path);
  }
  return out.empty() ? "no tier (every tier is disabled)" : out;
}

}  // namespace cairn
