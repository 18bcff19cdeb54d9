// scr_config.h — SCR's configuration ($SCR_CONF_FILE, then SCR_* environment
// variables, which win) translated to Cairn settings and to the few values
// the SCR layer itself keeps (docs/compat.md, "SCR configuration").
#ifndef CAIRN_COMPAT_SCR_SCR_CONFIG_H_
#define CAIRN_COMPAT_SCR_SCR_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/common/cairn_settings.h"

namespace cairn_compat {

struct ScrOptions {
  CairnSettings cairn{"SCR"};
  std::string prefix;              // SCR_PREFIX, absolute (default: working directory)
  int checkpoint_interval = 1;     // SCR_CHECKPOINT_INTERVAL: Need_checkpoint calls
  int checkpoint_seconds = 0;      // SCR_CHECKPOINT_SECONDS (0: off)
};

// A parameter set with SCR_Config: "KEY=VALUE SUB=V ..." as value and the
// further sub-parameters.
struct ScrParam {
  std::string value;
  std::vector<std::string> extra;
};
using ScrAppParams = std::map<std::string, ScrParam>;  // upper-case key

// Reads the SCR_Config parameters `app`, $SCR_CONF_FILE (if set) and the
// SCR_* environment; a later one wins, as in SCR (environment, then user
// file, then SCR_Config).
Result<ScrOptions> ReadScrOptions(const ScrAppParams& app);

// The value SCR would use for parameter `key` (upper case): environment,
// $SCR_CONF_FILE, then `app`; nullopt when none sets it.
Result<std::optional<std::string>> LookupScrParam(const std::string& key, const ScrAppParams& app);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_SCR_SCR_CONFIG_H_
