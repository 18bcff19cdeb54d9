// Env: the one seam through which Cairn touches the file system, maps files
// and starts threads. Three implementations: the real POSIX one (NewPosixEnv), an
// in-memory one for fast tests (NewMemEnv), and FaultEnv (fault_env.h), which
// wraps another Env to fail or lose writes on purpose.
// Thread-safety: Env methods may be called from several threads at once; a
// single WritableFile / ReadableFile / MappedFile must not be shared between
// threads without external locking.
#ifndef CAIRN_ENV_ENV_H_
#define CAIRN_ENV_ENV_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

// A file being written from the start, sequentially.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends n bytes. On failure the file's contents are unspecified.
  virtual Status Append(const void* data, size_t n) = 0;
  // The next n bytes of a file written through a mapping with plain
  // stores, for the caller to fill in place of Append (with a copy that
  // also checksums, in one pass over the bytes); they count as appended.
  // Null, and nothing appended, where bytes reach the file only through
  // Append (a descriptor, or a mapping whose medium needs its own copy):
  // call Append then, which also reports a write past the file's end.
  virtual uint8_t* Claim(size_t n) { return nullptr; }
  // Where Claim(n) would put the next n bytes, without claiming them: a
  // caller may fill them before it knows whether they are to be appended
  // (a Claim(n) then keeps them as they are; any other write overwrites
  // them). Null where Claim would be.
  virtual uint8_t* Peek(size_t n) { return nullptr; }
  // Makes everything appended so far durable (fsync).
  virtual Status Sync() = 0;
  // Releases the descriptor; implied by destruction (whose error is lost).
  virtual Status Close() = 0;
  virtual const std::string& path() const = 0;
};

class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  // Reads exactly n bytes at offset into dst; a short file is kCorrupt.
  virtual Status ReadAt(uint64_t offset, void* dst, size_t n) const = 0;
  virtual uint64_t size() const = 0;
  virtual const std::string& path() const = 0;
  // Reads [offset, offset + n) into dst piece by piece (pieces of `piece`
  // bytes), calling check(piece_offset, data, length) for each piece as
  // soon as it is in dst, so that a piece is checked while still in cache.
  // Stops at the first error (of a read or of check) and returns it.
  using PieceCheck = std::function<Status(uint64_t, const uint8_t*, uint64_t)>;
  Status ReadPieces(uint64_t offset, uint64_t n, uint8_t* dst, uint64_t piece,
                    const PieceCheck& check) const;

  // Access hints (posix_fadvise), advisory: files without a page cache of
  // their own (memory env, tmpfs) ignore them. A file is opened with the
  // sequential hint (a readahead window twice the device's).
  enum class Hint {
    kNormal,  // the device's own readahead window from now on
    kDone,    // [offset, offset + n) will not be read again: drop its pages
  };
  virtual void Advise(Hint hint, uint64_t offset, uint64_t n) const {}
};

// A file mapped into memory, shared with the file (writes reach the file).
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual uint8_t* data() = 0;
  virtual uint64_t size() const = 0;
  // Makes the mapped contents durable (msync), where the medium needs it.
  virtual Status Sync() = 0;
  // Enters every page of [offset, offset + n) in this mapping's page table
  // now, allocating the file's pages where it has none, so that later
  // accesses take no page fault: one system call instead of a fault per
  // 4 KiB (MADV_POPULATE_READ, or _WRITE for a writable mapping, which also
  // makes the pages writable). Leaves the bytes as they are. Advisory: a
  // mapping without page faults (the in-memory env) does nothing.
  // REQUIRES: no other thread writes the range meanwhile (the fallback for
  // kernels before 5.14 rewrites one byte per page with its own value).
  virtual Status Populate(uint64_t offset, uint64_t n) { return Status::Ok(); }
  // Writable mappings: makes the file exactly `length` bytes long,
  // length <= size(), and keeps the mapping, so that one mapped slot holds
  // files of any size up to its own. Growth reserves its pages (a full
  // device fails here) and enters them as Populate does. Bytes of the
  // mapping past the file's end must not be touched (SIGBUS).
  virtual Status SetLength(uint64_t length) = 0;
};

// How a thread started by Env::StartThread runs.
struct ThreadOptions {
  // Shown by `top -H` and `ps -L` (the kernel keeps the first 15 characters).
  std::string name = "cairn";
  // Added to the nice value the thread would inherit (the result capped at
  // 19): Cairn's background threads (drains, encodes, slot reservation)
  // take [general] background_nice.
  int nice = 0;
};

// A thread started by Env::StartThread. Owned by whoever started it.
class Thread {
 public:
  // Joins the thread if Join was not called.
  virtual ~Thread() = default;
  // Blocks until the thread's body has returned. Idempotent.
  virtual void Join() = 0;
};

struct WriteOptions {
  bool direct_io = false;        // O_DIRECT if the file system allows it
  uint64_t expected_size = 0;    // preallocate when known (0: unknown)
  // Overwrite an existing file in place instead of truncating it; Close
  // cuts it to the bytes written. (Its blocks are reused: no allocation.)
  bool reuse_existing = false;
  // Fail if path exists (O_EXCL): for temporary names, which must be new.
  bool create_new = false;
};

// An exclusive lock on a file, held until this object is destroyed or the
// process dies (the kernel releases it then: a killed job leaves no stale
// lock).
class FileLock {
 public:
  virtual ~FileLock() = default;
  virtual const std::string& path() const = 0;
  // Deletes the lock file while still holding it, then releases the lock.
  // A process that opened the old file meanwhile notices and retries
  // (Env::TryLockFile), so removal never lets two holders in.
  virtual Status ReleaseAndRemove() = 0;
};

// What Env::TryLockFile got: the lock, or (lock null) what its holder wrote
// into the file ("" if it has not written yet).
struct LockAttempt {
  std::unique_ptr<FileLock> lock;
  std::string holder;
};

struct DirEntry {
  std::string name;
  bool is_dir = false;
};

class Env {
 public:
  virtual ~Env() = default;

  // Creates (or truncates) path for writing, private to the user (0600).
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                const WriteOptions& options) = 0;
  virtual Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) = 0;
  // Maps path read-only (writable = false: size is ignored) or read-write;
  // a writable mapping creates the file if needed and makes it exactly
  // size bytes long (space reserved up front: a full device fails here).
  virtual Result<std::unique_ptr<MappedFile>> MapFile(const std::string& path, uint64_t size,
                                                      bool writable) = 0;

  // Atomic replace of `to` by `from` (rename(2)).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status DeleteFile(const std::string& path) = 0;
  // mkdir -p with mode 0700; existing directories are fine.
  virtual Status CreateDirs(const std::string& path) = 0;
  // Removes an empty directory.
  virtual Status DeleteDir(const std::string& path) = 0;
  // Makes the directory's entries (creations, renames) durable.
  virtual Status SyncDir(const std::string& path) = 0;
  // Entries other than "." and ".."; kNotFound when path does not exist.
  virtual Result<std::vector<DirEntry>> ListDir(const std::string& path) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  // Bytes still free on the file system holding path.
  virtual Result<uint64_t> FreeSpace(const std::string& path) = 0;
  // Appends n bytes to path in one write, creating it (0600) if needed
  // (O_APPEND: concurrent appenders never overwrite each other). Not synced:
  // for logs that may lose their tail on a crash, never for committed data.
  virtual Status AppendToFile(const std::string& path, const void* data, size_t n) = 0;
  // Writes back path's dirty pages (fdatasync) and asks the kernel to drop
  // its pages from the page cache (POSIX_FADV_DONTNEED), so that the next
  // read comes from the device: for measuring reads (the I/O profiler).
  // Advisory: a memory file system keeps its pages, since they are the file.
  virtual Status EvictFromCache(const std::string& path) = 0;
  // Whole file as a string (small files: configs, manifests).
  virtual Result<std::string> ReadFileToString(const std::string& path);
  // Whole file of at most max_bytes (a file a user names, such as the
  // config): kInvalidArgument naming the path and the limit when longer.
  Result<std::string> ReadFileUpTo(const std::string& path, uint64_t max_bytes);
  // Whole /sys or /proc file. Such files report a placeholder size (4096 in
  // sysfs, 0 in procfs) rather than their length, which ReadFileToString
  // takes at its word; when that fails this finds the real length with
  // reads from offset 0 (each of which the kernel serves from a fresh
  // snapshot) and keeps the longest complete one. kUnsupported if the file
  // is longer than max_bytes.
  Result<std::string> ReadPseudoFile(const std::string& path, size_t max_bytes = 64 << 10);
  // Writes data to path through a temporary name, persists it when `sync`,
  // renames it into place and persists the directory: the commit protocol.
  virtual Status WriteFileAtomic(const std::string& path, const void* data, size_t n, bool sync);
  // Deletes path and everything under it; missing is fine.
  virtual Status DeleteRecursive(const std::string& path);

  // Takes an exclusive lock on path without waiting, creating the file
  // (0600, never through a symlink) if needed, and writes `holder` into it
  // for whoever finds it locked. kUnsupported when the file system has no
  // locks (Lustre mounted without -o flock, some NFS setups). The default
  // (in-memory env: one process) always grants it.
  virtual Result<LockAttempt> TryLockFile(const std::string& path, const std::string& holder);
  // Whether path is a directory (not a symlink to one) owned by this user
  // with no permission bits for group or others; kIo naming the path, its
  // owner and mode otherwise. The default (in-memory env) accepts any.
  virtual Status CheckPrivateDir(const std::string& path) { return Status::Ok(); }
  // The same for a regular file (not a symlink), which must also be mode
  // 0600 exactly: what Cairn creates.
  virtual Status CheckPrivateFile(const std::string& path) { return Status::Ok(); }
  // path made absolute (a relative one against the working directory) with
  // `.`, `..`, repeated and trailing slashes resolved lexically. kIo naming
  // the path when the working directory cannot be read (it was removed).
  // The default (in-memory env: no working directory) resolves against "/".
  virtual Result<std::string> AbsolutePath(const std::string& path);
  // The directory path really names: AbsolutePath with symlinks resolved as
  // far as the path exists (the rest kept lexically). kIo naming the path.
  // The default (in-memory env: no symlinks) is AbsolutePath.
  virtual Result<std::string> CanonicalPath(const std::string& path) { return AbsolutePath(path); }

  // Runs body on a new thread (LevelDB's Env::StartThread, but joinable:
  // Cairn's threads are owned and joined, never detached). The body must
  // not let an exception escape. kInternal when the system refuses a thread
  // (too many threads or too little memory); the body does not run then.
  virtual Result<std::unique_ptr<Thread>> StartThread(const ThreadOptions& options,
                                                      std::function<void()> body) = 0;
};

// The real file system. Never null; owned by the callee (lives forever).
Env* PosixEnv();
// A private in-memory file system (tests). Its threads are real ones, started
// by PosixEnv().
std::unique_ptr<Env> NewMemEnv();
// A file of `bytes` held in memory, named `path` (a copy repaired in memory
// read in place of the damaged file it was rebuilt from).
std::unique_ptr<ReadableFile> NewBytesReadableFile(const std::vector<uint8_t>& bytes,
                                                   std::string path);

// Directory part of a path ("a/b/c" -> "a/b"; "c" -> ".").
std::string DirName(const std::string& path);
std::string BaseName(const std::string& path);
std::string JoinPath(const std::string& a, const std::string& b);

// EnvWrapper forwards every call to `target`, so a subclass overrides only
// what it needs (the LevelDB pattern).
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p,
                                                        const WriteOptions& o) override {
    return target_->NewWritableFile(p, o);
  }
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& p) override {
    return target_->NewReadableFile(p);
  }
  Result<std::unique_ptr<MappedFile>> MapFile(const std::string& p, uint64_t size,
                                              bool writable) override {
    return target_->MapFile(p, size, writable);
  }
  Status RenameFile(const std::string& f, const std::string& t) override {
    return target_->RenameFile(f, t);
  }
  Status DeleteFile(const std::string& p) override { return target_->DeleteFile(p); }
  Status CreateDirs(const std::string& p) override { return target_->CreateDirs(p); }
  Status DeleteDir(const std::string& p) override { return target_->DeleteDir(p); }
  Status SyncDir(const std::string& p) override { return target_->SyncDir(p); }
  Result<std::vector<DirEntry>> ListDir(const std::string& p) override {
    return target_->ListDir(p);
  }
  bool FileExists(const std::string& p) override { return target_->FileExists(p); }
  Result<uint64_t> FileSize(const std::string& p) override { return target_->FileSize(p); }
  Result<uint64_t> FreeSpace(const std::string& p) override { return target_->FreeSpace(p); }
  Status AppendToFile(const std::string& p, const void* data, size_t n) override {
    return target_->AppendToFile(p, data, n);
  }
  Status EvictFromCache(const std::string& p) override { return target_->EvictFromCache(p); }
  Result<LockAttempt> TryLockFile(const std::string& p, const std::string& holder) override {
    return target_->TryLockFile(p, holder);
  }
  Status CheckPrivateDir(const std::string& p) override { return target_->CheckPrivateDir(p); }
  Status CheckPrivateFile(const std::string& p) override { return target_->CheckPrivateFile(p); }
  Result<std::string> AbsolutePath(const std::string& p) override {
    return target_->AbsolutePath(p);
  }
  Result<std::string> CanonicalPath(const std::string& p) override {
    return target_->CanonicalPath(p);
  }
  Result<std::unique_ptr<Thread>> StartThread(const ThreadOptions& options,
                                              std::function<void()> body) override {
    return target_->StartThread(options, std::move(body));
  }

 private:
  Env* target_;
};

}  // namespace cairn

#endif  // CAIRN_ENV_ENV_H_
