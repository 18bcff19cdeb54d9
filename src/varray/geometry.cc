#include "varray/geometry.h"

namespace cairn {

Result<Geometry> Geometry::Make(uint64_t length, uint64_t elem_size, uint64_t block_size,
                                int ranks) {
  if (length == 0) return Error(Code::kInvalidArgument, "varray length is 0");
  if (elem_size == 0) return Error(Code::kInvalidArgument, "varray elem_size is 0");
  if (block_size == 0 || block_size % elem_size != 0) {
    return Error(Code::kInvalidArgument,
                 "varray block_size {} is not a positive multiple of elem_size {}", block_size,
                 elem_size);
  }
  if (block_size % 8 != 0) {
    return Error(Code::kInvalidArgument, "varray block_size {} is not a multiple of 8",
                 block_size);
  }
  if (ranks <= 0) return Error(Code::kInvalidArgument, "varray over {} ranks", ranks);
  if (length > (uint64_t{1} << 62) / elem_size) {
    return Error(Code::kInvalidArgument, "varray of {} elements of {} bytes is too large",
                 length, elem_size);
  }
  Geometry g;
  g.length = length;
  g.elem_size = elem_size;
  g.block_size = block_size;
  g.ranks = ranks;
  return g;
}

LogLayout LogLayout::For(const Geometry& g, uint64_t keep, uint64_t capacity) {
  LogLayout l;
  l.blocks = g.blocks_per_rank();
  l.block_size = g.block_size;
  l.keep = keep;
  l.capacity = capacity != 0 ? capacity : DefaultCapacity(g, keep);
  // The most slots whose links and blocks fit after the table (64 bytes
  // spare for the arena's alignment).
  const uint64_t fixed = l.links_offset() + 64;
  l.slots = l.capacity > fixed ? std::min(kMaxSlots, (l.capacity - fixed) / (l.block_size + 8)) : 0;
  return l;
}

uint64_t LogLayout::CapacityFor(const Geometry& g, uint64_t slots) {
  LogLayout l;
  l.blocks = g.blocks_per_rank();
  l.block_size = g.block_size;
  return l.links_offset() + 64 + slots * (l.block_size + 8);
}

}  // namespace cairn
