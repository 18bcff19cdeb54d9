// fti_config.h — FTI's configuration file (INI: [basic], [restart],
// [injection], [advanced]) translated to Cairn settings and to the values the
// FTI layer keeps itself (docs/compat.md, "FTI configuration").
#ifndef CAIRN_COMPAT_FTI_FTI_CONFIG_H_
#define CAIRN_COMPAT_FTI_FTI_CONFIG_H_

#include <array>
#include <string>

#include "compat/common/cairn_settings.h"

namespace cairn_compat {

struct FtiOptions {
  CairnSettings cairn{"FTI"};
  std::array<int, 5> interval_minutes{};  // ckpt_l1..ckpt_l4 at [1..4] (0: off)
  bool keep_last_checkpoint = false;      // keep_last_ckpt
  int group_size = 0;                     // group_size (> 1), nodes per level-3 group
  int fast_forward = 1;                   // [advanced] fast_forward: FTI_Snapshot's clock rate
  bool hdf5_output = false;               // ckpt_io = 5: the program asked for HDF5 files
  // Where ckpt_l2 / ckpt_l3 asked for a level ("" if they did not): the
  // cross-node redundancy requested (RequestLevelRedundancy).
  std::array<std::string, 5> redundancy_where{};
};

Result<FtiOptions> ReadFtiConfig(const std::string& path);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_FTI_FTI_CONFIG_H_
