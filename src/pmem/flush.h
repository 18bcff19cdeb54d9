// Cache-line flush primitives and non-temporal copy for persistent memory
// (docs/pmem.md; the paper's §2.2 and §3.2). A store reaches persistent
// memory only once its cache line is written back: clflush (blocking,
// invalidates), clflushopt (concurrent, invalidates) or clwb (concurrent,
// keeps the line cached), then a store fence for the concurrent two; or the
// store bypasses the caches (non-temporal, MOVNT*) and needs only the fence.
//
// Each primitive has a portable reference twin with the same signature
// (the ISA-L pattern): the twin flushes with clflush one line at a time and
// copies with memcpy. Which optimized variant runs is chosen once, from
// CPUID, the first time Ops() is called; the variants are compiled with
// target attributes, so the binary runs on any x86-64 (and on other
// architectures the twins are all there is).
// Thread-safety: all functions are thread-safe; a flush of a range another
// thread is writing flushes whatever the line holds at that moment.
#ifndef CAIRN_PMEM_FLUSH_H_
#define CAIRN_PMEM_FLUSH_H_

#include <cstddef>
#include <cstdint>

namespace cairn::pmem {

inline constexpr size_t kCacheLine = 64;

// How lines are written back, best first in Ops()'s choice: clwb,
// clflushopt, clflush.
enum class FlushKind { kClflush, kClflushopt, kClwb };
// Streaming stores of the non-temporal copy: 64, 32 or 16 bytes wide.
enum class CopyKind { kSse2, kAvx2, kAvx512 };
const char* FlushKindName(FlushKind kind);  // "clflush", "clflushopt", "clwb"
const char* CopyKindName(CopyKind kind);    // "sse2", "avx2", "avx512"

// Whether this CPU runs the variant (base/cpu_features.h).
bool Supports(FlushKind kind);
bool Supports(CopyKind kind);

// One set of primitives. flush_lines writes back every line that
// [addr, addr + n) touches and does not wait; drain waits until everything
// flushed or streamed before it is in the persistence domain (sfence, for
// every flush kind: clflush alone would be ordered with later stores, but
// the streaming stores of copy_nt are not). copy_nt copies n bytes with streaming stores
// where dst is line-aligned and ordinary stores plus a flush of the head
// and tail lines elsewhere: after copy_nt and drain, dst[0, n) is persistent.
struct FlushOps {
  FlushKind flush;
  CopyKind copy;
  void (*flush_lines)(const void* addr, size_t n);
  void (*drain)();
  void (*copy_nt)(void* dst, const void* src, size_t n);
};

// The best primitives of this CPU, chosen once.
const FlushOps& Ops();
// The primitives of one variant (tests and benchmarks compare them).
// REQUIRES: Supports(flush) and Supports(copy).
FlushOps OpsFor(FlushKind flush, CopyKind copy);

// Ops().flush_lines then Ops().drain: [addr, addr + n) is persistent.
void Persist(const void* addr, size_t n);

// The reference twins.
void FlushLinesReference(const void* addr, size_t n);
void DrainReference();
void CopyNtReference(void* dst, const void* src, size_t n);

// The cache lines [addr, addr + n) touches: the first line's address and
// how many (0 for n == 0). The one place the line arithmetic lives.
struct LineSpan {
  uintptr_t first = 0;
  size_t count = 0;
};
LineSpan LinesOf(const void* addr, size_t n);

}  // namespace cairn::pmem

#endif  // CAIRN_PMEM_FLUSH_H_
