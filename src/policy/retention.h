// Retention: which of a rank's copies on one tier may be deleted. Pure
// decision logic, so that the rule is tested on its own.
// Thread-safety: pure function.
#ifndef CAIRN_POLICY_RETENTION_H_
#define CAIRN_POLICY_RETENTION_H_

#include <cstdint>
#include <vector>

namespace cairn {

struct StoredVersion {
  int64_t version = 0;
  bool complete = false;  // this rank's manifest is there
  bool pinned = false;    // being read (drained) right now
};

// The rule: keep the `keep` newest complete versions; never delete a pinned
// version; and never delete `globally_complete` (the newest version that
// every rank holds complete on this tier) or anything newer, so that the
// newest recoverable version is never lost for want of a copy on another
// rank. globally_complete < 0 (none yet) deletes nothing. Incomplete copies
// older than globally_complete are leftovers and are deleted.
std::vector<int64_t> VersionsToDelete(const std::vector<StoredVersion>& versions, int keep,
                                      int64_t globally_complete);

}  // namespace cairn

#endif  // CAIRN_POLICY_RETENTION_H_
