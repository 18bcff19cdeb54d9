// Catalog: what is stored where. Finds the tier directories of this node
// (for the engine) or of every node (for the `cairn` command), and checks
// whether a rank's copy of a version on a tier is complete: its manifest
// decodes and every file it lists is present with the listed size. Reading
// and verifying the bytes themselves is part_io's job.
// Thread-safety: free functions over thread-safe Tiers.
#ifndef CAIRN_RUNTIME_CATALOG_H_
#define CAIRN_RUNTIME_CATALOG_H_

#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "format/manifest.h"
#include "storage/tier.h"

namespace cairn {

// The tier of `kind` for node `node`, or null if the tier is disabled.
// kConfig when the node's tiers overlap, kIo when a path cannot be
// expanded (ExpandTierRoots).
Result<std::unique_ptr<Tier>> OpenNodeTier(Env* env, const Config& config, TierKind kind,
                                           int node);

// Every node's directory of an enabled tier (one for a shared tier), with the
// node's label ("0", "1", ... or "shared").
struct NodeTier {
  std::string node;
  std::unique_ptr<Tier> tier;
};
Result<std::vector<NodeTier>> OpenAllNodeTiers(Env* env, const Config& config, TierKind kind);

// The manifest of `rank`'s copy of (name, version) on tier if that copy is
// complete; kNotFound if there is none, kCorrupt if it is damaged.
// nranks >= 0 also requires the copy to come from a job of that size.
Result<Manifest> CheckCopy(const Tier& tier, const std::string& name, int64_t version, int rank,
                           int nranks);

// `rank`'s manifest of (name, version) on tier, decoded and describing that
// copy, whether or not the files it lists are there (CheckCopy checks them).
Result<Manifest> ReadManifest(const Tier& tier, const std::string& name, int64_t version,
                              int rank);

// Whether `rank` has a manifest file for (name, version) on tier, readable
// or not: a copy was committed there once.
bool HasManifest(const Tier& tier, const std::string& name, int64_t version, int rank);

// Removes the directory of (name, version) on tier with every rank's files
// in it, manifests first (made durable on tiers that persist), so that a
// removal cut short leaves copies that count as incomplete, never one that
// looks complete with files missing. For tools that work on a tier no job
// is using (`cairn delete`, `cairn prune`); a rank of a running job removes
// only its own files (the engine's RemoveCopy).
Status RemoveVersion(Tier& tier, const std::string& name, int64_t version);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_CATALOG_H_
