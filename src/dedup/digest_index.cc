#include "dedup/digest_index.h"

#include <algorithm>
#include <bit>

namespace cairn {

DigestIndex::DigestIndex(size_t capacity)
    : slots_(std::bit_ceil(std::max<size_t>(2 * capacity, 2))), mask_(slots_.size() - 1) {}

size_t DigestIndex::Probe(const PageDigest& digest) const {
  for (size_t i = Home(digest);; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.page == kEmpty || slot.digest == digest) return i;
  }
}

std::optional<size_t> DigestIndex::FindOrAdd(const PageDigest& digest, size_t page) {
  Slot& slot = slots_[Probe(digest)];
  if (slot.page != kEmpty) return slot.page;
  slot.digest = digest;
  slot.page = page;
  ++size_;
  return std::nullopt;
}

bool DigestIndex::Contains(const PageDigest& digest) const {
  return slots_[Probe(digest)].page != kEmpty;
}

std::vector<PageDigest> DigestIndex::Digests() const {
  std::vector<PageDigest> out;
  out.reserve(size_);
  for (const Slot& slot : slots_) {
    if (slot.page != kEmpty) out.push_back(slot.digest);
  }
  return out;
}

}  // namespace cairn
