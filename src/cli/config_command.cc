// cairn config: the effective configuration (file, then environment, over
// the defaults), or the table of every key (--keys, --markdown), which is
// where docs/config.md's key table comes from.
#include <cstdio>

#include <fmt/format.h>

#include "base/config.h"
#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "runtime/catalog.h"
#include "storage/tier_path.h"

namespace cairn {
namespace {

void PrintKeys(bool markdown, bool json) {
  if (markdown) {
    std::puts("| key | environment variable | type | default | meaning |");
    std::puts("|---|---|---|---|---|");
  }
  for (const auto& key : ConfigKeys()) {
    if (markdown) {
      fmt::print("| `{}` | `{}` | {} | `{}` | {} |\n", key.FullName(), key.EnvName(), key.type,
                 key.fallback, key.doc);
    } else if (json) {
      PrintJsonLine({{"key", key.FullName()}, {"env", key.EnvName()}, {"type", key.type},
                     {"default", key.fallback}, {"doc", key.doc}, {"per_rank", key.per_rank}});
    } else {
      fmt::print("{:<28} {:<36} {}\n", key.FullName(), key.EnvName(), key.fallback);
    }
  }
}

}  // namespace

int RunConfig(const std::string& path, bool keys, bool markdown, bool json) {
  if (keys || markdown) {
    PrintKeys(markdown, json);
    return kExitOk;
  }
  auto config = LoadCliConfig(path);
  if (!config.ok()) return ReportError("config", config.status());
  Table table({"TIER", "ENABLED", "PATH (node 0)", "CAPACITY", "KEEP"});
  for (int k = 0; k < kTierKinds; ++k) {
    auto kind = static_cast<TierKind>(k);
    const TierConfig& t = config->tier(kind);
    auto path0 = ExpandTierPath(PosixEnv(), t.path, config->dir, "0");
    if (!path0.ok()) return ReportError("config", path0.status());
    if (json) {
      PrintJsonLine({{"tier", TierKindName(kind)}, {"enabled", t.enabled}, {"path", *path0},
                     {"capacity", t.capacity}, {"keep", config->KeepFor(kind)}});
    } else {
      table.Add({TierKindName(kind), t.enabled ? "yes" : "no", *path0,
                 t.capacity ? HumanBytes(t.capacity) : "device",
                 std::to_string(config->KeepFor(kind))});
    }
  }
  if (!json) {
    fmt::print("data directory: {}\nplacement policy: {}\n", config->dir,
               PlacementPolicyName(config->placement.policy));
    table.Print();
  }
  return kExitOk;
}

}  // namespace cairn
