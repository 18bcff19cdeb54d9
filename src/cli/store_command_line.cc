#include "cli/store_command_line.h"

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/store_commands.h"

namespace cairn {
namespace {

void AddCommonFlags(CLI::App* cmd, RemovalFlags& flags) {
  cmd->add_option("--config", flags.config, "Cairn configuration file");
  cmd->add_flag("--dry-run", flags.dry_run, "Show what would be removed, remove nothing");
  cmd->add_flag("--json", flags.json, "One JSON object per directory, then a summary");
}

}  // namespace

void AddListCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "list",
      "List checkpoint versions on every tier: one line per version, tier and run (the job "
      "that wrote it), with its ranks complete out of that job's size and its cross-node "
      "redundancy (PARITY: the scheme when every rank's parity is committed, else how many "
      "ranks' are)");
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--config", *config, "Cairn configuration file (default: $CAIRN_CONFIG or built-in)");
  cmd->add_flag("--json", *json, "One JSON object per version, tier and run");
  cmd->callback([&exit_code, config, json] { exit_code = RunList(*config, *json); });
}

void AddInspectCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Show every copy of one version, rank by rank. Exit status: 0 shown, 2 error, "
      "3 no copy of that version");
  auto config = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto version = std::make_shared<int64_t>(0);
  auto json = std::make_shared<bool>(false);
  cmd->add_option("name", *name, "Checkpoint name")->required();
  cmd->add_option("version", *version, "Version")->required()->check(CLI::NonNegativeNumber);
  cmd->add_option("--config", *config, "Cairn configuration file");
  cmd->add_flag("--json", *json, "One JSON object per file");
  cmd->callback([&exit_code, config, name, version, json] {
    exit_code = RunInspect(*config, *name, *version, *json);
  });
}

void AddVerifyCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Read every stored copy and check every block; re-encode every redundancy group's "
      "parity and compare, naming parts that cannot be rebuilt. Exit status: 0 every copy is "
      "clean, 1 damage was found (even if its ECC sidecar can correct it) or a lost part "
      "cannot be rebuilt, 2 error, 3 no checkpoint found");
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--config", *config, "Cairn configuration file");
  cmd->add_flag("--json", *json, "One JSON object per damaged file, then a summary");
  cmd->callback([&exit_code, config, json] { exit_code = RunVerify(*config, *json); });
}

void AddDeleteCommand(CLI::App& app, int& exit_code) {
  // The flags must live as long as app; the callback owns them.
  auto flags = std::make_shared<RemovalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "delete",
      "Remove every version of NAME from every tier and node, and the parked slots of tiers "
      "left without checkpoints. Offline: no job may be using NAME. Exit status: 0 removed, "
      "1 some removal failed, 2 error, 3 no checkpoint of that name");
  cmd->add_option("name", flags->name, "Checkpoint name")->required();
  AddCommonFlags(cmd, *flags);
  cmd->callback([&exit_code, flags] { exit_code = RunDelete(*flags); });
}

void AddPruneCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RemovalFlags>();
  CLI::App* cmd = app.add_subcommand(
      "prune",
      "Keep the newest N recoverable versions of each checkpoint name (or of NAME) with all "
      "their copies; remove older versions and leftovers of interrupted checkpoints from every "
      "tier and node. Offline: no job may be using them. Exit status: 0 done, 1 some removal "
      "failed, 2 error, 3 no checkpoint found");
  cmd->add_option("name", flags->name, "Only this checkpoint name");
  cmd->add_option("--keep", flags->keep, "Recoverable versions to keep per name")
      ->required()
      ->check(CLI::PositiveNumber);
  AddCommonFlags(cmd, *flags);
  cmd->callback([&exit_code, flags] { exit_code = RunPrune(*flags); });
}

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

void AddStatusCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "status",
      "Per node: SSD bytes Cairn has written (wear ledger), the SSD's projected lifetime at the "
      "current rate against its warranty (Eq. 1, 2), and where checkpoints went (memory, ssd, "
      "skipped) in the latest run and overall, with the last measured slowdown");
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto plot = std::make_shared<std::string>();
  cmd->add_option("--config", *config,
                  "Cairn configuration file (default: $CAIRN_CONFIG, else built-in defaults); "
                  "its ssd tier and [tiers.ssd] endurance are used");
  cmd->add_flag("--json", *json,
                "one JSON object per node instead of the tables (docs/clc.md \"Status\")");
  cmd->add_option("--plot", *plot,
                  "also draw FILE.png: projected lifetime at each checkpoint (estimated and "
                  "expected, warranty line), cumulative memory/ssd/skip counts, and the ledger's "
                  "bytes over time; needs python3 with matplotlib")
      ->type_name("FILE.png");
  cmd->footer(
      "Rate, lifetimes and pace: as the controller's last decision on the node used them "
      "(placement history); a verdict the decision's policy did not apply is shown as '-'. "
      "Without a history, B_SSD over the ledger's life. Exit status: 0 ok (also when nothing is recorded "
      "yet), 2 bad configuration, 1 a ledger or history could not be read or the plot not "
      "drawn.");
  cmd->callback([&exit_code, config, json, plot] {
    exit_code = RunStatus(*config, *json, *plot);
  });
}

}  // namespace cairn
