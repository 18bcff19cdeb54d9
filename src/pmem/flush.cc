#include "pmem/flush.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/cpu_features.h"

#if defined(__x86_64__)
#include "pmem/x86_64/flush_x86.h"
#endif

namespace cairn::pmem {
namespace {

using LinesFn = void (*)(uintptr_t first, size_t count);
using StreamFn = void (*)(void* dst, const void* src, size_t lines);

// Below this many bytes a streaming copy is not worth its fence: ordinary
// stores and a flush of the (few) lines do the same job.
constexpr size_t kMinStreamBytes = 4 * kCacheLine;

template <LinesFn lines>
void FlushLinesWith(const void* addr, size_t n) {
  LineSpan span = LinesOf(addr, n);
  lines(span.first, span.count);
}

// The part of a copy that streams is the line-aligned middle of dst; the
// unaligned head and tail go through the cache and are flushed.
template <StreamFn stream, LinesFn lines>
void CopyNtWith(void* dst, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  size_t head = (kCacheLine - reinterpret_cast<uintptr_t>(d) % kCacheLine) % kCacheLine;
  if (n < kMinStreamBytes || head >= n) {
    std::memcpy(d, s, n);
    FlushLinesWith<lines>(d, n);
    return;
  }
  std::memcpy(d, s, head);
  FlushLinesWith<lines>(d, head);
  size_t body_lines = (n - head) / kCacheLine;
  stream(d + head, s + head, body_lines);
  size_t done = head + body_lines * kCacheLine;
  std::memcpy(d + done, s + done, n - done);
  FlushLinesWith<lines>(d + done, n - done);
}

#if defined(__x86_64__)
template <LinesFn lines>
void (*CopyFor(CopyKind copy))(void*, const void*, size_t) {
  switch (copy) {
    case CopyKind::kAvx512: return CopyNtWith<x86::StreamLinesAvx512, lines>;
    case CopyKind::kAvx2: return CopyNtWith<x86::StreamLinesAvx2, lines>;
    case CopyKind::kSse2: break;
  }
  return CopyNtWith<x86::StreamLinesSse2, lines>;
}

FlushOps Compose(FlushKind flush, CopyKind copy) {
  switch (flush) {
    case FlushKind::kClwb:
      return {flush, copy, FlushLinesWith<x86::FlushLinesClwb>, x86::StoreFence,
              CopyFor<x86::FlushLinesClwb>(copy)};
    case FlushKind::kClflushopt:
      return {flush, copy, FlushLinesWith<x86::FlushLinesClflushopt>, x86::StoreFence,
              CopyFor<x86::FlushLinesClflushopt>(copy)};
    case FlushKind::kClflush: break;
  }
  return {flush, copy, FlushLinesWith<x86::FlushLinesClflush>, x86::StoreFence,
          CopyFor<x86::FlushLinesClflush>(copy)};
}
#else
// No cache-control instructions known here: the reference twins (fences
// only) are all there is.
FlushOps Compose(FlushKind flush, CopyKind copy) {
  return {flush, copy, FlushLinesReference, DrainReference, CopyNtReference};
}
#endif

FlushOps ChooseBest() {
  const CpuFeatures& f = HostCpuFeatures();
  FlushKind flush = f.clwb         ? FlushKind::kClwb
                    : f.clflushopt ? FlushKind::kClflushopt
                                   : FlushKind::kClflush;
  CopyKind copy = f.avx512f ? CopyKind::kAvx512 : f.avx2 ? CopyKind::kAvx2 : CopyKind::kSse2;
  return Compose(flush, copy);
}

}  // namespace

const char* FlushKindName(FlushKind kind) {
  switch (kind) {
    case FlushKind::kClflush: return "clflush";
    case FlushKind::kClflushopt: return "clflushopt";
    case FlushKind::kClwb: return "clwb";
  }
  return "?";
}

const char* CopyKindName(CopyKind kind) {
  switch (kind) {
    case CopyKind::kSse2: return "sse2";
    case CopyKind::kAvx2: return "avx2";
    case CopyKind::kAvx512: return "avx512";
  }
  return "?";
}

bool Supports(FlushKind kind) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (kind) {
    case FlushKind::kClflush: return true;  // baseline x86-64 (SSE2)
    case FlushKind::kClflushopt: return f.clflushopt;
    case FlushKind::kClwb: return f.clwb;
  }
  return false;
}

bool Supports(CopyKind kind) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (kind) {
    case CopyKind::kSse2: return true;  // baseline x86-64
    case CopyKind::kAvx2: return f.avx2;
    case CopyKind::kAvx512: return f.avx512f;
  }
  return false;
}

const FlushOps& Ops() {
  static const FlushOps ops = ChooseBest();
  return ops;
}

FlushOps OpsFor(FlushKind flush, CopyKind copy) { return Compose(flush, copy); }

void Persist(const void* addr, size_t n) {
  const FlushOps& ops = Ops();
  ops.flush_lines(addr, n);
  ops.drain();
}

LineSpan LinesOf(const void* addr, size_t n) {
  if (n == 0) return {};
  uintptr_t begin = reinterpret_cast<uintptr_t>(addr);
  uintptr_t first = begin & ~uintptr_t{kCacheLine - 1};
  uintptr_t end = begin + n;
  return {first, (end - first + kCacheLine - 1) / kCacheLine};
}

void FlushLinesReference(const void* addr, size_t n) {
#if defined(__x86_64__)
  // One line at a time, the most portable of the three (paper, Fig. 1).
  uintptr_t begin = reinterpret_cast<uintptr_t>(addr);
  for (uintptr_t line = begin & ~uintptr_t{kCacheLine - 1}; line < begin + n;
       line += kCacheLine) {
    x86::FlushLinesClflush(line, 1);
  }
#else
  (void)addr;
  (void)n;
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

void DrainReference() {
#if defined(__x86_64__)
  x86::StoreFence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

void CopyNtReference(void* dst, const void* src, size_t n) {
  std::memcpy(dst, src, n);
  FlushLinesReference(dst, n);
}

}  // namespace cairn::pmem
