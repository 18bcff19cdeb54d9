#include "codec/crc32c.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(Crc32cTest, KnownVector) {
  // The CRC32C check value of "123456789" (RFC 3720 B.4 lists the same code).
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32cReference("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(Crc32cTest, MatchesReferenceTwin) {
  const uint32_t seed = 20261122;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::vector<uint8_t> data(1 << 16);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t n : {1u, 7u, 8u, 63u, 64u, 1000u, 4096u, 65536u}) {
    for (size_t off : {0u, 1u, 3u}) {
      if (off + n > data.size()) continue;
      EXPECT_EQ(Crc32c(data.data() + off, n), Crc32cReference(data.data() + off, n))
          << "n=" << n << " off=" << off;
    }
  }
}

TEST(Crc32cTest, ExtendsAcrossPieces) {
  std::string s = "checkpoint data split in pieces";
  uint32_t whole = Crc32c(s.data(), s.size());
  uint32_t part = Crc32c(s.data(), 10);
  EXPECT_EQ(Crc32c(s.data() + 10, s.size() - 10, part), whole);
}

}  // namespace
}  // namespace cairn
