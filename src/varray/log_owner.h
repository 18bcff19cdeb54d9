// LogOwner: what a rank does to its own log while no other rank writes
// what it touches (inside the collective version_inc, restore and reload,
// or on the message server under its lock): format it, freeze the current
// version and start the next (paper §III-C; here O(1): the block table
// stays, and a block first written in the new version will link to the
// one it replaces), roll the current version back, clean the log
// (§III-E2: keep the blocks that retained versions still reach, packed to
// the front; drop the rest), and read out a whole version for draining.
// Thread-safety: none; the caller serializes.
#ifndef CAIRN_VARRAY_LOG_OWNER_H_
#define CAIRN_VARRAY_LOG_OWNER_H_

#include <cstdint>
#include <functional>
#include <span>

#include "base/status.h"
#include "varray/geometry.h"

namespace cairn {

class LogOwner {
 public:
  // log: this rank's whole log (layout.capacity bytes); local_bytes: the
  // bytes of the array this rank owns.
  LogOwner(std::span<uint8_t> log, const LogLayout& layout, uint64_t local_bytes)
      : log_(log), layout_(layout), local_bytes_(local_bytes) {}

  // Writes an empty log: version 0 open, every block unwritten. Touches
  // the header, claims and table only.
  void Format(uint64_t lineage);
  // kCorrupt unless the log holds a formatted log of this layout (after a
  // checkpoint restart refilled it), naming the field that differs.
  Status CheckFormat() const;

  uint64_t Read(LogLayout::Word w) const { return Load(8 * w); }
  int64_t version() const { return static_cast<int64_t>(Read(LogLayout::kVersion)); }
  int64_t oldest() const { return static_cast<int64_t>(Read(LogLayout::kOldest)); }
  // Bytes the log occupies: the structures and the slots up to the tail.
  uint64_t MemoryBytes() const { return layout_.used_bytes(Read(LogLayout::kTail)); }

  // Whether the next StartNextVersion, allowed to clean, would touch what
  // other ranks access (it drains a version leaving memory, or cleans):
  // then no rank may access the log until it is done. Decided on the tail
  // as it is now.
  bool NextVersionNeedsExclusive(bool draining) const;
  // Freezes the current version and opens the next. When that pushes a
  // version beyond keep, evict(v) runs first (to drain it) and the version
  // is dropped. With may_clean, the log is cleaned when it dropped one and
  // is more than half full, or when a put found it full.
  // REQUIRES: version() < LogLayout::kMaxVersion.
  Status StartNextVersion(bool may_clean, const std::function<Status(int64_t)>& evict);
  // Makes the current version's contents those of frozen version v: blocks
  // that differ get a block of the current version holding v's bytes.
  // kNoSpace naming the capacity when those do not fit (nothing changed).
  // REQUIRES: oldest() <= v < version().
  Status RestoreTo(int64_t version);
  // Copies version v's bytes (local_bytes) into out.
  // REQUIRES: oldest() <= v <= version(), out.size() == local_bytes.
  void Materialize(int64_t version, std::span<uint8_t> out) const;
  // Packs the blocks that the versions kept reach to the front of the
  // arena (moving only those past the new tail, into the dead slots below
  // it) and rewrites the table and links.
  void Clean();

 private:
  uint64_t Load(uint64_t offset) const;
  void Store(uint64_t offset, uint64_t value);
  void Write(LogLayout::Word w, uint64_t value) { Store(8 * w, value); }
  uint64_t Entry(uint64_t block) const { return Load(layout_.entry_offset(block)); }
  uint64_t Link(uint64_t entry) const { return Load(layout_.link_offset(EntrySlot(entry))); }
  uint8_t* Data(uint64_t entry) { return log_.data() + layout_.slot_location(EntrySlot(entry)); }
  const uint8_t* Data(uint64_t entry) const {
    return log_.data() + layout_.slot_location(EntrySlot(entry));
  }
  // The entry through which version v reads the block: the first on its
  // chain of links written in v or before.
  uint64_t EntryAt(uint64_t block, int64_t version) const;
  // Whether cleaning is due: a put found the log full, or a version was
  // dropped and the log is more than half full.
  bool CleaningDue(bool dropped) const;
  // Bytes of the block's data within the partition (the last may be short).
  uint64_t BlockBytes(uint64_t block) const;

  std::span<uint8_t> log_;
  LogLayout layout_;
  uint64_t local_bytes_;
};

}  // namespace cairn

#endif  // CAIRN_VARRAY_LOG_OWNER_H_
