#include "env/fault_env.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace cairn {
namespace {

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultEnv* env, std::unique_ptr<WritableFile> base)
      : env_(env), base_(std::move(base)) {}
  Status Append(const void* data, size_t n) override {
    CAIRN_RETURN_IF_ERROR(env_->BeforeMutation("write", path()));
    CAIRN_RETURN_IF_ERROR(base_->Append(data, n));
    env_->RecordAppend(path(), n);
    return Status::Ok();
  }
  Status Sync() override {
    CAIRN_RETURN_IF_ERROR(env_->BeforeMutation("fsync", path()));
    CAIRN_RETURN_IF_ERROR(base_->Sync());
    env_->RecordSync(path());
    return Status::Ok();
  }
  Status Close() override { return base_->Close(); }
  const std::string& path() const override { return base_->path(); }

 private:
  FaultEnv* env_;
  std::unique_ptr<WritableFile> base_;
};

}  // namespace

void FaultEnv::FailAt(int n, Code code, bool once) {
  MutexLock lock(&mu_);
  fail_at_ = n;
  fail_code_ = code;
  fail_once_ = once;
}

void FaultEnv::KillAt(int n) {
  MutexLock lock(&mu_);
  kill_at_ = n;
}

void FaultEnv::ClearFaults() {
  MutexLock lock(&mu_);
  fail_at_ = 0;
  kill_at_ = 0;
}

int FaultEnv::operations() const {
  MutexLock lock(&mu_);
  return ops_;
}

Status FaultEnv::BeforeMutation(const std::string& what, const std::string& path) {
  MutexLock lock(&mu_);
  ++ops_;
  if (kill_at_ != 0 && ops_ == kill_at_) ::kill(::getpid(), SIGKILL);
  bool fail = fail_at_ != 0 && (fail_once_ ? ops_ == fail_at_ : ops_ >= fail_at_);
  if (!fail) return Status::Ok();
  return ErrnoError(fail_code_ == Code::kNoSpace ? ENOSPC : EIO, what + " (injected)", path);
}

void FaultEnv::RecordAppend(const std::string& path, uint64_t n) {
  MutexLock lock(&mu_);
  files_[path].size += n;
}

void FaultEnv::RecordSync(const std::string& path) {
  MutexLock lock(&mu_);
  files_[path].synced = files_[path].size;
}

Result<std::unique_ptr<WritableFile>> FaultEnv::NewWritableFile(const std::string& path,
                                                                const WriteOptions& options) {
  CAIRN_RETURN_IF_ERROR(BeforeMutation("create", path));
  CAIRN_ASSIGN_OR_RETURN(auto base, target()->NewWritableFile(path, options));
  {
    MutexLock lock(&mu_);
    files_[path] = FileState{};
    unsynced_names_.insert(path);
  }
  return std::unique_ptr<WritableFile>(new FaultWritableFile(this, std::move(base)));
}

Result<std::unique_ptr<MappedFile>> FaultEnv::MapFile(const std::string& path, uint64_t size,
                                                      bool writable) {
  if (writable) CAIRN_RETURN_IF_ERROR(BeforeMutation("map", path));
  return target()->MapFile(path, size, writable);
}

Status FaultEnv::RenameFile(const std::string& from, const std::string& to) {
  CAIRN_RETURN_IF_ERROR(BeforeMutation("rename", from));
  CAIRN_RETURN_IF_ERROR(target()->RenameFile(from, to));
  MutexLock lock(&mu_);
  auto it = files_.find(from);
  if (it != files_.end()) {
    files_[to] = it->second;
    files_.erase(it);
  }
  unsynced_names_.erase(from);
  unsynced_names_.insert(to);
  return Status::Ok();
}

Status FaultEnv::DeleteFile(const std::string& path) {
  CAIRN_RETURN_IF_ERROR(BeforeMutation("delete", path));
  CAIRN_RETURN_IF_ERROR(target()->DeleteFile(path));
  MutexLock lock(&mu_);
  files_.erase(path);
  unsynced_names_.erase(path);
  return Status::Ok();
}

Status FaultEnv::CreateDirs(const std::string& path) {
  CAIRN_RETURN_IF_ERROR(BeforeMutation("mkdir", path));
  return target()->CreateDirs(path);
}

Status FaultEnv::SyncDir(const std::string& path) {
  CAIRN_RETURN_IF_ERROR(BeforeMutation("fsync directory", path));
  CAIRN_RETURN_IF_ERROR(target()->SyncDir(path));
  MutexLock lock(&mu_);
  for (auto it = unsynced_names_.begin(); it != unsynced_names_.end();) {
    it = DirName(*it) == path ? unsynced_names_.erase(it) : std::next(it);
  }
  return Status::Ok();
}

Status FaultEnv::AppendToFile(const std::string& path, const void* data, size_t n) {
  CAIRN_RETURN_IF_ERROR(BeforeMutation("append", path));
  auto old_size = target()->FileSize(path);
  CAIRN_RETURN_IF_ERROR(target()->AppendToFile(path, data, n));
  MutexLock lock(&mu_);
  auto [it, is_new] = files_.try_emplace(path);
  if (is_new) {
    // What was there before this env saw the file counts as durable; the
    // name itself is not if this append created it.
    it->second.size = it->second.synced = old_size.ok() ? *old_size : 0;
    if (!old_size.ok()) unsynced_names_.insert(path);
  }
  it->second.size += n;
  return Status::Ok();
}

Status FaultEnv::DropUnsyncedData() {
  std::map<std::string, FileState> files;
  std::set<std::string> names;
  {
    MutexLock lock(&mu_);
    files.swap(files_);
    names.swap(unsynced_names_);
  }
  for (const auto& path : names) {
    CAIRN_RETURN_IF_ERROR(target()->DeleteFile(path));
    files.erase(path);
  }
  for (const auto& [path, state] : files) {
    if (state.synced == state.size || !target()->FileExists(path)) continue;
    std::string kept(state.synced, '\0');
    {
      CAIRN_ASSIGN_OR_RETURN(auto in, target()->NewReadableFile(path));
      CAIRN_RETURN_IF_ERROR(in->ReadAt(0, kept.data(), kept.size()));
    }
    CAIRN_ASSIGN_OR_RETURN(auto out, target()->NewWritableFile(path, WriteOptions{}));
    CAIRN_RETURN_IF_ERROR(out->Append(kept.data(), kept.size()));
    CAIRN_RETURN_IF_ERROR(out->Sync());
  }
  return Status::Ok();
}

}  // namespace cairn
