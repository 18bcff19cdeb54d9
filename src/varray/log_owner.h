// LogOwner: what a rank does to its own log while no other rank touches it
// (inside the collective version_inc, restore and reload, or on the
// message server under its lock): format it, freeze the current version
// and start the next (paper §III-C: a new metadata set appended, equal to
// the last), roll the current version back, clean the log (§III-E2: copy
// the blocks that retained versions still use to the front, drop the
// rest), and read out a whole version for draining.
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

  // Writes an empty log: version 0 open, every block unwritten.
  void Format(uint64_t lineage);
  // kCorrupt unless the log holds a formatted log of this layout (after a
  // checkpoint restart refilled it), naming the field that differs.
  Status CheckFormat() const;

  uint64_t Read(LogLayout::Word w) const { return Load(8 * w); }
  int64_t version() const { return static_cast<int64_t>(Read(LogLayout::kVersion)); }
  int64_t oldest() const { return static_cast<int64_t>(Read(LogLayout::kOldest)); }
  uint64_t set_of(int64_t version) const { return Load(layout_.slot_offset(version)); }
  // Bytes the log occupies: the structures and the arena up to the tail.
  uint64_t MemoryBytes() const;

  // Freezes the current version and opens the next. When that pushes a
  // version beyond keep, evict(v) runs first (to drain it) and the version
  // is dropped; the log is cleaned when it dropped one and is more than half
  // full, or when the new metadata set does not fit. kNoSpace naming the
  // capacity if it still does not fit (the version stays open then).
  Status StartNextVersion(const std::function<Status(int64_t)>& evict);
  // Makes the current version's contents those of frozen version v.
  // REQUIRES: oldest() <= v < version().
  void RestoreTo(int64_t version);
  // Copies version v's bytes (local_bytes) into out.
  // REQUIRES: oldest() <= v <= version(), out.size() == local_bytes.
  void Materialize(int64_t version, std::span<uint8_t> out) const;
  // Copies the live blocks and sets to the front of the arena; the
  // metadata of the versions kept is rewritten, the generation bumped.
  void Clean();

 private:
  uint64_t Load(uint64_t offset) const;
  void Store(uint64_t offset, uint64_t value);
  void Write(LogLayout::Word w, uint64_t value) { Store(8 * w, value); }
  void ClearClaims();

  std::span<uint8_t> log_;
  LogLayout layout_;
  uint64_t local_bytes_;
};

}  // namespace cairn

#endif  // CAIRN_VARRAY_LOG_OWNER_H_
