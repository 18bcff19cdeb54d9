// The `cairn` subcommands that look at stored checkpoints (list, inspect,
// verify), remove them (delete, prune), look at the SSD's wear and the
// placement history (status) and at the configuration (config): what each
// does once its command line is parsed (store_command_line.h parses it).
// Each returns the process's exit status (cli/output.h).
#ifndef CAIRN_CLI_STORE_COMMANDS_H_
#define CAIRN_CLI_STORE_COMMANDS_H_

#include <cstdint>
#include <string>

namespace cairn {

// config_path "": $CAIRN_CONFIG, else the built-in defaults.
int RunList(const std::string& config_path, bool json);
int RunInspect(const std::string& config_path, const std::string& name, int64_t version,
               bool json);
int RunVerify(const std::string& config_path, bool json);
int RunConfig(const std::string& path, bool keys, bool markdown, bool json);
int RunStatus(const std::string& config_path, bool json, const std::string& plot);

// delete NAME and prune --keep N [NAME] (cli/removal.h has the rules).
struct RemovalFlags {
  std::string config;
  std::string name;  // prune: "" for every name
  int keep = 0;      // prune only
  bool dry_run = false;
  bool json = false;
};
int RunDelete(const RemovalFlags& flags);
int RunPrune(const RemovalFlags& flags);

}  // namespace cairn

#endif  // CAIRN_CLI_STORE_COMMANDS_H_
