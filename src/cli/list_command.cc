// cairn list: versions per tier, with sizes and whether every rank's copy is
// there (complete) or not — one line per run that wrote the version, so
// that the ranks of two jobs in one version directory never add up to a
// complete version (cli/inventory.h, GroupByRun).
#include <algorithm>
#include <set>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"

namespace cairn {
namespace {

// One line of the listing: one run's copies of one version on one tier,
// over all its nodes.
struct VersionRow {
  int complete_ranks = 0;
  int incomplete_ranks = 0;  // incomplete or damaged copies
  std::set<std::string> nodes;
  uint64_t bytes = 0;
  double created = 0;
  // [dedup]: older versions the pages of this one refer to (any rank).
  std::set<int64_t> references;

  std::string NodeList() const {
    std::string out;
    for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n;
    return out;
  }
};

VersionRow Summarize(const RunCopies& run) {
  VersionRow row;
  row.complete_ranks = run.CompleteRanks();
  for (const CopyInfo* c : run.copies) {
    row.nodes.insert(c->node);
    if (c->state == CopyState::kComplete) {
      row.bytes += c->manifest.DataBytes();
      row.created = std::max(row.created, c->manifest.created);
      row.references.insert(c->manifest.references.begin(), c->manifest.references.end());
    } else {
      ++row.incomplete_ranks;
    }
  }
  return row;
}

JsonObject RowJson(const RunCopies& run, const VersionRow& row) {
  JsonObject o;
  o["tier"] = TierKindName(run.tier);
  o["name"] = run.name;
  o["version"] = run.version;
  // null: a run that cannot be told (format-1 manifests, no manifest).
  o["run_id"] = run.run_id == 0 ? JsonObject() : JsonObject(run.run_id);
  o["ranks_complete"] = row.complete_ranks;
  o["ranks_incomplete"] = row.incomplete_ranks;
  o["nranks"] = run.nranks;
  o["bytes"] = row.bytes;
  o["complete"] = run.complete();
  o["created"] = row.created;
  o["nodes"] = row.NodeList();
  o["references"] = row.references;
  const RunRedundancy redundancy = RedundancyOf(run);
  o["redundancy"] = redundancy.scheme;
  o["parity_ranks"] = redundancy.protected_ranks;
  o["parity_complete"] = redundancy.complete;
  return o;
}

}  // namespace

int RunList(const std::string& config_path, bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) return ReportError("list", config.status());
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) return ReportError("list", copies.status());
  Table table(
      {"TIER", "NAME", "VERSION", "RANKS", "BYTES", "REFS", "STATE", "PARITY", "RUN", "NODES"});
  for (const RunCopies& run : GroupByRun(*copies)) {
    const VersionRow row = Summarize(run);
    if (json) {
      PrintJsonLine(RowJson(run, row));
      continue;
    }
    std::string ranks = run.nranks > 0 ? fmt::format("{}/{}", row.complete_ranks, run.nranks)
                                       : fmt::format("{}/?", row.complete_ranks);
    std::string refs;
    for (int64_t v : row.references) refs += (refs.empty() ? "" : ",") + std::to_string(v);
    table.Add({TierKindName(run.tier), run.name, std::to_string(run.version), ranks,
               HumanBytes(row.bytes), refs.empty() ? "-" : refs, run.complete() ? "complete" : "incomplete",
               RedundancyOf(run).Text(run), RunIdText(run.run_id), row.NodeList()});
  }
  if (json) return kExitOk;
  if (table.empty()) {
    fmt::print("no checkpoints found in {}\n", DescribeSearchedTiers(PosixEnv(), *config));
  } else {
    table.Print();
  }
  return kExitOk;
}

}  // namespace cairn
