#include "pmem/x86_64/flush_x86.h"

#include <cpuid.h>
#include <immintrin.h>

namespace cairn::pmem::x86 {
namespace {
// CPUID leaf 7, sub-leaf 0, EBX.
constexpr unsigned kEbxAvx2 = 1u << 5;
constexpr unsigned kEbxAvx512f = 1u << 16;
constexpr unsigned kEbxClflushopt = 1u << 23;
constexpr unsigned kEbxClwb = 1u << 24;
// CPUID leaf 1, ECX: the OS saves extended state (XGETBV works).
constexpr unsigned kEcxOsxsave = 1u << 27;
// XCR0: SSE + AVX state (bits 1-2); opmask + ZMM state (bits 5-7).
constexpr uint64_t kXcr0Avx = 0x6;
constexpr uint64_t kXcr0Avx512 = 0xe6;

__attribute__((target("xsave"))) uint64_t ReadXcr0() { return _xgetbv(0); }
}  // namespace

CpuFeatures DetectCpuFeatures() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const uint64_t xcr0 = (ecx & kEcxOsxsave) ? ReadXcr0() : 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  f.clflushopt = (ebx & kEbxClflushopt) != 0;
  f.clwb = (ebx & kEbxClwb) != 0;
  // A vector unit counts only if the OS saves its registers across switches.
  f.avx2 = (ebx & kEbxAvx2) != 0 && (xcr0 & kXcr0Avx) == kXcr0Avx;
  f.avx512f = (ebx & kEbxAvx512f) != 0 && (xcr0 & kXcr0Avx512) == kXcr0Avx512;
  return f;
}

void FlushLinesClflush(uintptr_t first, size_t count) {
  for (size_t i = 0; i < count; ++i) _mm_clflush(reinterpret_cast<const void*>(first + i * kCacheLine));
}

__attribute__((target("clflushopt"))) void FlushLinesClflushopt(uintptr_t first, size_t count) {
  for (size_t i = 0; i < count; ++i) _mm_clflushopt(reinterpret_cast<void*>(first + i * kCacheLine));
}

__attribute__((target("clwb"))) void FlushLinesClwb(uintptr_t first, size_t count) {
  for (size_t i = 0; i < count; ++i) _mm_clwb(reinterpret_cast<void*>(first + i * kCacheLine));
}

void StoreFence() { _mm_sfence(); }

void StreamLinesSse2(void* dst, const void* src, size_t lines) {
  auto* d = static_cast<__m128i*>(dst);
  const auto* s = static_cast<const __m128i*>(src);
  for (size_t i = 0; i < lines; ++i, d += 4, s += 4) {
    __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
    __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
  }
}

__attribute__((target("avx2"))) void StreamLinesAvx2(void* dst, const void* src, size_t lines) {
  auto* d = static_cast<__m256i*>(dst);
  const auto* s = static_cast<const __m256i*>(src);
  for (size_t i = 0; i < lines; ++i, d += 2, s += 2) {
    __m256i a = _mm256_loadu_si256(s), b = _mm256_loadu_si256(s + 1);
    _mm256_stream_si256(d, a);
    _mm256_stream_si256(d + 1, b);
  }
}

__attribute__((target("avx512f"))) void StreamLinesAvx512(void* dst, const void* src,
                                                          size_t lines) {
  auto* d = static_cast<__m512i*>(dst);
  const auto* s = static_cast<const __m512i*>(src);
  for (size_t i = 0; i < lines; ++i, ++d, ++s) _mm512_stream_si512(d, _mm512_loadu_si512(s));
}

}  // namespace cairn::pmem::x86
