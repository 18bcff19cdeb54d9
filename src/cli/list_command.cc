// cairn list: versions per tier, with sizes and whether every rank's copy is
// there (complete) or not.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"

namespace cairn {
namespace {

// One line of the listing: one version on one tier, over all its nodes.
struct VersionRow {
  std::set<int> complete_ranks;
  std::set<int> incomplete_ranks;  // incomplete or damaged copies
  std::set<std::string> nodes;
  int nranks = 0;
  uint64_t bytes = 0;
  double created = 0;

  bool complete() const {
    return nranks > 0 && static_cast<int>(complete_ranks.size()) == nranks;
  }
  std::string NodeList() const {
    std::string out;
    for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n;
    return out;
  }
};

// Keyed by tier (in TierKind order: memory, ssd, pfs), name and version.
using Rows = std::map<std::tuple<int, std::string, int64_t>, VersionRow>;

Rows GroupByVersion(const std::vector<CopyInfo>& copies) {
  Rows rows;
  for (const auto& c : copies) {
    VersionRow& row = rows[{static_cast<int>(c.tier), c.name, c.version}];
    row.nodes.insert(c.node);
    if (c.state == CopyState::kComplete) {
      row.complete_ranks.insert(c.rank);
      row.nranks = std::max(row.nranks, c.nranks);
      row.bytes += c.manifest.DataBytes();
      row.created = std::max(row.created, c.manifest.created);
    } else {
      row.incomplete_ranks.insert(c.rank);
    }
  }
  return rows;
}

JsonObject RowJson(const std::string& tier, const std::string& name, int64_t version,
                   const VersionRow& row) {
  JsonObject o;
  o["tier"] = tier;
  o["name"] = name;
  o["version"] = version;
  o["ranks_complete"] = row.complete_ranks.size();
  o["ranks_incomplete"] = row.incomplete_ranks.size();
  o["nranks"] = row.nranks;
  o["bytes"] = row.bytes;
  o["complete"] = row.complete();
  o["created"] = row.created;
  o["nodes"] = row.NodeList();
  return o;
}

int RunList(const std::string& config_path, bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) return ReportError("list", config.status());
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) return ReportError("list", copies.status());
  Table table({"TIER", "NAME", "VERSION", "RANKS", "BYTES", "STATE", "NODES"});
  for (const auto& [key, row] : GroupByVersion(*copies)) {
    const auto& [kind, name, version] = key;
    const std::string tier = TierKindName(static_cast<TierKind>(kind));
    if (json) {
      PrintJsonLine(RowJson(tier, name, version, row));
      continue;
    }
    std::string ranks = row.nranks > 0
                            ? fmt::format("{}/{}", row.complete_ranks.size(), row.nranks)
                            : "0/?";
    table.Add({tier, name, std::to_string(version), ranks, HumanBytes(row.bytes),
               row.complete() ? "complete" : "incomplete", row.NodeList()});
  }
  if (json) return kExitOk;
  if (table.empty()) {
    fmt::print("no checkpoints found in {}\n", DescribeSearchedTiers(PosixEnv(), *config));
  } else {
    table.Print();
  }
  return kExitOk;
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
