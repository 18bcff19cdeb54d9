// The arena's allocator (arena.h). Everything it knows lives in the Header
// at the mapping's first page and in the blocks' own headers, never in this
// object, so that a restored copy of the mapping is a consistent heap.
#include "transparent/arena.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace cairn {
namespace {

constexpr uint64_t kMagic = 0x31616e6572416e43;  // "CnArena1"
constexpr size_t kPage = 4096;
constexpr int kClasses = 12;                 // blocks of 32 << c bytes
constexpr size_t kLargestSmall = 32u << (kClasses - 1);  // 64 KiB, header included
constexpr size_t kChunk = 64 * 1024;         // small blocks are carved this many at a time
constexpr size_t kHeaderBytes = 16;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

int ClassFor(size_t block_bytes) {
  int c = 0;
  while ((32u << c) < block_bytes) ++c;
  return c;
}

}  // namespace

// The first page of the mapping.
struct Arena::Header {
  uint64_t magic;
  uint64_t capacity;
  uint64_t top;                  // offset of the first byte never handed out
  uint64_t small_free[kClasses]; // offsets of free small blocks (0: none)
  uint64_t large_free;           // offset of the first free large block
};

// Precedes every block's payload. Free blocks keep the header and link
// through `next` (small: in the payload; large: likewise).
struct Arena::Block {
  enum Kind : uint32_t { kSmall = 0x5a11, kLarge = 0x1a26, kAligned = 0xa119 };
  uint32_t kind;
  uint32_t cls;     // kSmall: the class
  uint64_t bytes;   // kLarge: block bytes with header; kAligned: offset back to the real payload
  void* payload() { return reinterpret_cast<char*>(this) + kHeaderBytes; }
  uint64_t& next() { return *static_cast<uint64_t*>(payload()); }
};

namespace {
static_assert(sizeof(uint32_t) * 2 + sizeof(uint64_t) == kHeaderBytes);
}  // namespace


Result<uintptr_t> Arena::Reserve(uintptr_t address, size_t capacity) {
  if (address % kPage != 0 || capacity % kPage != 0 || capacity < 2 * kPage) {
    return Error(Code::kInvalidArgument,
                 "arena at {:#x} of {} bytes: address and size must be whole pages", address,
                 capacity);
  }
  void* want = reinterpret_cast<void*>(address);
  void* got = mmap(want, capacity, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED) {
    if (errno == EEXIST) {
      return Error(Code::kMismatch,
                   "arena range {:#x}-{:#x} is already mapped in this process (set "
                   "[transparent] arena_address to a free range; /proc/self/maps shows what is "
                   "there)",
                   address, address + capacity);
    }
    return Error(Code::kIo, "mmap of the arena at {:#x} ({} bytes): {}", address, capacity,
                 std::strerror(errno));
  }
  if (got != want) {  // a kernel older than 4.17 ignores MAP_FIXED_NOREPLACE
    munmap(got, capacity);
    return Error(Code::kMismatch, "arena range {:#x}-{:#x} could not be mapped at that address",
                 address, address + capacity);
  }
  return address;
}

void Arena::Format() {
  MutexLock lock(&mu_);
  Header* h = header();
  std::memset(h, 0, sizeof(Header));
  h->magic = kMagic;
  h->capacity = capacity_;
  h->top = kPage;
}

Status Arena::Check() const {
  const Header* h = header();
  if (h->magic != kMagic || h->capacity != capacity_ || h->top < kPage || h->top > capacity_) {
    return Error(Code::kCorrupt,
                 "arena at {:#x}: the restored heap is not a heap of {} bytes (magic {:#x}, "
                 "capacity {}, top {})",
                 base_, capacity_, h->magic, h->capacity, h->top);
  }
  return Status::Ok();
}

size_t Arena::used() {
  MutexLock lock(&mu_);
  return header()->top;
}

size_t Arena::Freeze() {
  mu_.Lock();
  return header()->top;
}

void Arena::Thaw() { mu_.Unlock(); }

uintptr_t Arena::Carve(size_t bytes) {
  Header* h = header();
  if (bytes > capacity_ - h->top) return 0;
  uintptr_t at = base_ + h->top;
  h->top += bytes;
  return at;
}

void* Arena::Allocate(size_t size) {
  MutexLock lock(&mu_);
  return AllocateLocked(size);
}

void* Arena::AllocateLocked(size_t size) {
  if (size > capacity_) return nullptr;
  size_t block_bytes = RoundUp(size + kHeaderBytes, 16);
  if (block_bytes <= kLargestSmall) return AllocateSmall(ClassFor(block_bytes));
  return AllocateLarge(RoundUp(block_bytes, kPage));
}

void* Arena::AllocateSmall(int cls) {
  Header* h = header();
  size_t block_bytes = 32u << cls;
  if (h->small_free[cls] == 0) {
    uintptr_t chunk = Carve(kChunk);
    if (chunk == 0) return nullptr;
    // Thread the chunk's blocks onto the free list, lowest address first.
    for (size_t off = kChunk; off >= block_bytes; off -= block_bytes) {
      auto* b = reinterpret_cast<Block*>(chunk + off - block_bytes);
      b->kind = Block::kSmall;
      b->cls = static_cast<uint32_t>(cls);
      b->next() = h->small_free[cls];
      h->small_free[cls] = chunk + off - block_bytes - base_;
    }
  }
  auto* b = reinterpret_cast<Block*>(base_ + h->small_free[cls]);
  h->small_free[cls] = b->next();
  return b->payload();
}

void* Arena::AllocateLarge(size_t block_bytes) {
  Header* h = header();
  // First fit among the freed large blocks, splitting off the rest.
  for (uint64_t* link = &h->large_free; *link != 0;) {
    auto* b = reinterpret_cast<Block*>(base_ + *link);
    if (b->bytes >= block_bytes) {
      *link = b->next();
      if (b->bytes - block_bytes >= kPage) {
        auto* rest = reinterpret_cast<Block*>(reinterpret_cast<uintptr_t>(b) + block_bytes);
        rest->kind = Block::kLarge;
        rest->bytes = b->bytes - block_bytes;
        b->bytes = block_bytes;
        FreeLocked(rest);
      }
      return b->payload();
    }
    link = &b->next();
  }
  uintptr_t at = Carve(block_bytes);
  if (at == 0) return nullptr;
  auto* b = reinterpret_cast<Block*>(at);
  b->kind = Block::kLarge;
  b->cls = 0;
  b->bytes = block_bytes;
  return b->payload();
}

void* Arena::AllocateAligned(size_t align, size_t size) {
  if (align <= 16) return Allocate(size);
  if (size > capacity_ || align > capacity_) return nullptr;
  MutexLock lock(&mu_);
  char* raw = static_cast<char*>(AllocateLocked(size + align + kHeaderBytes));
  if (raw == nullptr) return nullptr;
  uintptr_t aligned = RoundUp(reinterpret_cast<uintptr_t>(raw) + kHeaderBytes, align);
  // A header of its own right before the aligned payload leads Free back.
  auto* marker = reinterpret_cast<Block*>(aligned - kHeaderBytes);
  marker->kind = Block::kAligned;
  marker->cls = 0;
  marker->bytes = aligned - reinterpret_cast<uintptr_t>(raw);
  return reinterpret_cast<void*>(aligned);
}

Arena::Block* Arena::BlockOf(const void* p) {
  return reinterpret_cast<Block*>(reinterpret_cast<uintptr_t>(p) - kHeaderBytes);
}

void Arena::Free(void* p) {
  MutexLock lock(&mu_);
  Block* b = BlockOf(p);
  if (b->kind == Block::kAligned) b = BlockOf(static_cast<char*>(p) - b->bytes);
  FreeLocked(b);
}

void Arena::FreeLocked(Block* b) {
  Header* h = header();
  uint64_t offset = reinterpret_cast<uintptr_t>(b) - base_;
  if (b->kind == Block::kSmall) {
    b->next() = h->small_free[b->cls];
    h->small_free[b->cls] = offset;
    return;
  }
  if (offset + b->bytes == h->top) {
    h->top = offset;  // the top shrinks: later checkpoints capture less
    return;
  }
  b->next() = h->large_free;
  h->large_free = offset;
}

size_t Arena::UsableSize(const void* p) {
  MutexLock lock(&mu_);
  Block* b = BlockOf(p);
  size_t shift = 0;
  if (b->kind == Block::kAligned) {
    shift = b->bytes;
    b = BlockOf(static_cast<const char*>(p) - shift);
  }
  size_t block_bytes = b->kind == Block::kSmall ? (32u << b->cls) : b->bytes;
  return block_bytes - kHeaderBytes - shift;
}

}  // namespace cairn
