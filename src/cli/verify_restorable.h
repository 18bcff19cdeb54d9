// cairn verify's restorability check: a version is restorable when every
// rank of the run that wrote it has a usable copy on some tier (one that
// checked clean, or that its ECC sidecar corrects), or a part its
// redundancy group rebuilds, and every older version its pages refer to
// ([dedup] incremental modes) is restorable too. Copies can all check clean while a version is
// not restorable: a node lost with its memory and ssd tiers takes its
// ranks' copies away without leaving a damaged file behind.
// Thread-safety: not thread-safe.
#ifndef CAIRN_CLI_VERIFY_RESTORABLE_H_
#define CAIRN_CLI_VERIFY_RESTORABLE_H_

#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli/inventory.h"

namespace cairn {

// One rank of one run of a checkpoint version: (name, version, run id, rank).
using RankOfRun = std::tuple<std::string, int64_t, uint64_t, int>;

struct RestorableTotals {
  int versions_not_restorable = 0;
  // Checkpoint names with complete copies of which no version is
  // restorable: a restart starts over.
  std::vector<std::string> names_without_version;
};

// Prints one line (or JSON object) per version some rank of which has no
// usable copy and no rebuildable part, and one per name left without a
// restorable version. `unusable`: copies verify found damaged beyond
// repair; `rebuildable`: ranks whose lost part their group rebuilds.
RestorableTotals CheckRestorable(const std::vector<CopyInfo>& copies,
                                 const std::set<const CopyInfo*>& unusable,
                                 const std::set<RankOfRun>& rebuildable, bool json);

}  // namespace cairn

#endif  // CAIRN_CLI_VERIFY_RESTORABLE_H_
