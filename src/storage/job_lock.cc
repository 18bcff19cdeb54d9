#include "storage/job_lock.h"

#include <unistd.h>

#include "base/log.h"
#include "env/process_info.h"

namespace cairn {
namespace {

constexpr char kLockFileName[] = ".lock";

Status HeldByAnotherJob(const Tier& tier, const std::string& holder) {
  return Error(Code::kIo,
               "tier '{}' at '{}' is in use by another job ({}; lock file '{}'): two jobs must "
               "not share tier directories; give this one its own (CAIRN_DIR or tiers.{}.path) "
               "or wait for the other to finish",
               tier.name(), tier.root(),
               holder.empty() ? "a process that is starting" : holder, TierLockPath(tier),
               tier.name());
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
  if (!attempt->lock) return HeldByAnotherJob(tier, attempt->holder);
  return std::move(attempt->lock);
}

}  // namespace cairn
