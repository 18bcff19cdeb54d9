// cairn list: versions per tier, with sizes and whether every rank's copy is
// there (complete) or not.
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"

namespace cairn {
namespace {

struct VersionRow {
  std::set<int> complete_ranks;
  std::set<int> incomplete_ranks;
  std::set<std::string> nodes;
  int nranks = 0;
  uint64_t bytes = 0;
  double created = 0;
};

int RunList(const std::string& config_path, bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "cairn list: %s\n", config.status().ToString().c_str());
    return 2;
  }
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) {
    std::fprintf(stderr, "cairn list: %s\n", copies.status().ToString().c_str());
    return 2;
  }
  std::map<std::tuple<int, std::string, int64_t>, VersionRow> rows;
  static const std::map<std::string, int> kOrder = {{"memory", 0}, {"ssd", 1}, {"pfs", 2}};
  for (const auto& c : *copies) {
    VersionRow& row = rows[{kOrder.at(c.tier), c.name, c.version}];
    row.nodes.insert(c.node);
    if (c.state == "complete") {
      row.complete_ranks.insert(c.rank);
      row.nranks = std::max(row.nranks, c.nranks);
      row.bytes += c.manifest.DataBytes();
      row.created = std::max(row.created, c.manifest.created);
    } else {
      row.incomplete_ranks.insert(c.rank);
    }
  }
  Table table({"TIER", "NAME", "VERSION", "RANKS", "BYTES", "STATE", "NODES"});
  for (const auto& [key, row] : rows) {
    const auto& [order, name, version] = key;
    const char* tier = order == 0 ? "memory" : order == 1 ? "ssd" : "pfs";
    bool complete = row.nranks > 0 && static_cast<int>(row.complete_ranks.size()) == row.nranks;
    std::string nodes;
    for (const auto& n : row.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    std::string ranks = row.nranks > 0 ? fmt::format("{}/{}", row.complete_ranks.size(), row.nranks)
                                       : fmt::format("0/?");
    if (json) {
      std::puts(JsonObject()
                    .Str("tier", tier)
                    .Str("name", name)
                    .Int("version", version)
                    .Int("ranks_complete", static_cast<int64_t>(row.complete_ranks.size()))
                    .Int("ranks_incomplete", static_cast<int64_t>(row.incomplete_ranks.size()))
                    .Int("nranks", row.nranks)
                    .Int("bytes", static_cast<int64_t>(row.bytes))
                    .Bool("complete", complete)
                    .Num("created", row.created)
                    .Str("nodes", nodes)
                    .ToString()
                    .c_str());
    } else {
      table.Add({tier, name, std::to_string(version), ranks, HumanBytes(row.bytes),
                 complete ? "complete" : "incomplete", nodes});
    }
  }
  if (!json) {
    if (table.empty()) {
      std::puts("no checkpoints found");
    } else {
      table.Print();
    }
  }
  return 0;
}

}  // namespace

void AddListCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("list", "List checkpoint versions on every tier");
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--config", *config, "Cairn configuration file (default: $CAIRN_CONFIG or built-in)");
  cmd->add_flag("--json", *json, "One JSON object per version and tier");
  cmd->callback([&exit_code, config, json] { exit_code = RunList(*config, *json); });
}

}  // namespace cairn
