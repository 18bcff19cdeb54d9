// PmemMap: a file mapped for direct load/store persistence, through libpmem2
// where it is available (docs/pmem.md). libpmem2 tells whether the mapping
// is real persistent memory (DAX: a store is durable once its cache line is
// flushed, store granularity "cache line" or "byte") or an ordinary file
// (granularity "page": durable only after msync). Cairn flushes cache lines
// itself (pmem/flush.h) either way, so the same code runs on both; on an
// ordinary file PersistMedium adds what the medium needs on top (libpmem2's
// persist function, which is msync there; nothing on tmpfs, which has no
// device behind it).
// Thread-safety: data() may be written from any thread; PersistMedium is
// thread-safe.
#ifndef CAIRN_ENV_PMEM_MAP_H_
#define CAIRN_ENV_PMEM_MAP_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace cairn {

class PmemMap {
 public:
  // Maps path read-write, creating it (0600) if needed and making it
  // exactly size bytes (space reserved up front: a full device fails here,
  // not with SIGBUS later). kIo naming the path and the failing step.
  static Result<std::unique_ptr<PmemMap>> Create(const std::string& path, uint64_t size);
  // Maps an existing file read-write at its size, changing nothing in it.
  // kNotFound when there is no file at path; kIo otherwise.
  static Result<std::unique_ptr<PmemMap>> OpenExisting(const std::string& path);
  ~PmemMap();
  PmemMap(const PmemMap&) = delete;
  PmemMap& operator=(const PmemMap&) = delete;

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Whether stores are durable once flushed from the CPU caches.
  bool is_pmem() const { return is_pmem_; }
  bool memory_backed() const { return memory_backed_; }
  // "byte", "cache line" or "page" (libpmem2's store granularity); "page"
  // without libpmem2.
  const char* granularity() const { return granularity_; }
  // What the medium needs beyond cache flushing for [addr, addr + n) of
  // this mapping to be durable: nothing on persistent memory or on a file
  // system of memory pages (tmpfs: nothing backs it), msync on an ordinary
  // file. kIo naming the path if msync fails.
  Status PersistMedium(const void* addr, uint64_t n) const;
  // Faults every page of [offset, offset + n) of the mapping in for
  // writing, without changing a byte, so that the first iteration's stores
  // do not each take a page fault (4 KiB pages of tmpfs or a DAX file are
  // mapped one fault at a time; 8192 faults per 32 MiB). kIo naming the
  // path if the kernel refuses. REQUIRES: offset + n <= size().
  Status Prefault(uint64_t offset, uint64_t n) const;

 private:
  PmemMap() = default;
  // Maps the open fd (size bytes) and closes it.
  static Result<std::unique_ptr<PmemMap>> MapFd(int fd, const std::string& path, uint64_t size);

  std::string path_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  bool is_pmem_ = false;
  bool memory_backed_ = false;  // tmpfs or ramfs: no device to write back to
  const char* granularity_ = "page";
  void* pmem2_map_ = nullptr;  // struct pmem2_map*, when libpmem2 mapped it
  bool posix_mapped_ = false;  // mapped with mmap instead
};

// What a directory's file system is, for persistence: probed by mapping a
// small file there with libpmem2 (and removing it).
struct PmemMedium {
  bool is_pmem = false;        // stores durable once flushed (DAX)
  bool memory_backed = false;  // tmpfs/ramfs: nothing to msync to
  const char* granularity = "page";
};
// kIo naming the directory if the probe file cannot be made or mapped.
Result<PmemMedium> ProbePmemMedium(const std::string& dir);

// Says once per process, at warn level, that `path` is not persistent
// memory and that Cairn runs the same flush paths over it (so figures
// measured there are the cost of the code, not of a real medium).
void WarnOnceNotPmem(const std::string& path, const char* granularity);

}  // namespace cairn

#endif  // CAIRN_ENV_PMEM_MAP_H_
