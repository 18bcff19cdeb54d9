#include "base/vector_state.h"

#include "base/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>
#endif

namespace cairn {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx"))) void ZeroUpper() { _mm256_zeroupper(); }

// CPUID leaf 0xD, sub-leaf 1, EAX: XGETBV with ECX=1 is supported.
constexpr unsigned kEaxXgetbvEcx1 = 1u << 2;
// XINUSE bit of the upper halves of the YMM registers.
constexpr uint64_t kXinuseAvx = 1u << 2;
#else
void ZeroUpper() {}
#endif

}  // namespace

void ClearUpperVectorHalves() {
  static const bool avx = HostCpuFeatures().avx;
  if (avx) ZeroUpper();
}

std::optional<bool> UpperVectorHalvesInUse() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!HostCpuFeatures().avx || !__get_cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx) ||
      (eax & kEaxXgetbvEcx1) == 0) {
    return std::nullopt;
  }
  uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return ((static_cast<uint64_t>(hi) << 32 | lo) & kXinuseAvx) != 0;
#else
  return std::nullopt;
#endif
}

}  // namespace cairn
