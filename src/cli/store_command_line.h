// The command lines of the stored-checkpoint subcommands (store_commands.h):
// each adds itself to the app, and its callback runs the command and sets
// exit_code. The only translation unit of these commands that compiles
// CLI11, whose header costs several seconds of code generation in each one.
#ifndef CAIRN_CLI_STORE_COMMAND_LINE_H_
#define CAIRN_CLI_STORE_COMMAND_LINE_H_

namespace CLI {
class App;
}  // namespace CLI

namespace cairn {

void AddListCommand(CLI::App& app, int& exit_code);
void AddInspectCommand(CLI::App& app, int& exit_code);
void AddVerifyCommand(CLI::App& app, int& exit_code);
void AddDeleteCommand(CLI::App& app, int& exit_code);
void AddPruneCommand(CLI::App& app, int& exit_code);
void AddConfigCommand(CLI::App& app, int& exit_code);
void AddStatusCommand(CLI::App& app, int& exit_code);

}  // namespace cairn

#endif  // CAIRN_CLI_STORE_COMMAND_LINE_H_
