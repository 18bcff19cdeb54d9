#include "dedup/page_view.h"

#include "format/page_table.h"

namespace cairn {

void PageView::Assign(const std::vector<RegionBytes>& regions, uint32_t page_size) {
  page_size_ = page_size;
  total_bytes_ = 0;
  size_t pages = 0;
  for (const RegionBytes& r : regions) pages += PagesIn(r.bytes, page_size);
  pages_.clear();
  pages_.reserve(pages);
  for (const RegionBytes& r : regions) {
    total_bytes_ += r.bytes;
    for (uint64_t offset = 0; offset < r.bytes; offset += page_size) {
      uint64_t rest = r.bytes - offset;
      pages_.push_back({r.data + offset, static_cast<uint32_t>(rest < page_size ? rest : page_size)});
    }
  }
}

}  // namespace cairn
