#include "runtime/catalog.h"

#include <algorithm>

#include "format/layout.h"
#include "storage/tier_path.h"

namespace cairn {

Result<std::unique_ptr<Tier>> OpenNodeTier(Env* env, const Config& config, TierKind kind,
                                           int node) {
  const TierConfig& tc = config.tier(kind);
  if (!tc.enabled) return std::unique_ptr<Tier>();
  // All of the node's roots, so that overlapping tiers are refused whichever opens first.
  CAIRN_ASSIGN_OR_RETURN(auto roots, ExpandTierRoots(env, config, std::to_string(node)));
  return std::make_unique<Tier>(env, kind, roots[static_cast<int>(kind)], tc);
}

Result<std::vector<NodeTier>> OpenAllNodeTiers(Env* env, const Config& config, TierKind kind) {
  std::vector<NodeTier> out;
  const TierConfig& tc = config.tier(kind);
  if (!tc.enabled) return out;
  CAIRN_ASSIGN_OR_RETURN(std::string parent, TierPathNodeParent(env, tc.path, config.dir));
  if (parent.empty()) {  // no {node}: one directory, whatever the node
    CAIRN_ASSIGN_OR_RETURN(auto shared, OpenNodeTier(env, config, kind, 0));
    out.push_back({"shared", std::move(shared)});
    return out;
  }
  auto entries = env->ListDir(parent);
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return out;
    return entries.status();
  }
  std::vector<int> nodes;
  for (const auto& e : *entries) {
    if (!e.is_dir) continue;
    if (auto node = ParseNodeDirName(e.name)) nodes.push_back(*node);
  }
  std::sort(nodes.begin(), nodes.end());
  for (int node : nodes) {
    CAIRN_ASSIGN_OR_RETURN(auto tier, OpenNodeTier(env, config, kind, node));
    out.push_back({std::to_string(node), std::move(tier)});
  }
  return out;
}

Result<Manifest> ReadManifest(const Tier& tier, const std::string& name, int64_t version,
                              int rank) {
  std::string mpath = tier.FilePath(name, version, ManifestFileName(rank));
  Result<std::string> bytes = tier.GetFile(name, version, ManifestFileName(rank), kMaxManifestBytes);
  if (bytes.status().code() == Code::kInvalidArgument) {
    return Error(Code::kCorrupt, "{} (a manifest is at most {} bytes)", bytes.status().message(),
                 kMaxManifestBytes);
  }
  CAIRN_RETURN_IF_ERROR(bytes.status());
  CAIRN_ASSIGN_OR_RETURN(Manifest m, DecodeManifest(*bytes, mpath));
  if (m.name != name || m.version != version || m.rank != rank) {
    return Error(Code::kCorrupt, "manifest '{}' describes '{}' version {} rank {}", mpath, m.name,
                 m.version, m.rank);
  }
  return m;
}

bool HasManifest(const Tier& tier, const std::string& name, int64_t version, int rank) {
  return tier.env()->FileExists(tier.FilePath(name, version, ManifestFileName(rank)));
}

Result<Manifest> CheckCopy(const Tier& tier, const std::string& name, int64_t version, int rank,
                           int nranks) {
  CAIRN_ASSIGN_OR_RETURN(Manifest m, ReadManifest(tier, name, version, rank));
  std::string mpath = tier.FilePath(name, version, ManifestFileName(rank));
  if (nranks >= 0 && m.nranks != nranks) {
    return Error(Code::kMismatch, "'{}' was written by a job of {} ranks, this one has {}", mpath,
                 m.nranks, nranks);
  }
  for (const auto& f : m.files) {
    auto size = tier.env()->FileSize(tier.FilePath(name, version, f.name));
    if (!size.ok()) {
      return Error(Code::kNotFound, "'{}' listed in '{}' is missing",
                   tier.FilePath(name, version, f.name), mpath);
    }
    if (*size != f.size) {
      return Error(Code::kCorrupt, "'{}' is {} bytes, its manifest says {}",
                   tier.FilePath(name, version, f.name), *size, f.size);
    }
  }
  return m;
}

Status RemoveVersion(Tier& tier, const std::string& name, int64_t version) {
  CAIRN_ASSIGN_OR_RETURN(auto files, tier.Files(name, version));
  for (const auto& f : files) {
    if (ParseManifestFileName(f)) CAIRN_RETURN_IF_ERROR(tier.Remove(name, version, f));
  }
  const std::string dir = tier.VersionDir(name, version);
  if (tier.persists()) CAIRN_RETURN_IF_ERROR(tier.env()->SyncDir(dir));
  for (const auto& f : files) {
    if (!ParseManifestFileName(f)) CAIRN_RETURN_IF_ERROR(tier.Remove(name, version, f));
  }
  return tier.env()->DeleteDir(dir);
}

}  // namespace cairn
