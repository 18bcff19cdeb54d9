// scr_config.h — SCR's configuration ($SCR_CONF_FILE, then SCR_* environment
// variables, which win) translated to Cairn settings and to the few values
// the SCR layer itself keeps (docs/compat.md, "SCR configuration").
#ifndef CAIRN_COMPAT_SCR_SCR_CONFIG_H_
#define CAIRN_COMPAT_SCR_SCR_CONFIG_H_

#include <string>

#include "compat/common/cairn_settings.h"

namespace cairn_compat {

struct ScrOptions {
  CairnSettings cairn{"SCR"};
  std::string prefix;              // SCR_PREFIX, absolute (default: working directory)
  int checkpoint_interval = 1;     // SCR_CHECKPOINT_INTERVAL: Need_checkpoint calls
  int checkpoint_seconds = 0;      // SCR_CHECKPOINT_SECONDS (0: off)
};

// Reads $SCR_CONF_FILE (if set) and the SCR_* environment.
Result<ScrOptions> ReadScrOptions();

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_SCR_SCR_CONFIG_H_
