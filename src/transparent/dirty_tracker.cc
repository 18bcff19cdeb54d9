// The three tracking methods of dirty_tracker.h over the kernel's
// interfaces. Debian 12's headers predate UFFD_FEATURE_WP_ASYNC (6.7) and
// PAGEMAP_SCAN (6.7), so their values are defined here from the kernel's
// uapi (include/uapi/linux/userfaultfd.h, fs.h); whether the running kernel
// has them is found out by trying (Available).
#include "transparent/dirty_tracker.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <utility>

namespace cairn {
namespace {

// userfaultfd features (uapi/linux/userfaultfd.h, Linux 6.4 and 6.7).
constexpr uint64_t kUffdFeatureWpUnpopulated = 1ull << 13;
constexpr uint64_t kUffdFeatureWpAsync = 1ull << 15;

// PAGEMAP_SCAN (uapi/linux/fs.h, Linux 6.7): ioctl on /proc/self/pagemap.
struct PageRegion {
  uint64_t start;
  uint64_t end;
  uint64_t categories;
};
struct PmScanArg {
  uint64_t size;
  uint64_t flags;
  uint64_t start;
  uint64_t end;
  uint64_t walk_end;
  uint64_t vec;
  uint64_t vec_len;
  uint64_t max_pages;
  uint64_t category_inverted;
  uint64_t category_mask;
  uint64_t category_anyof_mask;
  uint64_t return_mask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr uint64_t kPmScanWpMatching = 1ull << 0;
constexpr uint64_t kPmScanCheckWpAsync = 1ull << 1;
constexpr uint64_t kPageIsWritten = 1ull << 1;

// /proc/self/pagemap: bit 55 of a page's entry is its soft-dirty bit.
constexpr uint64_t kPagemapSoftDirty = 1ull << 55;

Status Errno(const char* call, const char* what) {
  return Error(Code::kIo, "{} ({}): {}", call, what, std::strerror(errno));
}

// An fd closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

class UffdWpTracker final : public DirtyTracker {
 public:
  static Result<std::unique_ptr<DirtyTracker>> Create(uintptr_t base, size_t bytes) {
    auto t = std::unique_ptr<UffdWpTracker>(new UffdWpTracker(base, bytes));
    CAIRN_RETURN_IF_ERROR(t->Open());
    return std::unique_ptr<DirtyTracker>(std::move(t));
  }
  DirtyMethod method() const override { return DirtyMethod::kUffdWp; }

  Status Collect(DirtyPageSet* out) override {
    *out = EmptySet();
    PageRegion regions[256];
    uint64_t cursor = base_;
    const uint64_t end = base_ + bytes_;
    while (cursor < end) {
      // Reports the written pages and write-protects them again in one
      // walk: a write racing with the scan lands in this set or the next.
      PmScanArg arg{};
      arg.size = sizeof(arg);
      arg.flags = kPmScanWpMatching | kPmScanCheckWpAsync;
      arg.start = cursor;
      arg.end = end;
      arg.vec = reinterpret_cast<uintptr_t>(regions);
      arg.vec_len = std::size(regions);
      arg.category_mask = kPageIsWritten;
      arg.return_mask = kPageIsWritten;
      int n = ioctl(pagemap_.get(), kPagemapScan, &arg);
      if (n < 0) return Errno("ioctl(PAGEMAP_SCAN)", "/proc/self/pagemap");
      for (int i = 0; i < n; ++i) {
        for (uint64_t a = regions[i].start; a < regions[i].end; a += page_size_) {
          out->Add((a - base_) / page_size_);
        }
      }
      if (arg.walk_end <= cursor) break;  // no progress: the kernel walked it all
      cursor = arg.walk_end;
    }
    return Status::Ok();
  }

 private:
  using DirtyTracker::DirtyTracker;

  Status Open() {
    // The features must be asked for in the one UFFDIO_API call an fd
    // takes; a first fd asks what the kernel offers.
    uint64_t offered = 0;
    {
      Fd probe(static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK)));
      if (probe.get() < 0) return Errno("userfaultfd", "write-protect tracking");
      uffdio_api api{.api = UFFD_API, .features = 0, .ioctls = 0};
      if (ioctl(probe.get(), UFFDIO_API, &api) != 0) return Errno("ioctl(UFFDIO_API)", "probe");
      offered = api.features;
    }
    if ((offered & kUffdFeatureWpAsync) == 0) {
      return Error(Code::kUnsupported,
                   "uffd-wp tracking: this kernel's userfaultfd lacks UFFD_FEATURE_WP_ASYNC "
                   "(Linux 6.7 or later)");
    }
    uffd_ = Fd(static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK)));
    if (uffd_.get() < 0) return Errno("userfaultfd", "write-protect tracking");
    uffdio_api api{.api = UFFD_API,
                   .features = kUffdFeatureWpAsync | (offered & kUffdFeatureWpUnpopulated),
                   .ioctls = 0};
    if (ioctl(uffd_.get(), UFFDIO_API, &api) != 0) return Errno("ioctl(UFFDIO_API)", "WP_ASYNC");
    uffdio_register reg{};
    reg.range = {.start = base_, .len = bytes_};
    reg.mode = UFFDIO_REGISTER_MODE_WP;
    if (ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) != 0) {
      return Errno("ioctl(UFFDIO_REGISTER)", "the tracked range");
    }
    pagemap_ = Fd(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    if (pagemap_.get() < 0) return Errno("open", "/proc/self/pagemap");
    // Arms every page, populated or not (WP_UNPOPULATED marks the empty ones).
    uffdio_writeprotect wp{.range = {.start = base_, .len = bytes_},
                           .mode = UFFDIO_WRITEPROTECT_MODE_WP};
    if (ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp) != 0) {
      return Errno("ioctl(UFFDIO_WRITEPROTECT)", "the tracked range");
    }
    // A first scan proves the kernel has PAGEMAP_SCAN before it is relied on.
    DirtyPageSet ignored;
    return Collect(&ignored).Annotate("uffd-wp tracking needs PAGEMAP_SCAN (Linux 6.7)");
  }

  Fd uffd_;
  Fd pagemap_;
};

class SoftDirtyTracker final : public DirtyTracker {
 public:
  static Result<std::unique_ptr<DirtyTracker>> Create(uintptr_t base, size_t bytes) {
    auto t = std::unique_ptr<SoftDirtyTracker>(new SoftDirtyTracker(base, bytes));
    t->pagemap_ = Fd(open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    if (t->pagemap_.get() < 0) return Errno("open", "/proc/self/pagemap");
    CAIRN_RETURN_IF_ERROR(ClearRefs());
    return std::unique_ptr<DirtyTracker>(std::move(t));
  }
  DirtyMethod method() const override { return DirtyMethod::kSoftDirty; }

  Status Collect(DirtyPageSet* out) override {
    *out = EmptySet();
    uint64_t pages = bytes_ / page_size_;
    uint64_t entries[512];
    for (uint64_t first = 0; first < pages; first += std::size(entries)) {
      uint64_t n = std::min<uint64_t>(std::size(entries), pages - first);
      off_t offset = static_cast<off_t>((base_ / page_size_ + first) * sizeof(uint64_t));
      ssize_t got = pread(pagemap_.get(), entries, n * sizeof(uint64_t), offset);
      if (got != static_cast<ssize_t>(n * sizeof(uint64_t))) {
        return Errno("pread", "/proc/self/pagemap");
      }
      for (uint64_t i = 0; i < n; ++i) {
        if (entries[i] & kPagemapSoftDirty) out->Add(first + i);
      }
    }
    return ClearRefs();
  }

  // Clears the soft-dirty bits of the whole process (the kernel has no
  // per-range form); write-protects the PTEs so the next write sets them.
  static Status ClearRefs() {
    Fd fd(open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) return Errno("open", "/proc/self/clear_refs");
    if (write(fd.get(), "4", 1) != 1) return Errno("write", "/proc/self/clear_refs");
    return Status::Ok();
  }

 private:
  using DirtyTracker::DirtyTracker;
  Fd pagemap_;
};

class MprotectTracker;
// The SIGSEGV handler's way to the tracker: a signal handler has no
// argument to carry it (hence at most one mprotect tracker per process).
std::atomic<MprotectTracker*> g_mprotect_tracker{nullptr};
struct sigaction g_previous_segv;

class MprotectTracker final : public DirtyTracker {
 public:
  static Result<std::unique_ptr<DirtyTracker>> Create(uintptr_t base, size_t bytes) {
    auto t = std::unique_ptr<MprotectTracker>(new MprotectTracker(base, bytes));
    MprotectTracker* none = nullptr;
    if (!g_mprotect_tracker.compare_exchange_strong(none, t.get())) {
      return Error(Code::kUnsupported, "mprotect tracking: another range is tracked already "
                                       "(one per process)");
    }
    struct sigaction sa {};
    sa.sa_sigaction = &OnSegv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &g_previous_segv) != 0) {
      g_mprotect_tracker = nullptr;
      return Errno("sigaction", "SIGSEGV");
    }
    t->installed_ = true;
    if (mprotect(reinterpret_cast<void*>(base), bytes, PROT_READ) != 0) {
      return Errno("mprotect", "the tracked range");
    }
    return std::unique_ptr<DirtyTracker>(std::move(t));
  }
  ~MprotectTracker() override {
    if (!installed_) return;
    mprotect(reinterpret_cast<void*>(base_), bytes_, PROT_READ | PROT_WRITE);
    sigaction(SIGSEGV, &g_previous_segv, nullptr);
    g_mprotect_tracker = nullptr;
  }
  DirtyMethod method() const override { return DirtyMethod::kMprotect; }

  Status Collect(DirtyPageSet* out) override {
    *out = EmptySet();
    // Read-only first, then take the bits: a page written in between is
    // reported now and protected again below, so that no later write to it
    // goes unseen.
    if (mprotect(reinterpret_cast<void*>(base_), bytes_, PROT_READ) != 0) {
      return Errno("mprotect", "re-arming the tracked range");
    }
    if (overflowed_.exchange(false)) {
      // The handler gave up on single pages: any page may have been written.
      for (auto& word : bits_) word.store(0);
      out->runs.push_back({0, out->range_pages});
      return Status::Ok();
    }
    for (size_t w = 0; w < bits_.size(); ++w) {
      uint64_t word = bits_[w].exchange(0);
      while (word != 0) {
        int b = __builtin_ctzll(word);
        out->Add(w * 64 + b);
        word &= word - 1;
      }
    }
    for (const auto& run : out->runs) {
      void* at = reinterpret_cast<void*>(base_ + run.first * page_size_);
      if (mprotect(at, run.count * page_size_, PROT_READ) != 0) {
        return Errno("mprotect", "re-arming written pages");
      }
    }
    return Status::Ok();
  }

 private:
  MprotectTracker(uintptr_t base, size_t bytes)
      : DirtyTracker(base, bytes), bits_((bytes / page_size_ + 63) / 64) {}

  // Async-signal-safe: an atomic or and one mprotect.
  static void OnSegv(int sig, siginfo_t* info, void* context) {
    MprotectTracker* t = g_mprotect_tracker.load();
    auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    if (t != nullptr && addr >= t->base_ && addr < t->base_ + t->bytes_) {
      uint64_t page = (addr - t->base_) / t->page_size_;
      t->bits_[page / 64].fetch_or(1ull << (page % 64));
      if (mprotect(reinterpret_cast<void*>(t->base_ + page * t->page_size_), t->page_size_,
                   PROT_READ | PROT_WRITE) != 0) {
        // No mapping left to split one page off (ENOMEM at
        // vm.max_map_count): open the whole range, which merges its
        // mappings, and let the next collection report every page.
        t->overflowed_.store(true);
        mprotect(reinterpret_cast<void*>(t->base_), t->bytes_, PROT_READ | PROT_WRITE);
      }
      return;
    }
    // Not ours: a real fault. Hand it to whoever handled SIGSEGV before,
    // or let it kill the process as it would have.
    if (g_previous_segv.sa_flags & SA_SIGINFO) {
      g_previous_segv.sa_sigaction(sig, info, context);
    } else if (g_previous_segv.sa_handler != SIG_IGN && g_previous_segv.sa_handler != SIG_DFL) {
      g_previous_segv.sa_handler(sig);
    } else {
      signal(SIGSEGV, SIG_DFL);  // the faulting instruction runs again and dies
    }
  }

  std::vector<std::atomic<uint64_t>> bits_;
  std::atomic<bool> overflowed_{false};  // the handler opened the whole range
  bool installed_ = false;
};

// Every page counts as written: what a version costs without tracking.
class NoTracker final : public DirtyTracker {
 public:
  NoTracker(uintptr_t base, size_t bytes) : DirtyTracker(base, bytes) {}
  DirtyMethod method() const override { return DirtyMethod::kNone; }
  Status Collect(DirtyPageSet* out) override {
    *out = EmptySet();
    if (out->range_pages > 0) out->runs.push_back({0, out->range_pages});
    return Status::Ok();
  }
};

// The tracker of one method (not kAuto), without asking whether the kernel
// really offers it.
Result<std::unique_ptr<DirtyTracker>> CreateUnchecked(DirtyMethod method, uintptr_t base,
                                                      size_t bytes) {
  switch (method) {
    case DirtyMethod::kUffdWp: return UffdWpTracker::Create(base, bytes);
    case DirtyMethod::kSoftDirty: return SoftDirtyTracker::Create(base, bytes);
    case DirtyMethod::kMprotect: return MprotectTracker::Create(base, bytes);
    case DirtyMethod::kNone: return std::unique_ptr<DirtyTracker>(new NoTracker(base, bytes));
    case DirtyMethod::kAuto: break;
  }
  return Error(Code::kInvalidArgument, "dirty-page tracking: no method chosen");
}

// Whether a write to a fresh page shows in the method's collection.
bool Probe(DirtyMethod method) {
  long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  bool seen = false;
  {
    auto tracker = CreateUnchecked(method, reinterpret_cast<uintptr_t>(p), page);
    DirtyPageSet set;
    if (tracker.ok()) {
      static_cast<volatile char*>(p)[0] = 1;
      seen = (*tracker)->Collect(&set).ok() && set.pages() == 1;
    }
  }
  munmap(p, page);
  return seen;
}

}  // namespace

Result<DirtyMethod> ParseDirtyMethod(const std::string& text) {
  for (DirtyMethod m : {DirtyMethod::kAuto, DirtyMethod::kUffdWp, DirtyMethod::kSoftDirty,
                        DirtyMethod::kMprotect, DirtyMethod::kNone}) {
    if (text == DirtyMethodName(m)) return m;
  }
  return Error(Code::kInvalidArgument,
               "unknown dirty-page tracking method '{}' (expected auto, uffd-wp, soft-dirty, "
               "mprotect or none)",
               text);
}

uint64_t DirtyPageSet::pages() const {
  uint64_t n = 0;
  for (const Run& r : runs) n += r.count;
  return n;
}

bool DirtyPageSet::Contains(uint64_t page) const {
  auto it = std::upper_bound(runs.begin(), runs.end(), page,
                             [](uint64_t p, const Run& r) { return p < r.first; });
  if (it == runs.begin()) return false;
  --it;
  return page < it->first + it->count;
}

void DirtyPageSet::Add(uint64_t page) {
  if (!runs.empty() && runs.back().first + runs.back().count == page) {
    ++runs.back().count;
  } else {
    runs.push_back({page, 1});
  }
}

void DirtyPageSet::Merge(const DirtyPageSet& other) {
  std::vector<Run> all;
  all.reserve(runs.size() + other.runs.size());
  std::merge(runs.begin(), runs.end(), other.runs.begin(), other.runs.end(),
             std::back_inserter(all), [](const Run& a, const Run& b) { return a.first < b.first; });
  runs.clear();
  for (const Run& r : all) {
    if (!runs.empty() && r.first <= runs.back().first + runs.back().count) {
      uint64_t end = std::max(runs.back().first + runs.back().count, r.first + r.count);
      runs.back().count = end - runs.back().first;
    } else {
      runs.push_back(r);
    }
  }
  range_pages = std::max(range_pages, other.range_pages);
}

DirtyTracker::DirtyTracker(uintptr_t base, size_t bytes)
    : base_(base), bytes_(bytes), page_size_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {}

DirtyPageSet DirtyTracker::EmptySet() const {
  DirtyPageSet set;
  set.base = base_;
  set.page_size = page_size_;
  set.range_pages = bytes_ / page_size_;
  return set;
}

bool DirtyTracker::Available(DirtyMethod method) {
  switch (method) {
    case DirtyMethod::kAuto:
    case DirtyMethod::kNone:
      return true;
    case DirtyMethod::kUffdWp: {
      static const bool available = Probe(DirtyMethod::kUffdWp);
      return available;
    }
    case DirtyMethod::kSoftDirty: {
      // clear_refs succeeds even where the bits do not exist: the probe
      // checks that a write sets the bit.
      static const bool available = Probe(DirtyMethod::kSoftDirty);
      return available;
    }
    case DirtyMethod::kMprotect: {
      static const bool available = g_mprotect_tracker.load() != nullptr ||
                                    Probe(DirtyMethod::kMprotect);
      return available;
    }
  }
  return false;
}

Result<std::unique_ptr<DirtyTracker>> DirtyTracker::Create(DirtyMethod method, void* base,
                                                           size_t bytes) {
  auto b = reinterpret_cast<uintptr_t>(base);
  long page = sysconf(_SC_PAGESIZE);
  if (b % page != 0 || bytes % page != 0 || bytes == 0) {
    return Error(Code::kInvalidArgument,
                 "dirty-page tracking: range {:#x}+{} is not whole pages of {} bytes", b, bytes,
                 page);
  }
  switch (method) {
    case DirtyMethod::kAuto:
      for (DirtyMethod m : {DirtyMethod::kUffdWp, DirtyMethod::kSoftDirty, DirtyMethod::kMprotect}) {
        if (Available(m)) return Create(m, base, bytes);
      }
      return Create(DirtyMethod::kNone, base, bytes);
    case DirtyMethod::kSoftDirty:
      if (!Available(DirtyMethod::kSoftDirty)) {
        return Error(Code::kUnsupported,
                     "soft-dirty tracking: this kernel sets no soft-dirty bits in "
                     "/proc/self/pagemap (CONFIG_MEM_SOFT_DIRTY is off)");
      }
      break;
    default:
      break;
  }
  return CreateUnchecked(method, b, bytes);
}

}  // namespace cairn
