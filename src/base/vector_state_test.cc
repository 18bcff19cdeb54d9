#include "base/vector_state.h"

#include <gtest/gtest.h>

#include "base/cpu_features.h"

namespace cairn {
namespace {

#if defined(__x86_64__)
// What a library's AVX kernel leaves behind: a 256-bit register written, and
// no vzeroupper (in a function compiled for AVX, GCC would add one).
void DirtyUpperHalves() {
  asm volatile("vpcmpeqb %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");
}
#endif

TEST(VectorStateTest, ClearsWhatAnAvxKernelLeftInUse) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86-64 only";
#else
  if (!HostCpuFeatures().avx2 || !UpperVectorHalvesInUse().has_value()) {
    GTEST_SKIP() << "needs AVX2 and XGETBV with ECX=1";
  }
  DirtyUpperHalves();
  ASSERT_EQ(UpperVectorHalvesInUse(), true);
  ClearUpperVectorHalves();
  EXPECT_EQ(UpperVectorHalvesInUse(), false);
#endif
}

}  // namespace
}  // namespace cairn
