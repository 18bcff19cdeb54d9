#include "varray/log_owner.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace cairn {

uint64_t LogOwner::Load(uint64_t offset) const {
  uint64_t v;
  std::memcpy(&v, log_.data() + offset, 8);
  return v;
}

void LogOwner::Store(uint64_t offset, uint64_t value) {
  std::memcpy(log_.data() + offset, &value, 8);
}

void LogOwner::Format(uint64_t lineage) {
  // Links and blocks are written when a slot is allocated: only the
  // header, the claims and the table (every block unwritten) need zeros.
  std::memset(log_.data(), 0, layout_.links_offset());
  Write(LogLayout::kMagic, LogLayout::kMagicValue);
  Write(LogLayout::kBlocks, layout_.blocks);
  Write(LogLayout::kBlockSize, layout_.block_size);
  Write(LogLayout::kKeep, layout_.keep);
  Write(LogLayout::kCapacity, layout_.capacity);
  Write(LogLayout::kLineage, lineage);
}

Status LogOwner::CheckFormat() const {
  struct Field {
    LogLayout::Word word;
    uint64_t expected;
    const char* name;
  };
  const Field fields[] = {{LogLayout::kMagic, LogLayout::kMagicValue, "magic"},
                          {LogLayout::kBlocks, layout_.blocks, "blocks"},
                          {LogLayout::kBlockSize, layout_.block_size, "block_size"},
                          {LogLayout::kKeep, layout_.keep, "keep"},
                          {LogLayout::kCapacity, layout_.capacity, "log capacity"}};
  for (const Field& f : fields) {
    if (Read(f.word) != f.expected) {
      return Error(Code::kCorrupt, "varray log: {} is {}, the array has {}", f.name,
                   Read(f.word), f.expected);
    }
  }
  if (oldest() > version() || version() > LogLayout::kMaxVersion) {
    return Error(Code::kCorrupt, "varray log: versions {}..{} out of range", oldest(), version());
  }
  return Status::Ok();
}

uint64_t LogOwner::BlockBytes(uint64_t block) const {
  const uint64_t at = block * layout_.block_size;
  return at >= local_bytes_ ? 0 : std::min(layout_.block_size, local_bytes_ - at);
}

uint64_t LogOwner::EntryAt(uint64_t block, int64_t v) const {
  uint64_t e = Entry(block);
  while (e != kUnwrittenBlock && EntryVersion(e) > v) e = Link(e);
  return e;
}

bool LogOwner::CleaningDue(bool dropped) const {
  // A put that found the log full left the tail past the last slot.
  const uint64_t tail = Read(LogLayout::kTail);
  return tail > layout_.slots || (dropped && tail > layout_.slots / 2);
}

bool LogOwner::NextVersionNeedsExclusive(bool draining) const {
  const bool drops = oldest() < version() + 1 - static_cast<int64_t>(layout_.keep);
  return (drops && draining) || CleaningDue(drops);
}

Status LogOwner::StartNextVersion(bool may_clean, const std::function<Status(int64_t)>& evict) {
  const int64_t next = version() + 1;
  bool dropped = false;
  if (oldest() < next - static_cast<int64_t>(layout_.keep)) {
    CAIRN_RETURN_IF_ERROR(evict(oldest()));
    Write(LogLayout::kOldest, static_cast<uint64_t>(oldest() + 1));
    dropped = true;
  }
  if (may_clean && CleaningDue(dropped)) Clean();
  // Nothing else: the table is the new version's as it stands, and an entry
  // written before `next` is replaced (not overwritten) by the first put.
  Write(LogLayout::kVersion, static_cast<uint64_t>(next));
  return Status::Ok();
}

Status LogOwner::RestoreTo(int64_t v) {
  const int64_t open = version();
  // A block of the open version is overwritten in place; any other block
  // that differs from v's gets a fresh slot. Counted first, so that a
  // restore that does not fit changes nothing.
  auto in_place = [&](uint64_t e) { return e != kUnwrittenBlock && EntryVersion(e) == open; };
  uint64_t fresh = 0;
  for (uint64_t b = 0; b < layout_.blocks; ++b) {
    const uint64_t e = Entry(b);
    if (e != EntryAt(b, v) && !in_place(e)) ++fresh;
  }
  uint64_t tail = Read(LogLayout::kTail);
  if (tail > layout_.slots || layout_.slots - tail < fresh) {
    return Error(Code::kNoSpace,
                 "varray log full: restoring version {} needs {} blocks, {} of the log's {} "
                 "are free (raise log_capacity or lower keep)",
                 v, fresh, tail > layout_.slots ? 0 : layout_.slots - tail, layout_.slots);
  }
  for (uint64_t b = 0; b < layout_.blocks; ++b) {
    const uint64_t e = Entry(b);
    const uint64_t want = EntryAt(b, v);
    if (e == want) continue;
    uint64_t target = e;
    if (!in_place(e)) {
      target = MakeEntry(open, tail);
      Store(layout_.link_offset(tail++), e);
      Store(layout_.entry_offset(b), target);
      // Claimed in the open version: a later first put must not replace it.
      Store(layout_.claim_offset(b), static_cast<uint64_t>(open) + 1);
    }
    if (want == kUnwrittenBlock) {
      std::memset(Data(target), 0, layout_.block_size);
    } else {
      std::memcpy(Data(target), Data(want), layout_.block_size);
    }
  }
  Write(LogLayout::kTail, tail);
  return Status::Ok();
}

void LogOwner::Materialize(int64_t v, std::span<uint8_t> out) const {
  for (uint64_t b = 0; b < layout_.blocks; ++b) {
    const uint64_t n = BlockBytes(b);
    if (n == 0) break;
    uint8_t* to = out.data() + b * layout_.block_size;
    const uint64_t e = EntryAt(b, v);
    if (e == kUnwrittenBlock) {
      std::memset(to, 0, n);
    } else {
      std::memcpy(to, Data(e), n);
    }
  }
}

void LogOwner::Clean() {
  // The slots some kept version reaches: each block's chain down to the
  // first entry written at or before the oldest version kept.
  std::vector<uint64_t> live;
  for (uint64_t b = 0; b < layout_.blocks; ++b) {
    for (uint64_t e = Entry(b); e != kUnwrittenBlock; e = Link(e)) {
      live.push_back(EntrySlot(e));
      if (EntryVersion(e) <= oldest()) break;
    }
  }
  std::sort(live.begin(), live.end());
  // The live slots end up in [0, L): those already there stay; those at or
  // past L (the movers) fill the dead slots below L (the holes), both in
  // ascending order. Only as many blocks move as there are holes, so a log
  // whose oldest version was rewritten since moves about that version's
  // blocks, not the whole log.
  const uint64_t count = live.size();
  const uint64_t stay = static_cast<uint64_t>(
      std::lower_bound(live.begin(), live.end(), count) - live.begin());
  std::vector<uint64_t> holes;
  holes.reserve(count - stay);
  for (uint64_t slot = 0, i = 0; slot < count; ++slot) {
    if (i < stay && live[i] == slot) {
      ++i;
    } else {
      holes.push_back(slot);
    }
  }
  // A link to a dropped block becomes "unwritten": only versions no longer
  // kept read through it.
  auto moved = [&](uint64_t e) {
    if (e == kUnwrittenBlock) return e;
    auto it = std::lower_bound(live.begin(), live.end(), EntrySlot(e));
    if (it == live.end() || *it != EntrySlot(e)) return kUnwrittenBlock;
    const uint64_t i = static_cast<uint64_t>(it - live.begin());
    return MakeEntry(EntryVersion(e), i < stay ? live[i] : holes[i - stay]);
  };
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t from = live[i];
    const uint64_t to = i < stay ? from : holes[i - stay];
    Store(layout_.link_offset(to), moved(Load(layout_.link_offset(from))));
    if (to != from) {
      std::memcpy(log_.data() + layout_.slot_location(to),
                  log_.data() + layout_.slot_location(from), layout_.block_size);
    }
  }
  for (uint64_t b = 0; b < layout_.blocks; ++b) {
    Store(layout_.entry_offset(b), moved(Entry(b)));
  }
  Write(LogLayout::kTail, count);
  Write(LogLayout::kCleanings, Read(LogLayout::kCleanings) + 1);
}

}  // namespace cairn
