#include "env/env.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <limits>

namespace cairn {

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

Status ReadableFile::ReadPieces(uint64_t offset, uint64_t n, uint8_t* dst, uint64_t piece,
                                const PieceCheck& check) const {
  for (uint64_t pos = 0; pos < n; pos += piece) {
    uint64_t take = std::min(piece, n - pos);
    CAIRN_RETURN_IF_ERROR(ReadAt(offset + pos, dst + pos, take));
    CAIRN_RETURN_IF_ERROR(check(offset + pos, dst + pos, take));
  }
  return Status::Ok();
}

Result<std::string> Env::ReadFileToString(const std::string& path) {
  return ReadFileUpTo(path, std::numeric_limits<uint64_t>::max());
}

Result<std::string> Env::ReadFileUpTo(const std::string& path, uint64_t max_bytes) {
  CAIRN_ASSIGN_OR_RETURN(auto file, NewReadableFile(path));
  if (file->size() > max_bytes) {
    return Error(Code::kInvalidArgument, "'{}' is {} bytes long, more than the {} expected", path,
                 file->size(), max_bytes);
  }
  std::string out(file->size(), '\0');
  CAIRN_RETURN_IF_ERROR(file->ReadAt(0, out.data(), out.size()));
  return out;
}

Result<std::string> Env::ReadPseudoFile(const std::string& path, size_t max_bytes) {
  auto whole = ReadFileToString(path);
  if (whole.ok() && !whole->empty()) return whole;
  if (!whole.ok() && whole.status().code() != Code::kCorrupt) return whole.status();
  CAIRN_ASSIGN_OR_RETURN(auto file, NewReadableFile(path));
  std::string buf(max_bytes + 1, '\0');
  // Start from the reported size (or a page), doubling while reads succeed:
  // procfs files report 0 and may well be longer than a page.
  uint64_t lo = 0;  // a length that reads
  uint64_t hi = std::min<uint64_t>(std::max<uint64_t>(file->size(), 4096), max_bytes) + 1;
  while (file->ReadAt(0, buf.data(), static_cast<size_t>(hi)).ok()) {
    if (hi > max_bytes) {
      return Error(Code::kUnsupported, "'{}' is longer than {} bytes", path, max_bytes);
    }
    lo = hi;
    hi = std::min<uint64_t>(hi * 2, max_bytes + 1);
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    Status s = file->ReadAt(0, buf.data(), static_cast<size_t>(mid));
    if (s.ok()) {
      lo = mid;
    } else if (s.code() == Code::kCorrupt) {
      hi = mid;
    } else {
      return s;
    }
  }
  CAIRN_RETURN_IF_ERROR(file->ReadAt(0, buf.data(), static_cast<size_t>(lo)));
  buf.resize(static_cast<size_t>(lo));
  return buf;
}

Status Env::WriteFileAtomic(const std::string& path, const void* data, size_t n, bool sync) {
  // The temporary name carries the pid and a per-process count, so no two
  // writers share one. It must be new (O_EXCL): one left by an earlier
  // process of the same pid is ours to delete first (unlink removes a link,
  // never its target).
  static std::atomic<uint64_t> next_tmp{0};
  std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), next_tmp.fetch_add(1));
  WriteOptions options;
  options.create_new = true;
  CAIRN_RETURN_IF_ERROR(DeleteFile(tmp));
  {
    CAIRN_ASSIGN_OR_RETURN(auto file, NewWritableFile(tmp, options));
    Status s = file->Append(data, n);
    if (s.ok() && sync) s = file->Sync();
    if (s.ok()) s = file->Close();
    if (!s.ok()) {
      (void)DeleteFile(tmp);
      return s;
    }
  }
  Status s = RenameFile(tmp, path);
  if (!s.ok()) {
    (void)DeleteFile(tmp);
    return s;
  }
  return sync ? SyncDir(DirName(path)) : Status::Ok();
}

namespace {
// The in-memory env's lock: it serves one process, so nobody else can hold it.
class UncontendedLock final : public FileLock {
 public:
  UncontendedLock(Env* env, std::string path) : env_(env), path_(std::move(path)) {}
  const std::string& path() const override { return path_; }
  Status ReleaseAndRemove() override { return env_->DeleteFile(path_); }

 private:
  Env* env_;
  std::string path_;
};
}  // namespace

Result<LockAttempt> Env::TryLockFile(const std::string& path, const std::string& holder) {
  CAIRN_RETURN_IF_ERROR(WriteFileAtomic(path, holder.data(), holder.size(), /*sync=*/false));
  LockAttempt attempt;
  attempt.lock = std::make_unique<UncontendedLock>(this, path);
  return attempt;
}

Result<std::string> Env::AbsolutePath(const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = "/" / p;
  std::string normal = p.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

Status Env::DeleteRecursive(const std::string& path) {
  auto entries = ListDir(path);
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return Status::Ok();
    // Not a directory: a plain file.
    return FileExists(path) ? DeleteFile(path) : Status::Ok();
  }
  for (const auto& entry : *entries) {
    std::string child = JoinPath(path, entry.name);
    CAIRN_RETURN_IF_ERROR(entry.is_dir ? DeleteRecursive(child) : DeleteFile(child));
  }
  return DeleteDir(path);
}

}  // namespace cairn
