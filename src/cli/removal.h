// Removal of stored checkpoints for `cairn delete` and `cairn prune`: which
// version directories go (PlanPrune, a pure function of the inventory, so
// that the rule is tested on its own), finding them on every tier and node,
// and removing them.
//
// Offline only: these work on tiers that no job is using. A running job's
// engine keeps its own retention (policy/retention.h).
// Thread-safety: not thread-safe.
#ifndef CAIRN_CLI_REMOVAL_H_
#define CAIRN_CLI_REMOVAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/config.h"
#include "cli/inventory.h"
#include "env/env.h"

namespace cairn {

// Versions from which a restart can recover every rank: for some run of a
// job of n ranks (Manifest::run_id), each rank 0..n-1 has a complete copy
// that run wrote on some tier (restart takes each rank's copy from any
// tier, but all from one run).
// REQUIRES: every copy is of the same checkpoint name.
std::set<int64_t> RecoverableVersions(const std::vector<CopyInfo>& copies_of_one_name);

// What `cairn prune --keep N` does to one checkpoint name.
struct PruneDecision {
  std::vector<int64_t> keep;    // the newest N recoverable versions, newest first
  std::set<int64_t> remove;     // every other version older than the newest kept one
};

// For each name (only `only_name` if it is not empty): keep the newest
// `keep` recoverable versions with all their copies, and remove every
// other version older than the newest kept one: older recoverable
// versions and leftovers of interrupted checkpoints. Versions newer than
// the newest recoverable one are left alone (they may be repairable, and
// they hold the only trace of what went wrong), and so is every version of
// a name with no recoverable version. A version is removed on every tier
// at once, so no copy that a kept version needs is ever removed.
// REQUIRES: keep >= 1.
std::map<std::string, PruneDecision> PlanPrune(const std::vector<CopyInfo>& copies, int keep,
                                               const std::string& only_name);

// One directory to remove: a version directory, or a tier's parked slots.
struct RemovalTarget {
  TierKind tier = TierKind::kMemory;
  std::string node;
  std::string root;     // the tier's directory of this node
  std::string name;     // empty for parked slots
  int64_t version = 0;  // for a version directory
  std::string dir;
  uint64_t bytes = 0;   // of the files in dir when it was found
  int files = 0;
};

// Every directory of `name` on every enabled tier and node of config whose
// version `select` accepts. with_slots: also the parked slots of each tier
// where no other checkpoint name is left (slots only speed up later
// checkpoints under that tier directory; a tier without checkpoints keeps
// its memory for nothing, which on /dev/shm is RAM).
Result<std::vector<RemovalTarget>> FindRemovalTargets(Env* env, const Config& config,
                                                      const std::string& name,
                                                      const std::function<bool(int64_t)>& select,
                                                      bool with_slots);

// The job locks (storage/job_lock.h) of the tier directories a command
// works on, released and their files removed when this goes.
class HeldTierLocks {
 public:
  HeldTierLocks() = default;
  HeldTierLocks(HeldTierLocks&&) = default;
  HeldTierLocks& operator=(HeldTierLocks&&) = delete;
  ~HeldTierLocks();
  void Add(std::unique_ptr<FileLock> lock) { locks_.push_back(std::move(lock)); }

 private:
  std::vector<std::unique_ptr<FileLock>> locks_;
};

// The job locks of every existing directory of every enabled tier and node
// of config, taken for `command` so that no job starts there while it
// removes. kIo naming the lock file and the host and pid of the job that
// holds one: a running job's directories are refused, never touched.
Result<HeldTierLocks> LockAllTierDirectories(Env* env, const Config& config,
                                             const std::string& command);

// Removes target's directory (a version: manifests first, see
// RemoveVersion) and then the name's directory if it is left empty.
Status RemoveTarget(Env* env, const RemovalTarget& target);

}  // namespace cairn

#endif  // CAIRN_CLI_REMOVAL_H_
