#include "cli/inventory.h"

#include <map>
#include <set>

#include "format/layout.h"
#include "runtime/catalog.h"

namespace cairn {

Result<Config> LoadCliConfig(const std::string& path) {
  return LoadConfig(path.empty() ? nullptr : path.c_str(), ProcessEnvLookup(), ProcessEnvNames(),
                    [](const std::string& p, uint64_t max_bytes) {
                      return PosixEnv()->ReadFileUpTo(p, max_bytes);
                    });
}

Result<std::vector<CopyInfo>> TakeInventory(Env* env, const Config& config) {
  std::vector<CopyInfo> out;
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN(auto node_tiers, OpenAllNodeTiers(env, config, static_cast<TierKind>(k)));
    for (const auto& nt : node_tiers) {
      const Tier& tier = *nt.tier;
      CAIRN_ASSIGN_OR_RETURN(auto names, tier.Names());
      for (const auto& name : names) {
        CAIRN_ASSIGN_OR_RETURN(auto versions, tier.Versions(name));
        for (int64_t v : versions) {
          CAIRN_ASSIGN_OR_RETURN(auto files, tier.Files(name, v));
          // Ranks with any file here; a rank without a manifest is incomplete.
          std::set<int> ranks;
          for (const auto& f : files) {
            if (f.size() > 8 && f[0] == 'r' && f[7] == '.') ranks.insert(std::atoi(f.c_str() + 1));
          }
          for (int rank : ranks) {
            CopyInfo info;
            info.tier = tier.name();
            info.node = nt.node;
            info.name = name;
            info.version = v;
            info.rank = rank;
            info.dir = tier.VersionDir(name, v);
            auto m = CheckCopy(tier, name, v, rank, -1);
            if (m.ok()) {
              info.state = "complete";
              info.nranks = m->nranks;
              info.manifest = std::move(m).value();
            } else if (m.status().code() == Code::kNotFound &&
                       !env->FileExists(tier.FilePath(name, v, ManifestFileName(rank)))) {
              info.state = "incomplete (no manifest)";
            } else {
              info.state = "damaged: " + m.status().ToString();
            }
            out.push_back(std::move(info));
          }
        }
      }
    }
  }
  return out;
}

}  // namespace cairn
