// The `cairn` subcommands that look at stored checkpoints (list, inspect,
// verify), remove them (delete, prune), look at the SSD's wear and the placement history (status) and at the
// configuration (config). Each adds itself to the app; its callback sets
// exit_code.
#ifndef CAIRN_CLI_STORE_COMMANDS_H_
#define CAIRN_CLI_STORE_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace cairn {

void AddListCommand(CLI::App& app, int& exit_code);
void AddInspectCommand(CLI::App& app, int& exit_code);
void AddVerifyCommand(CLI::App& app, int& exit_code);
void AddDeleteCommand(CLI::App& app, int& exit_code);
void AddPruneCommand(CLI::App& app, int& exit_code);
void AddConfigCommand(CLI::App& app, int& exit_code);
void AddStatusCommand(CLI::App& app, int& exit_code);

}  // namespace cairn

#endif  // CAIRN_CLI_STORE_COMMANDS_H_
