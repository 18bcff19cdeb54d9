#include "dedup/digest_index.h"

#include <algorithm>
#include <bit>

namespace cairn {

void DigestIndex::Reset(size_t capacity, const std::vector<PageRecord>& records) {
  records_ = &records;
  slots_.assign(std::bit_ceil(std::max<size_t>(2 * capacity, 2)), Slot{});
  mask_ = slots_.size() - 1;
  size_ = 0;
}

size_t DigestIndex::Probe(const PageDigest& digest) const {
  const uint32_t tag = Tag(digest);
  for (size_t i = Home(digest);; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.page == kEmpty) return i;
    // The record is read only where 32 bits of the digest agree.
    if (slot.tag == tag && (*records_)[slot.page].digest == digest) return i;
  }
}

std::optional<size_t> DigestIndex::FindOrAdd(size_t page) {
  const PageDigest& digest = (*records_)[page].digest;
  Slot& slot = slots_[Probe(digest)];
  if (slot.page != kEmpty) return slot.page;
  slot.tag = Tag(digest);
  slot.page = static_cast<uint32_t>(page);
  ++size_;
  return std::nullopt;
}

bool DigestIndex::Contains(const PageDigest& digest) const {
  return slots_[Probe(digest)].page != kEmpty;
}

void DigestIndex::Digests(std::vector<PageDigest>* out) const {
  out->clear();
  out->reserve(size_);
  for (const Slot& slot : slots_) {
    if (slot.page != kEmpty) out->push_back((*records_)[slot.page].digest);
  }
}

}  // namespace cairn
