// Dirty-page tracking for the transparent mode's arena (docs/transparent.md):
// which pages of a fixed range were written since the tracker was armed or
// last collected, so that a version hashes and writes only those pages
// (DirtyPageSet is the interface an incremental writer, e.g. dedup's, takes).
// Three kernel mechanisms, the best one detected at run time:
//   uffd-wp     userfaultfd write-protection with UFFD_FEATURE_WP_ASYNC: the
//               kernel resolves the fault itself (~1 us per first write) and
//               the PAGEMAP_SCAN ioctl collects and re-arms (~16 ns/page);
//   soft-dirty  bit 55 of /proc/self/pagemap, cleared through clear_refs;
//   mprotect    read-only pages and a SIGSEGV handler (~5 us per first
//               write; a kernel write into a tracked page, e.g. read(2),
//               fails with EFAULT instead of faulting: see the doc). When
//               the kernel cannot split the range into more mappings
//               (ENOMEM at vm.max_map_count), the handler unprotects the
//               whole range and the next collection reports every page:
//               precision is lost for one version, never a write.
// Thread-safety: Collect is called by one thread at a time; writes from any
// thread are tracked. At most one mprotect tracker exists per process (its
// SIGSEGV handler finds it through one process-wide pointer).
#ifndef CAIRN_TRANSPARENT_DIRTY_TRACKER_H_
#define CAIRN_TRANSPARENT_DIRTY_TRACKER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"

namespace cairn {

// DirtyMethod and DirtyMethodName are in base/config.h ([transparent] tracking).
// kInvalidArgument naming the text unless it is one of the names above.
Result<DirtyMethod> ParseDirtyMethod(const std::string& text);

// Pages of one tracked range written since the last collection, as runs of
// page indices relative to `base`, ascending and disjoint.
struct DirtyPageSet {
  struct Run {
    uint64_t first = 0;  // page index
    uint64_t count = 0;
  };
  uintptr_t base = 0;
  size_t page_size = 4096;
  uint64_t range_pages = 0;  // pages tracked
  std::vector<Run> runs;

  uint64_t pages() const;
  bool Contains(uint64_t page) const;  // binary search over runs
  // Appends page (ascending order), merging it into the last run.
  void Add(uint64_t page);
  // This set becomes the union of itself and `other` (same base and page
  // size: pages written over several collections).
  void Merge(const DirtyPageSet& other);
};

class DirtyTracker {
 public:
  // Tracks [base, base + bytes) (page-aligned, mapped private anonymous
  // memory). kAuto picks the first method the kernel offers, in the order
  // above; kNone reports every page as written. kUnsupported naming the
  // method when the kernel lacks it; kIo naming the call that failed.
  static Result<std::unique_ptr<DirtyTracker>> Create(DirtyMethod method, void* base,
                                                      size_t bytes);
  // Whether this kernel offers the method (probes a scratch page once).
  static bool Available(DirtyMethod method);
  virtual ~DirtyTracker() = default;

  virtual DirtyMethod method() const = 0;
  // The pages written since Create or the last Collect, then re-arms, so
  // that the next call reports only later writes.
  virtual Status Collect(DirtyPageSet* out) = 0;

 protected:
  DirtyTracker(uintptr_t base, size_t bytes);
  DirtyPageSet EmptySet() const;
  uintptr_t base_;
  size_t bytes_;
  size_t page_size_;
};

}  // namespace cairn

#endif  // CAIRN_TRANSPARENT_DIRTY_TRACKER_H_
