// What the tests of the copy kernels share: seeded random bytes, and a
// destination buffer with guard bytes on both sides that a copy must leave
// alone.
#ifndef CAIRN_CODEC_COPY_TESTING_H_
#define CAIRN_CODEC_COPY_TESTING_H_

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace cairn::copy_testing {

inline std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

inline constexpr size_t kGuard = 64;
inline constexpr uint8_t kGuardByte = 0xA5;

// Whether the bytes from `begin` up to `to`, and the kGuard after the n
// copied to `to`, still hold kGuardByte.
inline testing::AssertionResult GuardsIntact(const uint8_t* begin, const uint8_t* to, size_t n) {
  for (const uint8_t* p = begin; p < to; ++p) {
    if (*p != kGuardByte) return testing::AssertionFailure() << "wrote before its destination";
  }
  for (const uint8_t* p = to + n; p < to + n + kGuard; ++p) {
    if (*p != kGuardByte) return testing::AssertionFailure() << "wrote past its destination";
  }
  return testing::AssertionSuccess();
}

}  // namespace cairn::copy_testing

#endif  // CAIRN_CODEC_COPY_TESTING_H_
