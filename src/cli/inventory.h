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

namespace cairn {

// One rank's copy of one version on one tier of one node.
struct CopyInfo {
  std::string tier;
  std::string node;
  std::string name;
  int64_t version = 0;
  int rank = 0;
  int nranks = 0;
  std::string state;  // "complete", or why not
  Manifest manifest;  // valid when state == "complete"
  std::string dir;    // the version directory
};

// check_ranks: also list versions whose directories hold files of ranks with
// no manifest (incomplete copies).
Result<std::vector<CopyInfo>> TakeInventory(Env* env, const Config& config);

// Loads the configuration the way the library does (file, then environment).
Result<Config> LoadCliConfig(const std::string& path);

}  // namespace cairn

#endif  // CAIRN_CLI_INVENTORY_H_
