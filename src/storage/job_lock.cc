#include "storage/job_lock.h"

#include <unistd.h>

#include "base/log.h"
#include "env/process_info.h"

namespace cairn {
namespace {

constexpr char kLockFileName[] = ".lock";

// purpose: "" for a job, else the command's ("cairn delete").
Status HeldByAnotherJob(const Tier& tier, const std::string& holder, const std::string& purpose) {
  std::string advice =
      purpose.empty()
          ? fmt::format("two jobs must not share tier directories; give this one its own "
                        "(CAIRN_DIR or tiers.{}.path) or wait for the other to finish",
                        tier.name())
          : purpose + " leaves the directories of a running job alone; run it once the job ended";
  return Error(Code::kIo, "tier '{}' at '{}' is in use by another job ({}; lock file '{}'): {}",
               tier.name(), tier.root(),
               holder.empty() ? "a process that is starting" : holder, TierLockPath(tier), advice);
}

}  // namespace

std::string TierLockPath(const Tier& tier) { return JoinPath(tier.root(), kLockFileName); }

Result<std::unique_ptr<FileLock>> LockTierDirectory(Tier& tier, const std::string& purpose) {
  std::string me = fmt::format("host {} pid {}", HostName(), ::getpid());
  if (!purpose.empty()) me += " (" + purpose + ")";
  auto attempt = tier.env()->TryLockFile(TierLockPath(tier), me);
  if (!attempt.ok()) {
    if (attempt.status().code() != Code::kUnsupported) return attempt.status();
    Log(LogLevel::kWarn, "tier '{}': not guarded against a second job: {}", tier.name(),
        attempt.status().message());
    return std::unique_ptr<FileLock>();
  }
  if (!attempt->lock) return HeldByAnotherJob(tier, attempt->holder, purpose);
  return std::move(attempt->lock);
}

}  // namespace cairn
