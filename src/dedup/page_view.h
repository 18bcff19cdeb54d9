// PageView: the protected regions seen as one sequence of pages, the unit
// of deduplication. Pages are cut from each region's first byte (not from
// virtual-memory page boundaries: a region's address need not be aligned,
// and the same data at different addresses must give the same pages), so a
// region has whole pages of page_size and, when its size is not a multiple
// of it, one shorter last page. Regions follow each other in the order
// given (by id, as in the part file); a page never spans two regions.
// Thread-safety: a value; the regions must not change while it is used.
#ifndef CAIRN_DEDUP_PAGE_VIEW_H_
#define CAIRN_DEDUP_PAGE_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cairn {

struct PageSpan {
  const uint8_t* data = nullptr;
  uint32_t length = 0;
};

class PageView {
 public:
  struct RegionBytes {
    int32_t id = 0;
    const uint8_t* data = nullptr;
    uint64_t bytes = 0;
  };
  // REQUIRES: page_size > 0.
  PageView(const std::vector<RegionBytes>& regions, uint32_t page_size) {
    Assign(regions, page_size);
  }
  // No pages.
  PageView() = default;
  // The pages of other regions, in the memory the view has where that is
  // enough (a checkpoint's view is remade in every version).
  // REQUIRES: page_size > 0.
  void Assign(const std::vector<RegionBytes>& regions, uint32_t page_size);

  uint32_t page_size() const { return page_size_; }
  size_t size() const { return pages_.size(); }
  const PageSpan& page(size_t i) const { return pages_[i]; }
  // Whole pages take part in deduplication; a region's shorter last page
  // is always stored as it is.
  bool whole(size_t i) const { return pages_[i].length == page_size_; }
  uint64_t total_bytes() const { return total_bytes_; }

 private:
  uint32_t page_size_ = 0;
  uint64_t total_bytes_ = 0;
  std::vector<PageSpan> pages_;
};

}  // namespace cairn

#endif  // CAIRN_DEDUP_PAGE_VIEW_H_
