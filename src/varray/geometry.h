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
// Words are 64-bit, little-endian as the host stores them.
struct LogLayout {
  // Header words (offset = 8 * index).
  enum Word : uint64_t {
    kMagic = 0,
    kTail = 1,        // next free byte of the arena (fetch-and-add by clients)
    kVersion = 2,     // the open (current) version
    kOldest = 3,      // the oldest version still in memory
    kStartTail = 4,   // tail when the current version began
    kGeneration = 5,  // bumped when blocks move or the current set is replaced
    kBlocks = 6,
    kBlockSize = 7,
    kKeep = 8,
    kCapacity = 9,
    kCleanings = 10,  // log cleanings so far
    kLineage = 11,    // the array's identity (drained files carry it)
    kHeaderWords = 16,
  };
  // Marks memory that holds a varray log (checked when a restart refilled it).
  static constexpr uint64_t kMagicValue = 0x3141594152524156ull;

  uint64_t blocks = 0;      // metadata entries per set
  uint64_t block_size = 0;
  uint64_t keep = 0;        // frozen versions kept in memory
  uint64_t capacity = 0;    // bytes of the whole log

  static LogLayout For(const Geometry& g, uint64_t keep, uint64_t capacity);
  // The default capacity: the structures and keep + 2 metadata sets and
  // copies of the partition, so that a version_inc can always make room
  // even when every version rewrites every block. Only the bytes the log
  // reaches are touched, so the memory used is what the versions need.
  static uint64_t DefaultCapacity(const Geometry& g, uint64_t keep);

  uint64_t ring_slots() const { return keep + 1; }
  uint64_t ring_offset() const { return kHeaderWords * 8; }
  uint64_t slot_offset(int64_t version) const {
    return ring_offset() + 8 * (static_cast<uint64_t>(version) % ring_slots());
  }
  uint64_t claims_offset() const { return ring_offset() + 8 * ring_slots(); }
  uint64_t claim_offset(uint64_t block) const { return claims_offset() + 8 * block; }
  uint64_t set_bytes() const { return 8 * blocks; }
  // The arena starts 64-aligned, after the claims.
  uint64_t arena_offset() const { return (claims_offset() + 8 * blocks + 63) / 64 * 64; }
  static uint64_t entry_offset(uint64_t set, uint64_t block) { return set + 8 * block; }
};

// A metadata entry's value for a block never written: it reads as zeros.
inline constexpr uint64_t kUnwrittenBlock = 0;

}  // namespace cairn

#endif  // CAIRN_VARRAY_GEOMETRY_H_
