// An in-memory file system: fast, private, and the base that FaultEnv tests
// run over. Paths are plain strings; directories are tracked explicitly.
#include <cstring>
#include <map>
#include <set>

#include "base/mutex.h"
#include "env/env.h"

namespace cairn {
namespace {

using Contents = std::shared_ptr<std::string>;

struct MemFs {
  Mutex mu;
  std::map<std::string, Contents> files GUARDED_BY(mu);
  std::set<std::string> dirs GUARDED_BY(mu);
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(MemFs* fs, Contents contents, std::string path)
      : fs_(fs), contents_(std::move(contents)), path_(std::move(path)) {}
  Status Append(const void* data, size_t n) override {
    MutexLock lock(&fs_->mu);
    contents_->append(static_cast<const char*>(data), n);
    return Status::Ok();
  }
  Status Sync() override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  const std::string& path() const override { return path_; }

 private:
  MemFs* fs_;
  Contents contents_;
  std::string path_;
};

class MemReadableFile final : public ReadableFile {
 public:
  MemReadableFile(Contents contents, std::string path)
      : contents_(std::move(contents)), path_(std::move(path)) {}
  Status ReadAt(uint64_t offset, void* dst, size_t n) const override {
    if (offset + n > contents_->size()) {
      return Error(Code::kCorrupt, "'{}' is truncated at byte {}", path_, contents_->size());
    }
    std::memcpy(dst, contents_->data() + offset, n);
    return Status::Ok();
  }
  uint64_t size() const override { return contents_->size(); }
  const std::string& path() const override { return path_; }

 private:
  Contents contents_;
  std::string path_;
};

// The mapping is the file's own buffer, which keeps the capacity of the
// mapped size so that SetLength moves no byte.
class MemMappedFile final : public MappedFile {
 public:
  explicit MemMappedFile(Contents contents)
      : contents_(std::move(contents)), size_(contents_->size()) {}
  uint8_t* data() override { return reinterpret_cast<uint8_t*>(contents_->data()); }
  uint64_t size() const override { return size_; }
  Status Sync() override { return Status::Ok(); }
  Status SetLength(uint64_t length) override {
    if (length > size_) {
      return Error(Code::kInternal, "a mapping of {} bytes cannot hold a file of {}", size_, length);
    }
    contents_->resize(length);  // within the capacity: data() stays
    return Status::Ok();
  }

 private:
  Contents contents_;
  uint64_t size_;
};

class MemEnvImpl final : public Env {
 public:
  MemEnvImpl() {
    MutexLock lock(&fs_.mu);
    fs_.dirs.insert("/");
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        const WriteOptions&) override {
    MutexLock lock(&fs_.mu);
    CAIRN_RETURN_IF_ERROR(CheckParentLocked(path));
    auto contents = std::make_shared<std::string>();
    fs_.files[path] = contents;
    return std::unique_ptr<WritableFile>(new MemWritableFile(&fs_, contents, path));
  }

  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    auto it = fs_.files.find(path);
    if (it == fs_.files.end()) return Error(Code::kNotFound, "'{}' does not exist", path);
    // A snapshot: later writers replace the shared string, not this copy.
    return std::unique_ptr<ReadableFile>(
        new MemReadableFile(std::make_shared<std::string>(*it->second), path));
  }

  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, uint64_t size,
                                              bool writable) override {
    MutexLock lock(&fs_.mu);
    auto it = fs_.files.find(path);
    if (it == fs_.files.end()) {
      if (!writable) return Error(Code::kNotFound, "'{}' does not exist", path);
      CAIRN_RETURN_IF_ERROR(CheckParentLocked(path));
      it = fs_.files.emplace(path, std::make_shared<std::string>()).first;
    }
    if (writable) it->second->resize(size);
    return std::unique_ptr<MappedFile>(new MemMappedFile(it->second));
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    MutexLock lock(&fs_.mu);
    auto it = fs_.files.find(from);
    if (it == fs_.files.end()) return Error(Code::kNotFound, "rename: '{}' does not exist", from);
    CAIRN_RETURN_IF_ERROR(CheckParentLocked(to));
    fs_.files[to] = it->second;
    fs_.files.erase(from);
    return Status::Ok();
  }

  Status DeleteFile(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    fs_.files.erase(path);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    std::string p = path;
    while (!p.empty() && p != "/" && p != ".") {
      if (fs_.files.count(p)) return Error(Code::kIo, "'{}' exists and is not a directory", p);
      fs_.dirs.insert(p);
      p = DirName(p);
    }
    return Status::Ok();
  }

  Status DeleteDir(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    fs_.dirs.erase(path);
    return Status::Ok();
  }

  Status SyncDir(const std::string&) override { return Status::Ok(); }

  Result<std::vector<DirEntry>> ListDir(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    if (!fs_.dirs.count(path)) return Error(Code::kNotFound, "'{}' does not exist", path);
    std::vector<DirEntry> out;
    std::string prefix = path == "/" ? "/" : path + "/";
    for (const auto& [name, c] : fs_.files) {
      if (IsChild(name, prefix)) out.push_back({name.substr(prefix.size()), false});
    }
    for (const auto& name : fs_.dirs) {
      if (IsChild(name, prefix)) out.push_back({name.substr(prefix.size()), true});
    }
    return out;
  }

  bool FileExists(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    return fs_.files.count(path) > 0 || fs_.dirs.count(path) > 0;
  }

  Result<uint64_t> FileSize(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    auto it = fs_.files.find(path);
    if (it == fs_.files.end()) return Error(Code::kNotFound, "'{}' does not exist", path);
    return static_cast<uint64_t>(it->second->size());
  }

  Result<uint64_t> FreeSpace(const std::string&) override { return uint64_t{1} << 40; }

  Status AppendToFile(const std::string& path, const void* data, size_t n) override {
    MutexLock lock(&fs_.mu);
    auto it = fs_.files.find(path);
    if (it == fs_.files.end()) {
      CAIRN_RETURN_IF_ERROR(CheckParentLocked(path));
      it = fs_.files.emplace(path, std::make_shared<std::string>()).first;
    }
    it->second->append(static_cast<const char*>(data), n);
    return Status::Ok();
  }

  // No page cache: the contents are the memory.
  Status EvictFromCache(const std::string& path) override {
    MutexLock lock(&fs_.mu);
    if (!fs_.files.count(path)) return Error(Code::kNotFound, "'{}' does not exist", path);
    return Status::Ok();
  }

  // Only files are in memory: threads are the process's own.
  Result<std::unique_ptr<Thread>> StartThread(const ThreadOptions& options,
                                              std::function<void()> body) override {
    return PosixEnv()->StartThread(options, std::move(body));
  }

 private:
  static bool IsChild(const std::string& name, const std::string& prefix) {
    return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
           name.find('/', prefix.size()) == std::string::npos;
  }
  Status CheckParentLocked(const std::string& path) REQUIRES(fs_.mu) {
    std::string parent = DirName(path);
    if (parent == "." || parent == "/" || fs_.dirs.count(parent)) return Status::Ok();
    return Error(Code::kNotFound, "directory '{}' does not exist", parent);
  }

  MemFs fs_;
};

}  // namespace

std::unique_ptr<Env> NewMemEnv() { return std::make_unique<MemEnvImpl>(); }

std::unique_ptr<ReadableFile> NewBytesReadableFile(const std::vector<uint8_t>& bytes,
                                                   std::string path) {
  return std::make_unique<MemReadableFile>(
      std::make_shared<std::string>(bytes.begin(), bytes.end()), std::move(path));
}

}  // namespace cairn
