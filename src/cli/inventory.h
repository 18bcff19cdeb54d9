// Inventory: every copy of every version on every tier and node that the
// configuration points at, as the `cairn` commands show it.
// Thread-safety: not thread-safe.
#ifndef CAIRN_CLI_INVENTORY_H_
#define CAIRN_CLI_INVENTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "env/env.h"
#include "format/manifest.h"
#include "storage/tier.h"

namespace cairn {

enum class CopyState {
  kComplete,    // the manifest decodes and lists files that are all there
  kIncomplete,  // files of the rank but no manifest: interrupted, or being written
  kDamaged,     // a manifest that does not decode, or files missing or of the wrong size
};

// One rank's copy of one version on one tier of one node.
struct CopyInfo {
  TierKind tier = TierKind::kMemory;
  std::string node;
  std::string name;
  int64_t version = 0;
  int rank = 0;
  int nranks = 0;      // valid when state == kComplete
  CopyState state = CopyState::kIncomplete;
  std::string problem;  // why the copy is damaged
  Manifest manifest;    // valid when state == kComplete
  std::string root;     // the tier's directory of this node
  std::string dir;      // the version directory
};

// The tier that holds copy, to read its files.
Tier TierOf(Env* env, const CopyInfo& copy);

// Every rank's copy found on every enabled tier and node, in tier order
// (memory, ssd, pfs), then by node, name, version and rank.
Result<std::vector<CopyInfo>> TakeInventory(Env* env, const Config& config);

// Where TakeInventory looks, for messages that find nothing: each enabled
// tier's directory of node directories (or its shared directory), such as
// "ssd tier /scratch/run/ssd/{node}".
std::string DescribeSearchedTiers(Env* env, const Config& config);

// Loads the configuration the way the library does (file, then environment).
Result<Config> LoadCliConfig(const std::string& path);

}  // namespace cairn

#endif  // CAIRN_CLI_INVENTORY_H_
