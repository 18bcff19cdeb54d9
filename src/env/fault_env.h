// FaultEnv wraps another Env and makes storage fail the way real storage
// does, so that the commit protocol can be tested (after LevelDB's
// fault_injection_test): the Nth mutating call fails with EIO or ENOSPC, the
// process is SIGKILLed at the Nth call, or a simulated power loss drops every
// byte and every directory entry that was not made durable by Sync/SyncDir.
// Thread-safety: all methods are thread-safe.
#ifndef CAIRN_ENV_FAULT_ENV_H_
#define CAIRN_ENV_FAULT_ENV_H_

#include <map>
#include <set>
#include <string>

#include "base/mutex.h"
#include "env/env.h"

namespace cairn {

class FaultEnv final : public EnvWrapper {
 public:
  // target must outlive this.
  explicit FaultEnv(Env* target) : EnvWrapper(target) {}

  // Mutating calls (create, append, sync, rename, delete, mkdir, writable
  // map) are numbered from 1 as they happen. From call n on (only call n if
  // `once`), each fails with `code` (kIo: EIO, kNoSpace: ENOSPC).
  void FailAt(int n, Code code, bool once = false);
  // Call n sends SIGKILL to this process before it takes effect.
  void KillAt(int n);
  void ClearFaults();
  int operations() const;

  // Power loss: truncates every file written through this env to its last
  // synced length, and deletes names created or renamed into a directory
  // that was not synced afterwards.
  Status DropUnsyncedData();

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        const WriteOptions& options) override;
  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, uint64_t size,
                                              bool writable) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status DeleteFile(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status SyncDir(const std::string& path) override;
  Status AppendToFile(const std::string& path, const void* data, size_t n) override;

  // Used by the files this env hands out.
  Status BeforeMutation(const std::string& what, const std::string& path);
  void RecordAppend(const std::string& path, uint64_t n);
  void RecordSync(const std::string& path);

 private:
  struct FileState {
    uint64_t size = 0;
    uint64_t synced = 0;
  };

  mutable Mutex mu_;
  int ops_ GUARDED_BY(mu_) = 0;
  int fail_at_ GUARDED_BY(mu_) = 0;  // 0: never
  bool fail_once_ GUARDED_BY(mu_) = false;
  Code fail_code_ GUARDED_BY(mu_) = Code::kIo;
  int kill_at_ GUARDED_BY(mu_) = 0;
  std::map<std::string, FileState> files_ GUARDED_BY(mu_);
  std::set<std::string> unsynced_names_ GUARDED_BY(mu_);
};

}  // namespace cairn

#endif  // CAIRN_ENV_FAULT_ENV_H_
