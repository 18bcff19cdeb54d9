// cairn delete NAME and cairn prune --keep N [NAME]: remove stored
// checkpoints from every tier and node the configuration points at,
// offline (no job may be using them). Both show what they remove (or, with
// --dry-run, would remove), one line or JSON object per directory, then a
// summary; see cli/removal.h for the rules.
#include <map>
#include <string>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/removal.h"
#include "cli/store_commands.h"
#include "format/layout.h"

namespace cairn {
namespace {

struct RemovalTotals {
  int versions = 0;
  int slot_dirs = 0;
  int failed = 0;
  uint64_t bytes = 0;
};

std::string DescribeTarget(const RemovalTarget& t) {
  return t.name.empty() ? fmt::format("{} parked slot(s)", t.files)
                        : fmt::format("{} version {}", t.name, t.version);
}

void ShowTarget(const RemovalTarget& t, const char* action, bool json, Table& table) {
  if (json) {
    JsonObject o = {{"action", action}, {"tier", TierKindName(t.tier)}, {"node", t.node}};
    if (t.name.empty()) {
      o["slots"] = t.files;
    } else {
      o["name"] = t.name;
      o["version"] = t.version;
    }
    o["dir"] = t.dir;
    o["bytes"] = t.bytes;
    PrintJsonLine(o);
  } else {
    table.Add({action, TierKindName(t.tier), t.node, DescribeTarget(t), HumanBytes(t.bytes), t.dir});
  }
}

// Removes (or with dry_run only shows) every target; a failure is reported
// and the rest still go.
RemovalTotals RemoveTargets(const char* command, const std::vector<RemovalTarget>& targets,
                            bool dry_run, bool json) {
  RemovalTotals totals;
  Table table({"ACTION", "TIER", "NODE", "WHAT", "BYTES", "DIRECTORY"});
  for (const auto& t : targets) {
    Status s = dry_run ? Status::Ok() : RemoveTarget(PosixEnv(), t);
    if (!s.ok()) {
      ReportError(command, s.Annotate(fmt::format("removing {}", t.dir)), kExitDamage);
      ++totals.failed;
      continue;
    }
    ShowTarget(t, dry_run ? "would remove" : "removed", json, table);
    (t.name.empty() ? totals.slot_dirs : totals.versions) += 1;
    totals.bytes += t.bytes;
  }
  if (!json && !table.empty()) table.Print();
  return totals;
}

JsonObject SummaryJson(const char* command, const RemovalFlags& flags, const RemovalTotals& t) {
  return {{"command", command}, {"dry_run", flags.dry_run}, {"versions_removed", t.versions},
          {"slot_dirs_removed", t.slot_dirs}, {"bytes", t.bytes}, {"failed", t.failed}};
}

std::string SummaryText(const RemovalFlags& flags, const RemovalTotals& t) {
  return fmt::format("{} {} version director{} and {} parked-slot director{} ({}){}",
                     flags.dry_run ? "would remove" : "removed", t.versions,
                     t.versions == 1 ? "y" : "ies", t.slot_dirs, t.slot_dirs == 1 ? "y" : "ies",
                     HumanBytes(t.bytes),
                     t.failed > 0 ? fmt::format("; {} failed", t.failed) : std::string());
}

int ExitCode(const RemovalTotals& t) { return t.failed > 0 ? kExitDamage : kExitOk; }

std::string KeptText(const std::map<std::string, PruneDecision>& plan) {
  std::string out;
  for (const auto& [name, d] : plan) {
    out += fmt::format("{}{} {}", out.empty() ? "" : "; ", name,
                       d.keep.empty() ? "no recoverable version (nothing removed)"
                                      : fmt::format("{}", fmt::join(d.keep, ", ")));
  }
  return out;
}

}  // namespace

int RunDelete(const RemovalFlags& flags) {
  if (Status s = ValidateName("checkpoint name", flags.name); !s.ok()) {
    return ReportError("delete", s);
  }
  auto config = LoadCliConfig(flags.config);
  if (!config.ok()) return ReportError("delete", config.status());
  auto locks = LockAllTierDirectories(PosixEnv(), *config, "delete");
  if (!locks.ok()) return ReportError("delete", locks.status());
  auto targets = FindRemovalTargets(PosixEnv(), *config, flags.name,
                                    [](int64_t) { return true; }, /*with_slots=*/true);
  if (!targets.ok()) return ReportError("delete", targets.status());
  if (targets->empty()) {
    return ReportError("delete",
                       fmt::format("no checkpoint named '{}' in {}", flags.name,
                                   DescribeSearchedTiers(PosixEnv(), *config)),
                       kExitNothingFound);
  }
  RemovalTotals totals = RemoveTargets("delete", *targets, flags.dry_run, flags.json);
  if (flags.json) {
    JsonObject summary = SummaryJson("delete", flags, totals);
    summary["name"] = flags.name;
    PrintJsonLine(summary);
  } else {
    fmt::print("{} of '{}'\n", SummaryText(flags, totals), flags.name);
  }
  return ExitCode(totals);
}

int RunPrune(const RemovalFlags& flags) {
  if (!flags.name.empty()) {
    if (Status s = ValidateName("checkpoint name", flags.name); !s.ok()) {
      return ReportError("prune", s);
    }
  }
  auto config = LoadCliConfig(flags.config);
  if (!config.ok()) return ReportError("prune", config.status());
  auto locks = LockAllTierDirectories(PosixEnv(), *config, "prune");
  if (!locks.ok()) return ReportError("prune", locks.status());
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) return ReportError("prune", copies.status());
  const auto plan = PlanPrune(*copies, flags.keep, flags.name);
  if (plan.empty()) {
    std::string what = flags.name.empty() ? "no checkpoint" : "no checkpoint named '" + flags.name + "'";
    return ReportError("prune",
                       fmt::format("{} in {}", what, DescribeSearchedTiers(PosixEnv(), *config)),
                       kExitNothingFound);
  }
  std::vector<RemovalTarget> targets;
  for (const auto& [name, d] : plan) {
    auto of_name = FindRemovalTargets(PosixEnv(), *config, name,
                                      [&d = d](int64_t v) { return d.remove.count(v) > 0; },
                                      /*with_slots=*/false);
    if (!of_name.ok()) return ReportError("prune", of_name.status());
    targets.insert(targets.end(), of_name->begin(), of_name->end());
  }
  RemovalTotals totals = RemoveTargets("prune", targets, flags.dry_run, flags.json);
  if (flags.json) {
    JsonObject summary = SummaryJson("prune", flags, totals);
    JsonObject kept = JsonObject::object();
    for (const auto& [name, d] : plan) kept[name] = d.keep;
    summary["kept"] = std::move(kept);
    PrintJsonLine(summary);
  } else {
    fmt::print("{}; kept {}\n", SummaryText(flags, totals), KeptText(plan));
  }
  return ExitCode(totals);
}

}  // namespace cairn
