// The real file system. Only this file (and mem_env/fault_env, which wrap
// Env) performs file system calls for the library.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "env/env.h"

namespace cairn {
namespace {

constexpr size_t kDirectAlign = 4096;
constexpr size_t kDirectBuffer = 4 << 20;

Status Errno(const std::string& what, const std::string& path) {
  return ErrnoError(errno, what, path);
}

// Every open() here passes O_NOFOLLOW: a symlink planted where Cairn
// writes or reads a file makes the open fail (ELOOP) instead of reaching
// whatever the link points to. This names that case.
Status OpenError(const std::string& what, const std::string& path) {
  if (errno == ELOOP) {
    return Error(Code::kIo, "{} '{}': it is a symbolic link, and Cairn never opens a file "
                 "through one", what, path);
  }
  if (errno == ENOENT) return Error(Code::kNotFound, "'{}' does not exist", path);
  return Errno(what, path);
}

Status WriteAll(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

// "a directory", "a FIFO", ...: what a path that should be a file is.
const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of another kind";
}

// "'alice' (uid 1000)", or "uid 1234" for a user without a name.
std::string OwnerName(uid_t uid) {
  std::vector<char> buffer(16384);
  struct passwd entry;
  struct passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return fmt::format("'{}' (uid {})", found->pw_name, uid);
  }
  return fmt::format("uid {}", uid);
}

// The ownership rule for what Cairn creates or reuses (docs/flows.md): the
// path itself (not a symlink's target) is of the wanted kind, belongs to
// this user, and grants nothing to group or others; a file must be 0600
// exactly. Someone else's directory is never chmod-ed or used: in a
// world-writable place such as /dev/shm another user may have made it first.
Status CheckPrivate(const std::string& path, bool want_dir) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return OpenError("stat", path);
  const char* kind = want_dir ? "directory" : "file";
  bool right_kind = want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
  if (!right_kind) {
    return Error(Code::kIo, "'{}' should be a {} private to the user but is {} (owner {})", path,
                 kind, FileTypeName(st.st_mode), OwnerName(st.st_uid));
  }
  const unsigned mode = st.st_mode & 07777;
  if (st.st_uid != ::geteuid()) {
    return Error(Code::kIo,
                 "{} '{}' belongs to {} (mode {:04o}), not to this user ({}): Cairn uses only "
                 "directories and files of its own; remove it or choose another tier path",
                 kind, path, OwnerName(st.st_uid), mode, OwnerName(::geteuid()));
  }
  bool too_open = want_dir ? (mode & 077) != 0 : mode != 0600;
  if (too_open) {
    return Error(Code::kIo,
                 "{} '{}' (owner {}) has mode {:04o}, which lets others in; Cairn keeps "
                 "checkpoints private ({}): chmod {} '{}' if it is yours to keep",
                 kind, path, OwnerName(st.st_uid), mode, want_dir ? "0700" : "0600",
                 want_dir ? "700" : "600", path);
  }
  return Status::Ok();
}

// Opened with open(2) by the caller; refuses anything but a regular file
// (a FIFO, a device) and closes fd then.
Status RequireRegular(int fd, const std::string& path, struct stat* st) {
  if (::fstat(fd, st) != 0) {
    Status s = Errno("stat", path);
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(fd);
    return Error(Code::kInvalidArgument, "'{}' is not a regular file (it is {})", path,
                 FileTypeName(st->st_mode));
  }
  return Status::Ok();
}

// A std::thread behind Env::StartThread.
class StdThread final : public Thread {
 public:
  explicit StdThread(std::function<void()> body) : thread_(std::move(body)) {}
  ~StdThread() override { Join(); }
  void Join() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// Names the calling thread and lowers its priority by options.nice. Both
// are best effort: a thread that keeps its name or priority still works.
void ApplyThreadOptions(const ThreadOptions& options) {
  (void)pthread_setname_np(pthread_self(), options.name.substr(0, 15).c_str());
  if (options.nice <= 0) return;
  const auto tid = static_cast<id_t>(::gettid());
  errno = 0;
  const int inherited = ::getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return;
  (void)::setpriority(PRIO_PROCESS, tid, std::min(19, inherited + options.nice));
}

Result<std::unique_ptr<Thread>> StartStdThread(const ThreadOptions& options,
                                               std::function<void()> body) {
  try {
    return std::unique_ptr<Thread>(new StdThread([options, body = std::move(body)] {
      ApplyThreadOptions(options);
      body();
    }));
  } catch (const std::system_error& e) {
    return Error(Code::kInternal, "cannot start a thread: {}", e.what());
  }
}

// Writes aligned buffers with O_DIRECT on a thread of its own, so that the
// caller fills (copies and checksums) the next buffer while the device
// writes this one: the two overlap instead of adding up. When the system
// refuses the thread, Submit writes in the caller's thread instead.
class DirectWriter {
 public:
  DirectWriter(int fd, const std::string& path) : fd_(fd), path_(path) {
    // On the critical path (the caller waits for it): no nice.
    auto thread = StartStdThread(ThreadOptions{.name = "cairn-direct-io"}, [this] { Run(); });
    if (thread.ok()) thread_ = std::move(thread).value();
  }
  ~DirectWriter() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    if (thread_) thread_->Join();
  }
  // Queues one write; waits for the previous one first (double buffering).
  Status Submit(const char* data, size_t n) {
    if (!thread_) return WriteAll(fd_, data, n, path_);
    MutexLock lock(&mu_);
    while (data_ != nullptr) cv_.Wait();
    if (!error_.ok()) return error_;
    data_ = data;
    size_ = n;
    cv_.SignalAll();
    return Status::Ok();
  }
  // Waits until no write is in flight; the first error of any write.
  Status Drain() {
    MutexLock lock(&mu_);
    while (data_ != nullptr) cv_.Wait();
    return error_;
  }

 private:
  void Run() {
    MutexLock lock(&mu_);
    for (;;) {
      while (!stop_ && data_ == nullptr) cv_.Wait();
      if (data_ == nullptr) return;
      const char* data = data_;
      size_t n = size_;
      // The write runs unlocked so that Submit can queue the next buffer;
      // data_ stays set, so nobody touches this one meanwhile.
      mu_.Unlock();
      Status s = WriteAll(fd_, data, n, path_);
      mu_.Lock();
      if (!s.ok() && error_.ok()) error_ = s;
      data_ = nullptr;
      cv_.SignalAll();
    }
  }

  int fd_;
  const std::string& path_;
  Mutex mu_;
  CondVar cv_{&mu_};
  const char* data_ GUARDED_BY(mu_) = nullptr;  // the write in flight
  size_t size_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  Status error_ GUARDED_BY(mu_);
  std::unique_ptr<Thread> thread_;  // null: writes run in the caller's thread
};

class PosixWritableFile final : public WritableFile {
 public:
  // old_size: bytes the file had when opened without truncation; Close
  // cuts it to what was written.
  PosixWritableFile(int fd, std::string path, bool direct, uint64_t old_size)
      : fd_(fd), path_(std::move(path)), direct_(direct), old_size_(old_size) {
    if (direct_) {
      for (auto& b : buffers_) b = static_cast<char*>(std::aligned_alloc(kDirectAlign, kDirectBuffer));
      writer_ = std::make_unique<DirectWriter>(fd_, path_);
    }
  }
  ~PosixWritableFile() override { (void)Close(); }

  Status Append(const void* data, size_t n) override {
    written_ += n;
    if (!direct_) return WriteAll(fd_, data, n, path_);
    // O_DIRECT needs aligned buffers and lengths: stage through buffers_.
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      size_t take = std::min(n, kDirectBuffer - used_);
      std::memcpy(buffers_[filling_] + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ == kDirectBuffer) {
        CAIRN_RETURN_IF_ERROR(writer_->Submit(buffers_[filling_], used_));
        filling_ ^= 1;
        used_ = 0;
      }
    }
    return Status::Ok();
  }

  Status Sync() override {
    CAIRN_RETURN_IF_ERROR(FlushTail());
    if (::fdatasync(fd_) != 0) return Errno("fdatasync", path_);
    return Status::Ok();
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    Status s = FlushTail();
    writer_.reset();
    if (s.ok() && written_ < old_size_ && ::ftruncate(fd_, static_cast<off_t>(written_)) != 0) {
      s = Errno("truncate", path_);
    }
    if (::close(fd_) != 0 && s.ok()) s = Errno("close", path_);
    fd_ = -1;
    for (auto& b : buffers_) {
      std::free(b);
      b = nullptr;
    }
    return s;
  }

  const std::string& path() const override { return path_; }

 private:
  // Writes what is staged: the aligned head with O_DIRECT, the unaligned
  // tail after turning O_DIRECT off (Linux allows that with fcntl).
  Status FlushTail() {
    if (!direct_) return Status::Ok();
    CAIRN_RETURN_IF_ERROR(writer_->Drain());
    if (used_ == 0) return Status::Ok();
    char* buffer = buffers_[filling_];
    size_t aligned = used_ / kDirectAlign * kDirectAlign;
    if (aligned > 0) CAIRN_RETURN_IF_ERROR(WriteAll(fd_, buffer, aligned, path_));
    if (aligned < used_) {
      int flags = ::fcntl(fd_, F_GETFL);
      if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) {
        return Errno("fcntl(O_DIRECT off)", path_);
      }
      direct_ = false;
      CAIRN_RETURN_IF_ERROR(WriteAll(fd_, buffer + aligned, used_ - aligned, path_));
    }
    used_ = 0;
    return Status::Ok();
  }

  int fd_;
  std::string path_;
  bool direct_;
  uint64_t old_size_;
  uint64_t written_ = 0;
  char* buffers_[2] = {nullptr, nullptr};
  int filling_ = 0;
  size_t used_ = 0;
  std::unique_ptr<DirectWriter> writer_;
};

class PosixReadableFile final : public ReadableFile {
 public:
  PosixReadableFile(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixReadableFile() override { ::close(fd_); }

  Status ReadAt(uint64_t offset, void* dst, size_t n) const override {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (r < 0) {
        if (errno == EINTR) continue;
        return Errno("read", path_);
      }
      if (r == 0) return Error(Code::kCorrupt, "'{}' is truncated at byte {}", path_, offset);
      p += r;
      n -= static_cast<size_t>(r);
      offset += static_cast<uint64_t>(r);
    }
    return Status::Ok();
  }
  uint64_t size() const override { return size_; }
  const std::string& path() const override { return path_; }
  void Advise(Hint hint, uint64_t offset, uint64_t n) const override {
    if (hint == Hint::kNormal) {
      (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_NORMAL);
    } else {
      (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(n),
                            POSIX_FADV_DONTNEED);
    }
  }

 private:
  int fd_;
  std::string path_;
  uint64_t size_;
};

// Linux 5.14's madvise advice (missing from older headers).
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

class PosixMappedFile final : public MappedFile {
 public:
  // fd: the file's descriptor, kept for SetLength (writable mappings;
  // -1 otherwise).
  PosixMappedFile(uint8_t* data, uint64_t size, bool writable, int fd)
      : data_(data), size_(size), writable_(writable), fd_(fd) {}
  ~PosixMappedFile() override {
    if (data_ != nullptr) ::munmap(data_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  uint8_t* data() override { return data_; }
  uint64_t size() const override { return size_; }
  Status Sync() override {
    if (data_ != nullptr && ::msync(data_, size_, MS_SYNC) != 0) return Errno("msync", "mapping");
    return Status::Ok();
  }
  Status Populate(uint64_t offset, uint64_t n) override {
    if (offset >= size_ || n == 0) return Status::Ok();
    n = std::min(n, size_ - offset);
    // madvise wants a page-aligned start.
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t start = offset - offset % page;
    if (::madvise(data_ + start, n + (offset - start),
                  writable_ ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0) {
      return Status::Ok();
    }
    // EINVAL: a kernel without the advice; touch each page instead.
    if (errno != EINVAL) return Errno("populate", "mapping");
    volatile uint8_t* bytes = data_;
    for (uint64_t at = start; at < offset + n; at += page) {
      uint8_t value = bytes[at];
      if (writable_) bytes[at] = value;
    }
    return Status::Ok();
  }
  Status SetLength(uint64_t length) override {
    if (fd_ < 0 || length > size_) {
      return Error(Code::kInternal, "a mapping of {} bytes cannot hold a file of {}", size_, length);
    }
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Errno("stat", "mapped file");
    const uint64_t have = static_cast<uint64_t>(st.st_size);
    if (have > length && ::ftruncate(fd_, static_cast<off_t>(length)) != 0) {
      return Errno("truncate", "mapped file");
    }
    if (have < length) {
      int err = ::posix_fallocate(fd_, static_cast<off_t>(have), static_cast<off_t>(length - have));
      if (err != 0) return ErrnoError(err, "allocate", "mapped file");
      return Populate(have, length - have);
    }
    return Status::Ok();
  }

 private:
  uint8_t* data_;
  uint64_t size_;
  bool writable_;
  int fd_;
};

class PosixEnvImpl final : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        const WriteOptions& options) override {
    // Reusing a file's blocks (overwrite in place) avoids allocating new
    // ones: measured twice as fast with O_DIRECT on ext4.
    // O_NONBLOCK: a FIFO planted at path fails (ENXIO) instead of blocking
    // until a reader comes; it changes nothing for regular files.
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                (options.reuse_existing ? 0 : O_TRUNC) | (options.create_new ? O_EXCL : 0);
    bool direct = options.direct_io;
    int fd = ::open(path.c_str(), flags | (direct ? O_DIRECT : 0), 0600);
    if (fd < 0 && direct && errno == EINVAL) {  // tmpfs and others refuse O_DIRECT
      direct = false;
      fd = ::open(path.c_str(), flags, 0600);
    }
    if (fd < 0) return OpenError("create", path);
    struct stat st;
    CAIRN_RETURN_IF_ERROR(RequireRegular(fd, path, &st));
    uint64_t old_size = options.reuse_existing ? static_cast<uint64_t>(st.st_size) : 0;
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path, direct, old_size));
  }

  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override {
    // O_NONBLOCK: opening a FIFO put where a file belongs (a config, a
    // manifest) returns at once instead of waiting for a writer; on the
    // regular files accepted below it changes nothing.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return OpenError("open", path);
    struct stat st;
    CAIRN_RETURN_IF_ERROR(RequireRegular(fd, path, &st));
    // Cairn reads its files front to back: ask for aggressive readahead.
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return std::unique_ptr<ReadableFile>(
        new PosixReadableFile(fd, path, static_cast<uint64_t>(st.st_size)));
  }

  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, uint64_t size,
                                              bool writable) override {
    int fd = ::open(path.c_str(),
                    (writable ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                    0600);
    if (fd < 0) return OpenError("open", path);
    struct stat st;
    CAIRN_RETURN_IF_ERROR(RequireRegular(fd, path, &st));
    uint64_t have = static_cast<uint64_t>(st.st_size);
    if (!writable) size = have;
    if (writable && have > size && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      Status s = Errno("truncate", path);
      ::close(fd);
      return s;
    }
    if (writable && have < size) {
      // posix_fallocate reserves the pages now, so a full tmpfs fails here
      // with ENOSPC instead of with SIGBUS on first touch.
      int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
      if (err != 0) {
        ::close(fd);
        return ErrnoError(err, "allocate", path);
      }
    }
    if (size == 0) {
      ::close(fd);
      return std::unique_ptr<MappedFile>(new PosixMappedFile(nullptr, 0, writable, -1));
    }
    void* p = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
                     fd, 0);
    Status s = p == MAP_FAILED ? Errno("mmap", path) : Status::Ok();
    if (!s.ok() || !writable) ::close(fd);
    if (!s.ok()) return s;
    return std::unique_ptr<MappedFile>(
        new PosixMappedFile(static_cast<uint8_t*>(p), size, writable, writable ? fd : -1));
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return Errno("rename to '" + to + "'", from);
    return Status::Ok();
  }

  Status DeleteFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("delete", path);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    if (path.empty()) return Status::Ok();
    // stat, not lstat: the part of a path the user wrote may hold symlinks.
    // The directories Cairn makes are checked by CheckPrivateDir.
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return Status::Ok();
      return Error(Code::kIo, "'{}' exists and is not a directory", path);
    }
    std::string parent = DirName(path);
    if (parent != path) CAIRN_RETURN_IF_ERROR(CreateDirs(parent));
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return Errno("mkdir", path);
    return Status::Ok();
  }

  Status DeleteDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return Errno("rmdir", path);
    return Status::Ok();
  }

  Status SyncDir(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Errno("open directory", path);
    int rc = ::fsync(fd);
    ::close(fd);
    // Some file systems (tmpfs) do not sync directories; nothing is lost there.
    if (rc != 0 && errno != EINVAL) return Errno("fsync directory", path);
    return Status::Ok();
  }

  Result<std::vector<DirEntry>> ListDir(const std::string& path) override {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) {
      if (errno == ENOENT) return Error(Code::kNotFound, "'{}' does not exist", path);
      return Errno("list", path);
    }
    std::vector<DirEntry> out;
    while (struct dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      bool is_dir = e->d_type == DT_DIR;
      if (e->d_type == DT_UNKNOWN) {
        struct stat st;
        // lstat: a walk never follows a symlink into another directory.
        is_dir = ::lstat(JoinPath(path, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      }
      out.push_back({name, is_dir});
    }
    ::closedir(dir);
    return out;
  }

  bool FileExists(const std::string& path) override {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }

  // lstat: the size of a symlink planted among the files is never that of
  // its target.
  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return Error(Code::kNotFound, "'{}' does not exist", path);
      return Errno("stat", path);
    }
    return static_cast<uint64_t>(st.st_size);
  }

  Result<uint64_t> FreeSpace(const std::string& path) override {
    struct statvfs st;
    if (::statvfs(path.c_str(), &st) != 0) return Errno("statvfs", path);
    return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  }

  Status AppendToFile(const std::string& path, const void* data, size_t n) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                    0600);
    if (fd < 0) return OpenError("open for append", path);
    Status s = WriteAll(fd, data, n, path);
    if (::close(fd) != 0 && s.ok()) s = Errno("close", path);
    return s;
  }

  Status EvictFromCache(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return OpenError("open", path);
    // DONTNEED skips dirty pages: write them back first.
    Status s = ::fdatasync(fd) == 0 || errno == EINVAL ? Status::Ok() : Errno("fdatasync", path);
    int err = s.ok() ? ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) : 0;
    if (err != 0) s = ErrnoError(err, "posix_fadvise(DONTNEED)", path);
    ::close(fd);
    return s;
  }

  Result<LockAttempt> TryLockFile(const std::string& path, const std::string& holder) override;

  Status CheckPrivateDir(const std::string& path) override { return CheckPrivate(path, true); }
  Status CheckPrivateFile(const std::string& path) override { return CheckPrivate(path, false); }

  Result<std::string> AbsolutePath(const std::string& path) override {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    if (ec) {
      return Error(Code::kIo, "cannot make '{}' absolute: {} (was the working directory removed?)",
                   path, ec.message());
    }
    return Env::AbsolutePath(absolute.string());  // the lexical part
  }

  Result<std::string> CanonicalPath(const std::string& path) override {
    // Absolute first: weakly_canonical leaves a relative path relative when
    // its first component does not exist.
    CAIRN_ASSIGN_OR_RETURN(std::string absolute, AbsolutePath(path));
    std::error_code ec;
    std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, ec);
    if (ec) return Error(Code::kIo, "cannot resolve the path '{}': {}", path, ec.message());
    return Env::AbsolutePath(resolved.string());
  }

  Result<std::unique_ptr<Thread>> StartThread(const ThreadOptions& options,
                                              std::function<void()> body) override {
    return StartStdThread(options, std::move(body));
  }
};

// An open file description with an OFD lock (fcntl F_OFD_SETLK) on it.
// OFD locks, unlike flock, are carried over NFS (as POSIX locks) and by
// Lustre mounted with -o flock; like flock, and unlike classic POSIX
// locks, they belong to this descriptor, so another thread closing some
// other descriptor of the same file does not drop them. Closing releases.
class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixFileLock() override { ::close(fd_); }
  const std::string& path() const override { return path_; }
  Status ReleaseAndRemove() override {
    Status s = ::unlink(path_.c_str()) == 0 || errno == ENOENT ? Status::Ok() : Errno("delete", path_);
    ::close(fd_);
    fd_ = -1;
    return s;
  }

 private:
  int fd_;
  std::string path_;
};

// Whether fd still is the file at path: a holder removes the lock file
// while holding it (ReleaseAndRemove), and whoever opened it just before
// then locks a file that no longer has a name.
bool StillNamed(int fd, const std::string& path) {
  struct stat by_fd, by_name;
  return ::fstat(fd, &by_fd) == 0 && ::lstat(path.c_str(), &by_name) == 0 &&
         by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

std::string ReadHolder(int fd) {
  char buffer[512];
  ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string holder(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder;
}

Result<LockAttempt> PosixEnvImpl::TryLockFile(const std::string& path, const std::string& holder) {
  // A few rounds are enough: each retry means a holder removed the file
  // between our open and our lock.
  for (int round = 0; round < 100; ++round) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) return OpenError("open lock file", path);
    struct stat st;
    CAIRN_RETURN_IF_ERROR(RequireRegular(fd, path, &st));
    struct flock lock = {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
    if (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
      int err = errno;
      if (err == EAGAIN || err == EACCES) {
        LockAttempt busy;
        busy.holder = ReadHolder(fd);
        ::close(fd);
        return busy;
      }
      ::close(fd);
      if (err == ENOLCK || err == ENOSYS || err == EOPNOTSUPP || err == EINVAL) {
        return Error(Code::kUnsupported, "the file system of '{}' offers no locks: {}", path,
                     std::strerror(err));
      }
      return ErrnoError(err, "lock", path);
    }
    if (!StillNamed(fd, path)) {
      ::close(fd);
      continue;
    }
    std::string text = holder + "\n";
    Status s = ::ftruncate(fd, 0) == 0 ? WriteAll(fd, text.data(), text.size(), path)
                                       : Errno("truncate", path);
    if (!s.ok()) {
      ::close(fd);
      return s;
    }
    LockAttempt granted;
    granted.lock = std::make_unique<PosixFileLock>(fd, path);
    return granted;
  }
  return Error(Code::kIo, "cannot lock '{}': it keeps being removed and made again", path);
}

}  // namespace

Env* PosixEnv() {
  static Env* env = new PosixEnvImpl();  // never destroyed: used by threads at exit
  return env;
}

}  // namespace cairn
