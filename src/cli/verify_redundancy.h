// cairn verify's redundancy check: for every version whose copies claim
// cross-node parity, each group's parity is encoded again from its members'
// data and compared (redundancy/group_check.h), and a member whose part is
// missing or damaged is named with whether its group can rebuild it.
// Thread-safety: not thread-safe.
#ifndef CAIRN_CLI_VERIFY_REDUNDANCY_H_
#define CAIRN_CLI_VERIFY_REDUNDANCY_H_

#include <set>
#include <vector>

#include "cli/inventory.h"
#include "cli/verify_restorable.h"

namespace cairn {

struct RedundancyTotals {
  int groups_checked = 0;
  int parity_wrong = 0;     // members whose parity differs from the data
  int unrebuildable = 0;    // lost parts no group can rebuild
  int rebuildable = 0;      // lost parts their group can rebuild
  std::set<RankOfRun> rebuildable_ranks;  // whose parts those are
};

// Checks every protected run of `copies` (node-local tiers) and prints one
// line (or JSON object) per finding.
RedundancyTotals VerifyRedundancy(const std::vector<CopyInfo>& copies, bool json);

}  // namespace cairn

#endif  // CAIRN_CLI_VERIFY_REDUNDANCY_H_
