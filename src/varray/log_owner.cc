#include "varray/log_owner.h"

#include <cstring>
#include <unordered_map>
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
  std::memset(log_.data(), 0, layout_.arena_offset());
  const uint64_t set = layout_.arena_offset();
  std::memset(log_.data() + set, 0, layout_.set_bytes());  // every block unwritten
  Write(LogLayout::kMagic, LogLayout::kMagicValue);
  Write(LogLayout::kBlocks, layout_.blocks);
  Write(LogLayout::kBlockSize, layout_.block_size);
  Write(LogLayout::kKeep, layout_.keep);
  Write(LogLayout::kCapacity, layout_.capacity);
  Write(LogLayout::kLineage, lineage);
  Store(layout_.slot_offset(0), set);
  Write(LogLayout::kTail, set + layout_.set_bytes());
  Write(LogLayout::kStartTail, set + layout_.set_bytes());
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
  const uint64_t tail = Read(LogLayout::kTail);
  if (tail < layout_.arena_offset() || tail > layout_.capacity ||
      Read(LogLayout::kOldest) > Read(LogLayout::kVersion)) {
    return Error(Code::kCorrupt, "varray log: tail {} or versions {}..{} out of range", tail,
                 Read(LogLayout::kOldest), Read(LogLayout::kVersion));
  }
  return Status::Ok();
}

uint64_t LogOwner::MemoryBytes() const {
  // A put past the capacity leaves the tail beyond it (the allocation
  // failed): the log never holds more than its capacity.
  return std::min(Read(LogLayout::kTail), layout_.capacity);
}

void LogOwner::ClearClaims() {
  std::memset(log_.data() + layout_.claims_offset(), 0, 8 * layout_.blocks);
}

Status LogOwner::StartNextVersion(const std::function<Status(int64_t)>& evict) {
  const int64_t next = version() + 1;
  bool dropped = false;
  if (oldest() < next - static_cast<int64_t>(layout_.keep)) {
    CAIRN_RETURN_IF_ERROR(evict(oldest()));
    Write(LogLayout::kOldest, static_cast<uint64_t>(oldest() + 1));
    dropped = true;
  }
  // A failed put may have left the tail past the capacity: its block was
  // never published, and cleaning starts the arena afresh.
  const uint64_t tail = Read(LogLayout::kTail);
  const bool full = tail > layout_.capacity || layout_.capacity - tail < layout_.set_bytes();
  const uint64_t arena = layout_.arena_offset();
  if (full || (dropped && tail - arena > (layout_.capacity - arena) / 2)) Clean();
  const uint64_t set = Read(LogLayout::kTail);
  if (set > layout_.capacity || layout_.capacity - set < layout_.set_bytes()) {
    return Error(Code::kNoSpace,
                 "varray log full: the kept versions use {} of its {} bytes, no room for "
                 "version {}'s metadata (raise log_capacity or lower keep)",
                 set, layout_.capacity, next);
  }
  std::memcpy(log_.data() + set, log_.data() + set_of(version()), layout_.set_bytes());
  Store(layout_.slot_offset(next), set);
  Write(LogLayout::kTail, set + layout_.set_bytes());
  Write(LogLayout::kStartTail, set + layout_.set_bytes());
  Write(LogLayout::kVersion, static_cast<uint64_t>(next));
  ClearClaims();
  return Status::Ok();
}

void LogOwner::RestoreTo(int64_t v) {
  std::memcpy(log_.data() + set_of(version()), log_.data() + set_of(v), layout_.set_bytes());
  // Blocks of the current version are no longer referenced; clients must
  // forget the locations they cached as valid.
  Write(LogLayout::kGeneration, Read(LogLayout::kGeneration) + 1);
  ClearClaims();
}

void LogOwner::Materialize(int64_t v, std::span<uint8_t> out) const {
  const uint64_t set = set_of(v);
  for (uint64_t b = 0; b < layout_.blocks; ++b) {
    const uint64_t at = b * layout_.block_size;
    if (at >= local_bytes_) break;
    const uint64_t n = std::min(layout_.block_size, local_bytes_ - at);
    const uint64_t loc = Load(LogLayout::entry_offset(set, b));
    if (loc == kUnwrittenBlock) {
      std::memset(out.data() + at, 0, n);
    } else {
      std::memcpy(out.data() + at, log_.data() + loc, n);
    }
  }
}

void LogOwner::Clean() {
  // The new arena is built aside, then copied over the old one: sets of
  // the kept versions, oldest first, each followed by the blocks it is the
  // first to use. Blocks keep their place relative to each other.
  const uint64_t arena = layout_.arena_offset();
  std::vector<uint8_t> fresh;
  fresh.reserve(std::min(Read(LogLayout::kTail), layout_.capacity) - arena);
  std::unordered_map<uint64_t, uint64_t> moved;  // old block offset -> new
  for (int64_t v = oldest(); v <= version(); ++v) {
    const uint64_t old_set = set_of(v);
    const uint64_t new_set = arena + fresh.size();
    fresh.resize(fresh.size() + layout_.set_bytes());
    for (uint64_t b = 0; b < layout_.blocks; ++b) {
      uint64_t loc = Load(LogLayout::entry_offset(old_set, b));
      if (loc != kUnwrittenBlock) {
        auto [it, first] = moved.try_emplace(loc, arena + fresh.size());
        if (first) {
          fresh.insert(fresh.end(), log_.data() + loc, log_.data() + loc + layout_.block_size);
        }
        loc = it->second;
      }
      std::memcpy(fresh.data() + (new_set - arena) + 8 * b, &loc, 8);
    }
    Store(layout_.slot_offset(v), new_set);
  }
  std::memcpy(log_.data() + arena, fresh.data(), fresh.size());
  Write(LogLayout::kTail, arena + fresh.size());
  Write(LogLayout::kGeneration, Read(LogLayout::kGeneration) + 1);
  Write(LogLayout::kCleanings, Read(LogLayout::kCleanings) + 1);
}

}  // namespace cairn
