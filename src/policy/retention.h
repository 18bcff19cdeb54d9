// Retention: which of a rank's copies on one tier may be deleted. Pure
// decision logic, so that the rule is tested on its own.
// Thread-safety: pure function.
#ifndef CAIRN_POLICY_RETENTION_H_
#define CAIRN_POLICY_RETENTION_H_

#include <cstdint>
#include <vector>

namespace cairn {

// One of this rank's copies on a tier. Copies that a job of another size
// wrote are not this job's to count or delete: callers leave them out.
struct StoredVersion {
  int64_t version = 0;
  bool complete = false;  // this rank's manifest is there, and this job could restart from it
  bool pinned = false;    // being drained from or into, or just committed
  // Complete, but from an earlier run's timeline that this run has left:
  // the run rolled back (or started afresh) and committed a version at or
  // below this one. Restart must never go back to it.
  bool superseded = false;
  // Older versions this one's pages refer to (deduplication: its manifest's
  // references); they stay while this one does.
  std::vector<int64_t> references;
};

// The rule, given `everywhere`, the versions every rank of the job holds
// complete on this tier (the ones a restart could use): never delete a
// pinned version; delete superseded versions; keep the `keep` newest
// versions of `everywhere`; never delete a version newer than the newest of
// `everywhere` (it may still be arriving on other ranks); delete the rest
// (older versions, incomplete leftovers, and copies that other ranks lack,
// which no restart can use). An empty `everywhere` deletes nothing but
// superseded versions. Whatever the rule deletes, a version that a version
// staying (and not superseded) refers to stays too.
std::vector<int64_t> VersionsToDelete(const std::vector<StoredVersion>& versions, int keep,
                                      const std::vector<int64_t>& everywhere);

}  // namespace cairn

#endif  // CAIRN_POLICY_RETENTION_H_
