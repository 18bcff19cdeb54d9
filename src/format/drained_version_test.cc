#include "format/drained_version.h"

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(DrainedVersionTest, HeaderRoundTripsAndMatchesTheDocumentedBytes) {
  const DrainedHeader h{0x0102030405060708ull, 42, 3, 100, 0xdeadbeef};
  const std::string bytes = EncodeDrainedHeader(h);
  ASSERT_EQ(bytes.size(), kDrainedHeaderBytes);
  // docs/format.md: the magic's little-endian bytes spell "VARRAD1".
  EXPECT_EQ(bytes.substr(0, 8), std::string("VARRAD1\0", 8));
  EXPECT_EQ(static_cast<uint8_t>(bytes[8]), 0x08);  // lineage, low byte first
  auto back = DecodeDrainedHeader(bytes, kDrainedHeaderBytes + 100, "v42.vad");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->lineage, h.lineage);
  EXPECT_EQ(back->version, 42);
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->bytes, 100u);
  EXPECT_EQ(back->crc, 0xdeadbeefu);
}

TEST(DrainedVersionTest, RefusesWhatIsNotADrainedVersionNamingTheFile) {
  const std::string good = EncodeDrainedHeader({1, 2, 3, 10, 4});
  auto refused = [](const std::string& head, uint64_t size, const char* what) {
    auto h = DecodeDrainedHeader(head, size, "r3/v2.vad");
    ASSERT_FALSE(h.ok()) << what;
    EXPECT_EQ(h.status().code(), Code::kCorrupt) << what;
    EXPECT_NE(h.status().message().find("r3/v2.vad"), std::string::npos) << what;
  };
  refused(good.substr(0, 47), 47, "shorter than the header");
  refused(good, kDrainedHeaderBytes + 9, "a byte missing");
  refused(good, kDrainedHeaderBytes + 11, "a byte too many");
  std::string bad_magic = good;
  bad_magic[0] ^= 1;
  refused(bad_magic, kDrainedHeaderBytes + 10, "magic");
  std::string negative_version = good;
  negative_version[23] = '\x80';
  refused(negative_version, kDrainedHeaderBytes + 10, "negative version");
  std::string wide_crc = good;
  wide_crc[44] = 1;
  refused(wide_crc, kDrainedHeaderBytes + 10, "CRC wider than 32 bits");
}

}  // namespace
}  // namespace cairn
