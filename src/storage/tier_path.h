// Tier paths: the placeholders of a tier's path template ({dir} {node}
// {user} {dirkey}) expanded for one node, and the rule that the tiers of a
// node never share a directory. Paths are expanded once, when tiers are
// opened; a tier's root is then fixed for the life of its Tier.
// Thread-safety: every function is reentrant.
#ifndef CAIRN_STORAGE_TIER_PATH_H_
#define CAIRN_STORAGE_TIER_PATH_H_

#include <array>
#include <string>

#include "base/config.h"
#include "base/status.h"
#include "env/env.h"

namespace cairn {

// Expands {dir}, {node}, {user} and {dirkey} in a path template. {user} is
// the user's name (the numeric uid if it has none); {dirkey} is a short hash
// of the absolute data directory, so that jobs run from different
// directories never share a memory tier. kIo naming the directory when it
// cannot be made absolute (the working directory was removed). env resolves
// the directory (Env::AbsolutePath) and is not kept.
Result<std::string> ExpandTierPath(Env* env, const std::string& pattern, const std::string& dir,
                                   const std::string& node);

// The part of pattern before "{node}" expanded, or "" if it has no {node}.
Result<std::string> TierPathNodeParent(Env* env, const std::string& pattern,
                                       const std::string& dir);

// The root of every tier on `node`, expanded, by TierKind ("" for a disabled
// tier). kConfig naming both keys and both paths when two enabled tiers
// resolve to the same directory or one lies inside the other (compared after
// resolving `.`, `..`, repeated and trailing slashes, and symlinks where the
// path exists, through Env::CanonicalPath): retention or a drain on one
// would delete the other's copies.
Result<std::array<std::string, kTierKinds>> ExpandTierRoots(Env* env, const Config& config,
                                                            const std::string& node);

}  // namespace cairn

#endif  // CAIRN_STORAGE_TIER_PATH_H_
