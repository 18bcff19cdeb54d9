#include "dedup/page_view.h"

namespace cairn {

PageView::PageView(const std::vector<RegionBytes>& regions, uint32_t page_size)
    : page_size_(page_size) {
  for (const RegionBytes& r : regions) {
    total_bytes_ += r.bytes;
    for (uint64_t offset = 0; offset < r.bytes; offset += page_size) {
      uint64_t rest = r.bytes - offset;
      pages_.push_back({r.data + offset, static_cast<uint32_t>(rest < page_size ? rest : page_size)});
    }
  }
}

}  // namespace cairn
