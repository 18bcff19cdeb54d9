// cairn: the command-line tool over stored checkpoints and Cairn's models.
#include <CLI/CLI.hpp>

#include "cairn/version.h"
#include "cli/faultsim_command.h"
#include "cli/model_command.h"
#include "cli/profile_command.h"
#include "cli/store_command_line.h"

int main(int argc, char** argv) {
  CLI::App app{"cairn " CAIRN_VERSION_STRING ": multi-level checkpoint/restart for MPI applications"};
  app.require_subcommand(1);
  app.set_version_flag("--version", CAIRN_VERSION_STRING);
  int exit_code = 0;
  cairn::AddListCommand(app, exit_code);
  cairn::AddInspectCommand(app, exit_code);
  cairn::AddVerifyCommand(app, exit_code);
  cairn::AddDeleteCommand(app, exit_code);
  cairn::AddPruneCommand(app, exit_code);
  cairn::AddConfigCommand(app, exit_code);
  cairn::AddStatusCommand(app, exit_code);
  cairn::AddModelCommand(app, exit_code);
  cairn::AddFaultsimCommand(app, exit_code);
  cairn::AddProfileCommand(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
