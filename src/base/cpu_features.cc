#include "base/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>
#endif

namespace cairn {
namespace {

#if defined(__x86_64__)
// CPUID leaf 1, ECX.
constexpr unsigned kEcxPclmul = 1u << 1;
constexpr unsigned kEcxSse42 = 1u << 20;
constexpr unsigned kEcxOsxsave = 1u << 27;  // XGETBV works
constexpr unsigned kEcxAvx = 1u << 28;
// CPUID leaf 7, sub-leaf 0, EBX and ECX.
constexpr unsigned kEbxAvx2 = 1u << 5;
constexpr unsigned kEbxAvx512f = 1u << 16;
constexpr unsigned kEbxClflushopt = 1u << 23;
constexpr unsigned kEbxClwb = 1u << 24;
constexpr unsigned kEcxVpclmulqdq = 1u << 10;
// XCR0: SSE + AVX state (bits 1-2); opmask + ZMM state (bits 5-7).
constexpr uint64_t kXcr0Avx = 0x6;
constexpr uint64_t kXcr0Avx512 = 0xe6;

__attribute__((target("xsave"))) uint64_t ReadXcr0() { return _xgetbv(0); }

CpuFeatures Detect() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  f.sse42 = (ecx & kEcxSse42) != 0;
  f.pclmulqdq = (ecx & kEcxPclmul) != 0;
  const uint64_t xcr0 = (ecx & kEcxOsxsave) ? ReadXcr0() : 0;
  const bool avx_state = (xcr0 & kXcr0Avx) == kXcr0Avx;
  f.avx = (ecx & kEcxAvx) != 0 && avx_state;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
  f.avx2 = (ebx & kEbxAvx2) != 0 && avx_state;
  f.vpclmulqdq = (ecx & kEcxVpclmulqdq) != 0 && avx_state;
  f.avx512f = (ebx & kEbxAvx512f) != 0 && (xcr0 & kXcr0Avx512) == kXcr0Avx512;
  f.clflushopt = (ebx & kEbxClflushopt) != 0;
  f.clwb = (ebx & kEbxClwb) != 0;
  return f;
}
#else
CpuFeatures Detect() { return {}; }
#endif

}  // namespace

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

}  // namespace cairn
