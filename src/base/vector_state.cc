#include "base/vector_state.h"

#include "base/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cairn {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx"))) void ZeroUpper() { _mm256_zeroupper(); }
#else
void ZeroUpper() {}
#endif

}  // namespace

void ClearUpperVectorHalves() {
  static const bool avx = HostCpuFeatures().avx;
  if (avx) ZeroUpper();
}

}  // namespace cairn
