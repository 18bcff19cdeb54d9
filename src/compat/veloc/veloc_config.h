// veloc_config.h — VeloC's configuration file translated to Cairn settings
// (docs/compat.md, "VeloC configuration").
#ifndef CAIRN_COMPAT_VELOC_VELOC_CONFIG_H_
#define CAIRN_COMPAT_VELOC_VELOC_CONFIG_H_

#include <string>

#include "compat/common/cairn_settings.h"

namespace cairn_compat {

// Reads VeloC's config file at `path` (scratch is required). `path_suffix`
// is appended to every tier path ("" for VELOC_Init, "/single-<id>" for
// VELOC_Init_single). Keys without a Cairn meaning become warnings.
Result<CairnSettings> TranslateVelocConfig(const std::string& path,
                                           const std::string& path_suffix);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_VELOC_VELOC_CONFIG_H_
