// Fused copy + CRC32C by carry-less multiplication (the folding of Intel's
// "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", which
// ISA-L's crc32_iscsi_by8/by16 use), with a store of every 16 bytes to the
// destination right after they are loaded.
//
// Folding. The CRC is reflected: in a 16-byte lane loaded little-endian,
// bit i holds the coefficient of x^(127 - i) of that lane's polynomial, so
// its low qword (the lane's first 8 bytes) is the high-degree half H and
// its high qword the low half L. Moving a lane D bits further down the
// message multiplies it by x^D; modulo P that is
//     H * (x^(D+64) mod P) + L * (x^D mod P),
// a polynomial of degree < 96 that is XORed into the lane D bits later.
// A carry-less product of a reflected qword and a reflected 32-bit
// constant shifted left by one lands in bits that stand for the product
// times x^-32, which is why the constants are x^(D+32) and x^(D-32).
// Eight lanes (128 bytes) are folded in parallel, so each iteration folds
// by D = 1024 bits, and the eight are folded into one at the end (D = 128).
//
// Finishing. The initial CRC state is XORed into the message's first four
// bytes, which makes the message's polynomial the state's; what is left
// after folding is a 16-byte message with the same remainder, whose CRC
// from a zero state the crc32 instruction computes.
#include "codec/x86_64/copy_crc32c_x86.h"

#include <immintrin.h>

#include <cstring>

#include "base/cpu_features.h"
#include "codec/crc32c.h"
#include "codec/x86_64/xxh3_stripes_x86.h"

namespace cairn::x86 {
namespace {

constexpr size_t kLane = 16;
constexpr size_t kLanes = 8;
constexpr size_t kStride = kLanes * kLane;
// Below this the set-up and the final folds cost more than they save.
constexpr size_t kMinFused = 2 * kStride;
// How far ahead of the loads the source is prefetched. The hardware
// prefetcher alone left the fused copy 10-15 % behind glibc's memcpy of a
// 256 MiB checkpoint (which prefetches too), more so with a rank copying on
// each core; 2 KiB ahead closed the gap on this Zen 3 (1-4 KiB within the
// spread, 8 KiB worse). A prefetch never faults, so reading ahead of the
// source's end is harmless.
constexpr size_t kPrefetchAhead = 2048;

// Prefetches the stride kPrefetchAhead bytes past `at`.
inline void PrefetchStride(const uint8_t* at) {
  static_assert(kStride == 2 * 64, "a stride is two cache lines");
  _mm_prefetch(reinterpret_cast<const char*>(at + kPrefetchAhead), _MM_HINT_T0);
  _mm_prefetch(reinterpret_cast<const char*>(at + kPrefetchAhead + 64), _MM_HINT_T0);
}

// The lane constants for folding D bits forward: for the low qword (H)
// x^(D+32) mod P, for the high one (L) x^(D-32) mod P, each reflected and
// shifted left by one (see above).
struct FoldConstants {
  uint64_t low;
  uint64_t high;
};
constexpr FoldConstants FoldBy(uint32_t bits) {
  return {uint64_t{XPowModCrc32c(bits + 32)} << 1, uint64_t{XPowModCrc32c(bits - 32)} << 1};
}
constexpr FoldConstants kFoldStride = FoldBy(kStride * 8);
constexpr FoldConstants kFoldLane = FoldBy(kLane * 8);

#define CAIRN_PCLMUL_TARGET __attribute__((target("pclmul,sse4.2")))

CAIRN_PCLMUL_TARGET inline __m128i Constants(FoldConstants k) {
  return _mm_set_epi64x(static_cast<long long>(k.high), static_cast<long long>(k.low));
}

// `lane` moved forward by the distance `k` folds, XORed into `next`.
CAIRN_PCLMUL_TARGET inline __m128i Fold(__m128i lane, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11)),
      next);
}

template <bool kStreaming>
CAIRN_PCLMUL_TARGET inline void Store(uint8_t* dst, __m128i v) {
  if constexpr (kStreaming) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), v);
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
  }
}

// The raw CRC state of the message whose last kStride bytes, folded with
// all before them, are `lanes` (lane i is 7 - i lanes before the last).
CAIRN_PCLMUL_TARGET inline uint32_t FinishLanes(const __m128i (&lanes)[kLanes]) {
  const __m128i by_lane = Constants(kFoldLane);
  __m128i folded = lanes[0];
#pragma GCC unroll 8
  for (size_t i = 1; i < kLanes; ++i) folded = Fold(folded, by_lane, lanes[i]);
  uint64_t first = static_cast<uint64_t>(_mm_cvtsi128_si64(folded));
  uint64_t second = static_cast<uint64_t>(_mm_extract_epi64(folded, 1));
  return static_cast<uint32_t>(_mm_crc32_u64(_mm_crc32_u64(0, first), second));
}

// Copies n bytes and returns the raw CRC state (not inverted) after them,
// from the raw state `state`. REQUIRES: n a multiple of kStride, > 0; dst
// 16-byte aligned when streaming.
template <bool kStreaming>
CAIRN_PCLMUL_TARGET uint32_t FoldCopy(uint8_t* dst, const uint8_t* src, size_t n,
                                      uint32_t state) {
  // Fully unrolled, so that the lanes live in registers.
  __m128i lanes[kLanes];
#pragma GCC unroll 8
  for (size_t i = 0; i < kLanes; ++i) {
    lanes[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * kLane));
    Store<kStreaming>(dst + i * kLane, lanes[i]);
  }
  lanes[0] = _mm_xor_si128(lanes[0], _mm_cvtsi32_si128(static_cast<int>(state)));
  const __m128i by_stride = Constants(kFoldStride);
  for (size_t pos = kStride; pos < n; pos += kStride) {
    PrefetchStride(src + pos);
#pragma GCC unroll 8
    for (size_t i = 0; i < kLanes; ++i) {
      __m128i next = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + pos + i * kLane));
      Store<kStreaming>(dst + pos + i * kLane, next);
      lanes[i] = Fold(lanes[i], by_stride, next);
    }
  }
  // The streamed lines are ordered before whatever the caller does next.
  if constexpr (kStreaming) _mm_sfence();
  return FinishLanes(lanes);
}

#define CAIRN_VPCLMUL_TARGET __attribute__((target("avx2,vpclmulqdq,pclmul,sse4.2")))

template <bool kStreaming>
CAIRN_VPCLMUL_TARGET inline void Store256(uint8_t* dst, __m256i v) {
  if constexpr (kStreaming) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), v);
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  }
}

// No more work in the copy's pass than the CRC.
struct NoStrideWork {
  CAIRN_VPCLMUL_TARGET void Stride(__m256i, __m256i, __m256i, __m256i) {}
};

// As FoldCopy, with the same eight lanes held two to a 256-bit register:
// half the instructions, which is what limits FoldCopy (two carry-less
// multiplies per 16 bytes) when the data is in cache. Each stride's bytes,
// once loaded, are also handed to `work` (Xxh3Stripes hashes them).
// REQUIRES: dst 32-byte aligned when streaming.
template <bool kStreaming, typename StrideWork>
CAIRN_VPCLMUL_TARGET uint32_t FoldCopyWide(uint8_t* dst, const uint8_t* src, size_t n,
                                           uint32_t state, StrideWork& work) {
  constexpr size_t kPairs = kLanes / 2;
  constexpr size_t kPair = 2 * kLane;
  static_assert(kPairs == 4, "a stride is four 256-bit vectors");
  __m256i pairs[kPairs];
#pragma GCC unroll 4
  for (size_t i = 0; i < kPairs; ++i) {
    pairs[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * kPair));
    Store256<kStreaming>(dst + i * kPair, pairs[i]);
  }
  work.Stride(pairs[0], pairs[1], pairs[2], pairs[3]);
  pairs[0] = _mm256_xor_si256(pairs[0], _mm256_zextsi128_si256(
                                            _mm_cvtsi32_si128(static_cast<int>(state))));
  const __m256i by_stride = _mm256_broadcastsi128_si256(Constants(kFoldStride));
  for (size_t pos = kStride; pos < n; pos += kStride) {
    PrefetchStride(src + pos);
    __m256i next[kPairs];
#pragma GCC unroll 4
    for (size_t i = 0; i < kPairs; ++i) {
      next[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + pos + i * kPair));
      Store256<kStreaming>(dst + pos + i * kPair, next[i]);
      pairs[i] = _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(pairs[i], by_stride, 0x00),
                                                   _mm256_clmulepi64_epi128(pairs[i], by_stride, 0x11)),
                                  next[i]);
    }
    work.Stride(next[0], next[1], next[2], next[3]);
  }
  if constexpr (kStreaming) _mm_sfence();
  __m128i lanes[kLanes];
#pragma GCC unroll 4
  for (size_t i = 0; i < kPairs; ++i) {
    lanes[2 * i] = _mm256_castsi256_si128(pairs[i]);
    lanes[2 * i + 1] = _mm256_extracti128_si256(pairs[i], 1);
  }
  return FinishLanes(lanes);
}

// The bytes too few to fold: memcpy, and the CRC from ISA-L.
uint32_t CopySmall(uint8_t* dst, const uint8_t* src, size_t n, uint32_t state) {
  std::memcpy(dst, src, n);
  return ~Crc32c(src, n, ~state);
}

// Folded copy with 128-bit (kWide false) or 256-bit registers: the bytes
// before the first aligned destination vector (streaming stores need it)
// and after the last whole stride go through CopySmall.
template <bool kWide>
uint32_t CopyWithCrc32cFolded(void* dst, const void* src, size_t n, uint32_t crc,
                              CopyStores stores) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  uint32_t state = ~crc;
  if (n < kMinFused) return ~CopySmall(d, s, n, state);
  const bool streaming = stores == CopyStores::kStreaming;
  constexpr size_t kAlign = kWide ? 2 * kLane : kLane;
  const size_t head = streaming ? (kAlign - reinterpret_cast<uintptr_t>(d) % kAlign) % kAlign : 0;
  state = CopySmall(d, s, head, state);
  d += head;
  s += head;
  n -= head;
  const size_t folded = n - n % kStride;
  if constexpr (kWide) {
    NoStrideWork none;
    state = streaming ? FoldCopyWide<true>(d, s, folded, state, none)
                      : FoldCopyWide<false>(d, s, folded, state, none);
  } else {
    state = streaming ? FoldCopy<true>(d, s, folded, state) : FoldCopy<false>(d, s, folded, state);
  }
  return ~CopySmall(d + folded, s + folded, n - folded, state);
}

}  // namespace

bool HasPclmulCrc() {
  const CpuFeatures& f = HostCpuFeatures();
  return f.pclmulqdq && f.sse42;
}

bool HasVpclmulAvx2() {
  const CpuFeatures& f = HostCpuFeatures();
  return HasPclmulCrc() && f.avx2 && f.vpclmulqdq;
}

uint32_t CopyWithCrc32cPclmul(void* dst, const void* src, size_t n, uint32_t crc,
                              CopyStores stores) {
  return CopyWithCrc32cFolded<false>(dst, src, n, crc, stores);
}

uint32_t CopyWithCrc32cVpclmul(void* dst, const void* src, size_t n, uint32_t crc,
                               CopyStores stores) {
  return CopyWithCrc32cFolded<true>(dst, src, n, crc, stores);
}

CAIRN_VPCLMUL_TARGET uint32_t CopyWithCrc32cXxh3Vpclmul(void* dst, const void* src, size_t n,
                                                        size_t page, uint32_t crc,
                                                        CopyStores stores, Xxh3Hash128* hashes) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  Xxh3Stripes stripes(page, hashes);
  const uint32_t state = stores == CopyStores::kStreaming
                             ? FoldCopyWide<true>(d, s, n, ~crc, stripes)
                             : FoldCopyWide<false>(d, s, n, ~crc, stripes);
  return ~state;
}

}  // namespace cairn::x86
