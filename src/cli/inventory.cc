#include "cli/inventory.h"

#include <set>

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

}  // namespace

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
