// Arena: the heap of a transparent-mode process (docs/transparent.md). One
// private anonymous mapping at a fixed virtual address, whose bookkeeping
// (free lists, the high-water mark) lives inside the mapping itself: the
// bytes [base, base + used()) are the whole heap, allocator state included,
// so a copy of them written back at the same address after a restart is
// again a working heap whose pointers are all valid.
// Blocks: size classes of 32 B to 64 KiB (16-byte header each) carved from
// 64 KiB chunks; larger blocks are whole pages, reused first-fit, and a
// block freed at the top lowers the high-water mark.
// Thread-safety: every method may be called from any thread (one lock);
// Owns is lock-free.
#ifndef CAIRN_TRANSPARENT_ARENA_H_
#define CAIRN_TRANSPARENT_ARENA_H_

#include <cstddef>
#include <cstdint>

#include "base/mutex.h"
#include "base/status.h"

namespace cairn {

class Arena {
 public:
  // Maps `capacity` bytes (reserved, not committed: MAP_NORESERVE) at
  // exactly `address`, both page-aligned. kMismatch naming the range when
  // something is mapped there already (the arena must sit where its
  // pointers point); kIo naming the call otherwise. The mapping lives until
  // the process ends.
  static Result<uintptr_t> Reserve(uintptr_t address, size_t capacity);

  // An arena over a range Reserve mapped; Format makes it an empty heap.
  Arena(uintptr_t base, size_t capacity) : base_(base), capacity_(capacity) {}
  void Format();
  // kCorrupt unless the range holds a heap of this capacity (after a restore).
  Status Check() const;

  // nullptr when the arena is full (or size is absurd). 16-byte aligned.
  void* Allocate(size_t size);
  // align: a power of two; nullptr when full.
  void* AllocateAligned(size_t align, size_t size);
  // p: a pointer this arena returned (Owns(p)), not yet freed.
  void Free(void* p);
  size_t UsableSize(const void* p);
  bool Owns(const void* p) const {
    auto a = reinterpret_cast<uintptr_t>(p);
    return a >= base_ && a < base_ + capacity_;
  }

  uintptr_t base() const { return base_; }
  size_t capacity() const { return capacity_; }
  // Bytes from base that hold the heap: what a checkpoint captures.
  size_t used();
  // Holds the arena still while a checkpoint copies it (other threads'
  // allocations wait): returns used(); Thaw lets them go on.
  size_t Freeze() ACQUIRE(mu_);
  void Thaw() RELEASE(mu_);

 private:
  struct Header;
  struct Block;
  Header* header() const { return reinterpret_cast<Header*>(base_); }
  void* AllocateLocked(size_t size) REQUIRES(mu_);
  void* AllocateSmall(int cls) REQUIRES(mu_);
  void* AllocateLarge(size_t block_bytes) REQUIRES(mu_);
  void FreeLocked(Block* block) REQUIRES(mu_);
  // Bytes from the top (the high-water mark grows); 0 when full.
  uintptr_t Carve(size_t bytes) REQUIRES(mu_);
  static Block* BlockOf(const void* p);

  const uintptr_t base_;
  const size_t capacity_;
  Mutex mu_;
};

}  // namespace cairn

#endif  // CAIRN_TRANSPARENT_ARENA_H_
