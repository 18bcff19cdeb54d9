// Geometry of a versioned array: how its elements are spread over the
// ranks (uniform: rank r owns elements [r*E, min(L, (r+1)*E)) with
// E = ceil(L / ranks)) and cut into fixed-size blocks on each rank, and
// where each rank's log keeps its header, version table, claim words,
// metadata sets and data blocks (docs/varray.md draws it).
// Thread-safety: a value.
#ifndef CAIRN_VARRAY_GEOMETRY_H_
#define CAIRN_VARRAY_GEOMETRY_H_

#include <algorithm>
#include <cstdint>

#include "base/status.h"

namespace cairn {

struct Geometry {
  uint64_t length = 0;      // elements in the whole array
  uint64_t elem_size = 0;   // bytes per element
  uint64_t block_size = 0;  // bytes per block; a multiple of elem_size
  int ranks = 1;

  // kInvalidArgument naming the bad field.
  static Result<Geometry> Make(uint64_t length, uint64_t elem_size, uint64_t block_size,
                               int ranks);

  uint64_t elems_per_rank() const { return (length + ranks - 1) / ranks; }
  uint64_t first_elem(int rank) const {
    return std::min(length, static_cast<uint64_t>(rank) * elems_per_rank());
  }
  uint64_t local_elems(int rank) const {
    return std::min(length, first_elem(rank) + elems_per_rank()) - first_elem(rank);
  }
  uint64_t local_bytes(int rank) const { return local_elems(rank) * elem_size; }
  // Bytes of the largest partition (rank 0's): every rank's log is cut
  // alike so that windows have one size.
  uint64_t max_local_bytes() const { return elems_per_rank() * elem_size; }
  uint64_t blocks_per_rank() const { return (max_local_bytes() + block_size - 1) / block_size; }
  int owner(uint64_t index) const { return static_cast<int>(index / elems_per_rank()); }

  // Calls fn(rank, local_byte_offset, buffer_byte_offset, bytes) for each
  // rank's piece of elements [index, index + count), in rank order.
  // REQUIRES: index + count <= length.
  template <typename Fn>
  Status ForEachPiece(uint64_t index, uint64_t count, Fn&& fn) const {
    uint64_t done = 0;
    while (done < count) {
      const uint64_t at = index + done;
      const int rank = owner(at);
      const uint64_t local = at - first_elem(rank);
      const uint64_t n = std::min(count - done, local_elems(rank) - local);
      CAIRN_RETURN_IF_ERROR(fn(rank, local * elem_size, done * elem_size, n * elem_size));
      done += n;
    }
    return Status::Ok();
  }
};

// Where things lie in one rank's log (log-structured implementations).
// Words are 64-bit, little-endian as the host stores them. The log holds
// one metadata entry per block for the open version (the block table);
// frozen versions are reached through each data block's link to the block
// it replaced, so that version_inc copies no metadata (docs/varray.md).
struct LogLayout {
  // Header words (offset = 8 * index).
  enum Word : uint64_t {
    kMagic = 0,
    kTail = 1,        // next free slot of the arena (fetch-and-add by clients)
    kVersion = 2,     // the open (current) version
    kOldest = 3,      // the oldest version still in memory
    kBlocks = 4,
    kBlockSize = 5,
    kKeep = 6,
    kCapacity = 7,
    kCleanings = 8,   // log cleanings so far
    kLineage = 9,     // the array's identity (drained files carry it)
    kHeaderWords = 16,
  };
  // Marks memory that holds a varray log of this layout (checked when a
  // restart refilled it); "VARRAL02": the block-table layout.
  static constexpr uint64_t kMagicValue = 0x32304c4152524156ull;
  // Entries carry the version in their upper 32 bits.
  static constexpr int64_t kMaxVersion = (int64_t{1} << 32) - 1;
  static constexpr uint64_t kMaxSlots = (uint64_t{1} << 32) - 2;

  uint64_t blocks = 0;      // entries of the block table
  uint64_t block_size = 0;
  uint64_t keep = 0;        // frozen versions kept in memory
  uint64_t capacity = 0;    // bytes of the whole log
  uint64_t slots = 0;       // data blocks the arena holds

  static LogLayout For(const Geometry& g, uint64_t keep, uint64_t capacity);
  // The bytes of a log whose arena holds `slots` blocks.
  static uint64_t CapacityFor(const Geometry& g, uint64_t slots);
  // The default capacity: keep + 2 copies of the partition, so that a
  // version_inc can always make room even when every version rewrites
  // every block. Only the slots the log reaches are touched, so the memory
  // used is what the versions need.
  static uint64_t DefaultCapacity(const Geometry& g, uint64_t keep) {
    return CapacityFor(g, (keep + 2) * g.blocks_per_rank());
  }

  // Claim words, one per block: the version + 1 that last claimed it
  // (fetch-and-add path only).
  uint64_t claims_offset() const { return kHeaderWords * 8; }
  uint64_t claim_offset(uint64_t block) const { return claims_offset() + 8 * block; }
  // The block table: the open version's entry of each block.
  uint64_t table_offset() const { return claims_offset() + 8 * blocks; }
  uint64_t entry_offset(uint64_t block) const { return table_offset() + 8 * block; }
  // Links, one per slot: the entry the slot's block replaced.
  uint64_t links_offset() const { return table_offset() + 8 * blocks; }
  uint64_t link_offset(uint64_t slot) const { return links_offset() + 8 * slot; }
  // The arena of data blocks starts 64-aligned, after the links.
  uint64_t arena_offset() const { return (links_offset() + 8 * slots + 63) / 64 * 64; }
  uint64_t slot_location(uint64_t slot) const { return arena_offset() + slot * block_size; }
  // Bytes a log whose tail is at `tail` occupies: the structures, the links
  // and blocks of the slots in use.
  uint64_t used_bytes(uint64_t tail) const {
    const uint64_t used = std::min(tail, slots);
    return links_offset() + 8 * used + used * block_size;
  }
};

// A metadata entry: 0 for a block never written (it reads as zeros), else
// the version that wrote the block (upper 32 bits) and its slot + 1.
inline constexpr uint64_t kUnwrittenBlock = 0;
inline uint64_t MakeEntry(int64_t version, uint64_t slot) {
  return (static_cast<uint64_t>(version) << 32) | (slot + 1);
}
inline int64_t EntryVersion(uint64_t entry) { return static_cast<int64_t>(entry >> 32); }
inline uint64_t EntrySlot(uint64_t entry) { return (entry & 0xffffffffull) - 1; }

}  // namespace cairn

#endif  // CAIRN_VARRAY_GEOMETRY_H_
