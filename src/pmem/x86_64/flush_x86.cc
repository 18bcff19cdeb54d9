#include "pmem/x86_64/flush_x86.h"

#include <immintrin.h>

namespace cairn::pmem::x86 {

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
