// Job locks: one job at a time per tier directory. A job holds an
// exclusive lock on `<tier root>/.lock` from cairn_init to cairn_finalize;
// the file names the holder ("host <name> pid <pid>"). The kernel releases
// the lock when the holder dies, so a killed job never leaves a stale one
// behind: the file may stay, but only a live process locks it.
//
// Per directory, not per (directory, checkpoint name): retention, parked
// slots, the wear ledger and the capacity are per directory, so two jobs
// in one directory disturb each other even under different names.
// Thread-safety: reentrant functions; a FileLock belongs to one owner.
#ifndef CAIRN_STORAGE_JOB_LOCK_H_
#define CAIRN_STORAGE_JOB_LOCK_H_

#include <memory>
#include <string>

#include "env/env.h"
#include "storage/tier.h"

namespace cairn {

// `<root>/.lock`.
std::string TierLockPath(const Tier& tier);

// Locks tier's directory for this process, without waiting; the lock file
// then reads "host <name> pid <pid>", followed by " (<purpose>)" if
// purpose is not empty (the `cairn` command says which). kIo naming the
// lock file and the holder's host and pid when another process holds it.
// Where the file system has no locks, null (and a warning is logged): the
// job runs unguarded rather than not at all. REQUIRES: the root exists.
Result<std::unique_ptr<FileLock>> LockTierDirectory(Tier& tier, const std::string& purpose);

}  // namespace cairn

#endif  // CAIRN_STORAGE_JOB_LOCK_H_
