// ChangedPageMask (engine_dedup.h): turns the pages a dirty-page tracker
// saw written into the planner's per-page mask. A page may skip hashing
// only when nothing can have moved it: the same region at the same
// address, at the same index of the view as in the previous version, whole
// in both, and untouched since that very version. Anything else is hashed.
#include <algorithm>
#include <map>

#include "runtime/engine_dedup.h"

namespace cairn {
namespace {

uint64_t PagesOf(uint64_t bytes, uint64_t page_size) { return (bytes + page_size - 1) / page_size; }

// Where a region's pages were in the previous version's view.
struct PreviousSlot {
  const void* ptr = nullptr;
  uint64_t bytes = 0;
  uint64_t first_page = 0;
};

std::map<int, PreviousSlot> PreviousSlots(const std::vector<Region>& previous, uint32_t page_size) {
  std::map<int, PreviousSlot> slots;
  uint64_t first = 0;
  for (const Region& r : previous) {
    slots[r.id] = {r.ptr, r.bytes(), first};
    first += PagesOf(r.bytes(), page_size);
  }
  return slots;
}

// Whether any noted page overlaps bytes [begin, end) of the region. `next`
// is the first run that may still overlap: the caller asks in ascending
// order, so the runs are walked once per region.
bool Written(const ChangedPages& note, uint64_t begin, uint64_t end, size_t* next) {
  const std::vector<ChangedPages::Run>& runs = note.runs;
  while (*next < runs.size() && (runs[*next].first + runs[*next].count) * note.page_size <= begin) {
    ++*next;
  }
  return *next < runs.size() && runs[*next].first * note.page_size < end;
}

// Marks the clean pages of one region, whose pages start at `first` in
// the mask; returns how many it marked.
uint64_t MarkCleanPages(const Region& r, const PreviousSlot& before, const ChangedPages& note,
                        uint32_t page_size, uint64_t first, std::vector<bool>* mask) {
  uint64_t clean = 0;
  size_t next_run = 0;
  const uint64_t bytes = std::min(r.bytes(), before.bytes);  // pages both versions hold
  for (uint64_t begin = 0; begin + page_size <= bytes; begin += page_size) {
    if (Written(note, begin, begin + page_size, &next_run)) continue;
    (*mask)[first + begin / page_size] = false;
    ++clean;
  }
  return clean;
}

}  // namespace

std::vector<bool> ChangedPageMask(const std::vector<Region>& regions,
                                  const std::vector<Region>& previous_regions, uint32_t page_size,
                                  const ChangedPagesByRegion& notes,
                                  std::optional<int64_t> previous_version) {
  if (notes.empty() || !previous_version) return {};
  const std::map<int, PreviousSlot> slots = PreviousSlots(previous_regions, page_size);
  uint64_t total = 0;
  for (const Region& r : regions) total += PagesOf(r.bytes(), page_size);
  std::vector<bool> mask(total, true);
  uint64_t clean = 0;
  uint64_t first = 0;
  for (const Region& r : regions) {
    auto note = notes.find(r.id);
    auto before = slots.find(r.id);
    const bool trusted = note != notes.end() && before != slots.end() &&
                         note->second.since_version == *previous_version &&
                         note->second.page_size > 0 && note->second.base == r.ptr &&
                         before->second.ptr == r.ptr && before->second.first_page == first;
    if (trusted) clean += MarkCleanPages(r, before->second, note->second, page_size, first, &mask);
    first += PagesOf(r.bytes(), page_size);
  }
  if (clean == 0) return {};
  return mask;
}

}  // namespace cairn
