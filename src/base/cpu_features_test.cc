#include "base/cpu_features.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace cairn {
namespace {

// The "flags" line of the first processor in /proc/cpuinfo: the kernel's
// reading of the same CPUID bits, masked by what it enabled in XCR0.
std::set<std::string> KernelCpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuFeaturesTest, AgreesWithTheKernel) {
#if !defined(__x86_64__) || !defined(__linux__)
  GTEST_SKIP() << "x86-64 Linux only";
#else
  const std::set<std::string> flags = KernelCpuFlags();
  ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
  const CpuFeatures& f = HostCpuFeatures();
  EXPECT_EQ(f.sse42, flags.count("sse4_2") == 1);
  EXPECT_EQ(f.pclmulqdq, flags.count("pclmulqdq") == 1);
  EXPECT_EQ(f.avx, flags.count("avx") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.vpclmulqdq, flags.count("vpclmulqdq") == 1);
  EXPECT_EQ(f.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(f.clflushopt, flags.count("clflushopt") == 1);
  EXPECT_EQ(f.clwb, flags.count("clwb") == 1);
#endif
}

}  // namespace
}  // namespace cairn
