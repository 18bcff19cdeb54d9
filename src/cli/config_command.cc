// cairn config: the effective configuration (file, then environment, over
// the defaults), or the table of every key (--keys, --markdown), which is
// where docs/config.md's key table comes from.
#include <cstdio>
#include <memory>

#include "base/config.h"
#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "runtime/catalog.h"

namespace cairn {
namespace {

int RunConfig(const std::string& path, bool keys, bool markdown, bool json) {
  if (keys || markdown) {
    if (markdown) {
      std::puts("| key | environment variable | type | default | meaning |");
      std::puts("|---|---|---|---|---|");
    }
    for (const auto& key : ConfigKeys()) {
      if (markdown) {
        std::printf("| `%s` | `%s` | %s | `%s` | %s |\n", key.FullName().c_str(),
                    key.EnvName().c_str(), key.type.c_str(), key.fallback.c_str(), key.doc.c_str());
      } else if (json) {
        std::puts(JsonObject().Str("key", key.FullName()).Str("env", key.EnvName())
                      .Str("type", key.type).Str("default", key.fallback).Str("doc", key.doc)
                      .ToString().c_str());
      } else {
        std::printf("%-28s %-36s %s\n", key.FullName().c_str(), key.EnvName().c_str(),
                    key.fallback.c_str());
      }
    }
    return 0;
  }
  auto config = LoadCliConfig(path);
  if (!config.ok()) {
    std::fprintf(stderr, "cairn config: %s\n", config.status().ToString().c_str());
    return 2;
  }
  Table table({"TIER", "ENABLED", "PATH (node 0)", "CAPACITY", "KEEP"});
  for (int k = 0; k < kTierKinds; ++k) {
    auto kind = static_cast<TierKind>(k);
    const TierConfig& t = config->tier(kind);
    std::string path0 = ExpandTierPath(t.path, config->dir, "0");
    std::string capacity = t.capacity ? HumanBytes(t.capacity) : "device";
    if (json) {
      std::puts(JsonObject().Str("tier", TierKindName(kind)).Bool("enabled", t.enabled)
                    .Str("path", path0).Int("capacity", static_cast<int64_t>(t.capacity))
                    .Int("keep", config->KeepFor(kind)).ToString().c_str());
    } else {
      table.Add({TierKindName(kind), t.enabled ? "yes" : "no", path0, capacity,
                 std::to_string(config->KeepFor(kind))});
    }
  }
  if (!json) {
    std::printf("data directory: %s\nplacement policy: %s\n", config->dir.c_str(),
                PlacementPolicyName(config->placement.policy));
    table.Print();
  }
  return 0;
}

}  // namespace

void AddConfigCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("config", "Show the effective configuration, or every key");
  auto path = std::make_shared<std::string>();
  auto keys = std::make_shared<bool>(false);
  auto markdown = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--config", *path, "Cairn configuration file");
  cmd->add_flag("--keys", *keys, "List every key with its environment variable and default");
  cmd->add_flag("--markdown", *markdown, "The key table as Markdown (docs/config.md)");
  cmd->add_flag("--json", *json, "JSON output");
  cmd->callback([&exit_code, path, keys, markdown, json] {
    exit_code = RunConfig(*path, *keys, *markdown, *json);
  });
}

}  // namespace cairn
