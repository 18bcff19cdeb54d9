#include "env/pmem_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "base/log.h"

#if defined(CAIRN_HAVE_LIBPMEM2)
#include <libpmem2.h>
#endif

namespace cairn {
namespace {

// File systems whose pages are the memory itself: msync has nothing to
// write back there (tmpfs, ramfs; /dev/shm stands in for pmem on machines
// without it).
constexpr long kTmpfsMagic = 0x01021994;
constexpr long kRamfsMagic = 0x858458f6;

bool MemoryBacked(int fd) {
  struct statfs fs;
  return ::fstatfs(fd, &fs) == 0 && (fs.f_type == kTmpfsMagic || fs.f_type == kRamfsMagic);
}

// Opens (creating) path as a private regular file of exactly size bytes.
Result<int> OpenSized(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) return ErrnoError(errno, "open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(Code::kIo, "'{}' is not a regular file", path);
  }
  if (static_cast<uint64_t>(st.st_size) > size && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    Status s = ErrnoError(errno, "truncate", path);
    ::close(fd);
    return s;
  }
  if (static_cast<uint64_t>(st.st_size) < size) {
    int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err != 0) {
      ::close(fd);
      return ErrnoError(err, "allocate", path);
    }
  }
  return fd;
}

#if defined(CAIRN_HAVE_LIBPMEM2)
const char* GranularityName(pmem2_granularity g) {
  switch (g) {
    case PMEM2_GRANULARITY_BYTE: return "byte";
    case PMEM2_GRANULARITY_CACHE_LINE: return "cache line";
    case PMEM2_GRANULARITY_PAGE: return "page";
  }
  return "page";
}

// Maps fd with libpmem2, accepting any granularity (PAGE is the weakest
// requirement: a DAX file still reports CACHE_LINE or BYTE).
Result<pmem2_map*> MapWithPmem2(int fd, const std::string& path) {
  pmem2_config* config = nullptr;
  pmem2_source* source = nullptr;
  pmem2_map* map = nullptr;
  int rc = pmem2_config_new(&config);
  if (rc == 0) rc = pmem2_config_set_required_store_granularity(config, PMEM2_GRANULARITY_PAGE);
  if (rc == 0) rc = pmem2_source_from_fd(&source, fd);
  if (rc == 0) rc = pmem2_map_new(&map, config, source);
  std::string why = rc == 0 ? "" : pmem2_errormsg();
  if (source != nullptr) pmem2_source_delete(&source);
  if (config != nullptr) pmem2_config_delete(&config);
  if (rc != 0) return Error(Code::kIo, "libpmem2 cannot map '{}': {}", path, why);
  return map;
}
#endif

}  // namespace

Result<std::unique_ptr<PmemMap>> PmemMap::Create(const std::string& path, uint64_t size) {
  if (size == 0) return Error(Code::kInvalidArgument, "cannot map '{}' with 0 bytes", path);
  CAIRN_ASSIGN_OR_RETURN(int fd, OpenSized(path, size));
  return MapFd(fd, path, size);
}

Result<std::unique_ptr<PmemMap>> PmemMap::OpenExisting(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    Status s = ErrnoError(err, "open", path);
    return err == ENOENT ? Error(Code::kNotFound, "{}", s.message()) : s;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    return Error(Code::kIo, "'{}' is not a non-empty regular file", path);
  }
  return MapFd(fd, path, static_cast<uint64_t>(st.st_size));
}

Result<std::unique_ptr<PmemMap>> PmemMap::MapFd(int fd, const std::string& path, uint64_t size) {
  std::unique_ptr<PmemMap> m(new PmemMap);
  m->path_ = path;
  m->size_ = size;
  m->memory_backed_ = MemoryBacked(fd);
#if defined(CAIRN_HAVE_LIBPMEM2)
  auto mapped = MapWithPmem2(fd, path);
  ::close(fd);  // the mapping keeps the file
  if (!mapped.ok()) return mapped.status();
  auto* map = *mapped;
  m->pmem2_map_ = map;
  m->data_ = static_cast<uint8_t*>(pmem2_map_get_address(map));
  pmem2_granularity g = pmem2_map_get_store_granularity(map);
  m->granularity_ = GranularityName(g);
  m->is_pmem_ = g != PMEM2_GRANULARITY_PAGE;
#else
  void* addr = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED) return ErrnoError(err, "map", path);
  m->data_ = static_cast<uint8_t*>(addr);
  m->posix_mapped_ = true;
#endif
  if (!m->is_pmem_) WarnOnceNotPmem(path, m->granularity_);
  return m;
}

PmemMap::~PmemMap() {
#if defined(CAIRN_HAVE_LIBPMEM2)
  if (pmem2_map_ != nullptr) {
    auto* map = static_cast<pmem2_map*>(pmem2_map_);
    (void)pmem2_map_delete(&map);
  }
#endif
  if (posix_mapped_) ::munmap(data_, size_);
}

Status PmemMap::PersistMedium(const void* addr, uint64_t n) const {
  if (is_pmem_ || memory_backed_ || n == 0) return Status::Ok();
  // msync wants a page-aligned start.
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(addr) + n;
  if (::msync(reinterpret_cast<void*>(begin), end - begin, MS_SYNC) != 0) {
    return ErrnoError(errno, "msync", path_);
  }
  return Status::Ok();
}

Status PmemMap::Prefault(uint64_t offset, uint64_t n) const {
  if (n == 0) return Status::Ok();
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t begin = reinterpret_cast<uintptr_t>(data_ + offset) & ~(page - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(data_ + offset + n);
#if defined(MADV_POPULATE_WRITE)
  if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) {
    return Status::Ok();
  }
  if (errno != EINVAL) return ErrnoError(errno, "prefault", path_);
#endif
  // A kernel before 5.14: a write access per page that keeps its value
  // (an atomic add of 0, so a concurrent writer's store is never undone).
  for (uintptr_t p = begin; p < end; p += page) {
    __atomic_fetch_add(reinterpret_cast<uint8_t*>(p), uint8_t{0}, __ATOMIC_RELAXED);
  }
  return Status::Ok();
}

Result<PmemMedium> ProbePmemMedium(const std::string& dir) {
  const std::string probe = dir + "/.pmem-probe." + std::to_string(::getpid());
  auto map = PmemMap::Create(probe, static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
  ::unlink(probe.c_str());
  if (!map.ok()) return map.status();
  return PmemMedium{(*map)->is_pmem(), (*map)->memory_backed(), (*map)->granularity()};
}

void WarnOnceNotPmem(const std::string& path, const char* granularity) {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  Log(LogLevel::kWarn,
      "'{}' is not persistent memory (store granularity: {}): Cairn runs the same cache-flush "
      "paths over it (and msync where a device backs the file); figures measured here are the "
      "code's cost, not a real medium's (docs/pmem.md)",
      path, granularity);
}

}  // namespace cairn
