// Regression tests for the ECC sidecar header reader, from inputs that
// tests/fuzz/fuzz_ecc_header found (also in its corpus).
#include "format/ecc_sidecar_layout.h"

#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "codec/crc32c.h"

namespace cairn {
namespace {

constexpr size_t kReservedAt = 15;    // magic 8, version 4, code, k, m, then the reserved byte
constexpr size_t kPartSizeAt = 20;    // ... shard size 4, then part size 8
constexpr size_t kStripesAt = 28;     // then the stripe count 8

void RestoreHeaderCrc(std::string* header) {
  const uint32_t crc = Crc32c(header->data(), kEccHeaderSize - 4);
  std::memcpy(header->data() + kEccHeaderSize - 4, &crc, 4);
}

TEST(EccSidecarLayoutTest, HeaderRoundTrips) {
  const EccGeometry g = EccGeometryFor(RsCode(RsCodeId::kRs19_16), 74096);
  EXPECT_EQ(g.stripes, 2u);
  auto back = DecodeEccHeader(EncodeEccHeader(g), "s.ecc");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->part_size, 74096u);
  EXPECT_EQ(back->stripes, 2u);
}

// fuzz corpus ecc_header/reserved-byte-set: the byte after m was ignored, so
// two different headers meant the same sidecar.
TEST(EccSidecarLayoutTest, ReservedByteMustBeZero) {
  std::string header = EncodeEccHeader(EccGeometryFor(RsCode(RsCodeId::kRs36_32), 8196));
  header[kReservedAt] = 0x57;
  RestoreHeaderCrc(&header);
  auto g = DecodeEccHeader(header, "s.ecc");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kCorrupt);
  EXPECT_NE(g.status().message().find("'s.ecc': reserved byte"), std::string::npos)
      << g.status().message();
}

// fuzz corpus ecc_header/huge-part-zero-stripes: the stripe count of a part
// near 2^64 bytes wrapped to 0, so a header claiming such a part and no
// stripes passed its own consistency check.
TEST(EccSidecarLayoutTest, StripeCountOfAHugePartDoesNotWrap) {
  const RsCode code(RsCodeId::kRs36_32);
  const uint64_t stripe_bytes = uint64_t{32} * kEccShardSize;
  EXPECT_EQ(EccGeometryFor(code, UINT64_MAX).stripes, UINT64_MAX / stripe_bytes + 1);
  std::string header = EncodeEccHeader(EccGeometryFor(code, 1));
  const uint64_t huge = UINT64_MAX, none = 0;
  std::memcpy(header.data() + kPartSizeAt, &huge, 8);
  std::memcpy(header.data() + kStripesAt, &none, 8);
  RestoreHeaderCrc(&header);
  auto g = DecodeEccHeader(header, "s.ecc");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kCorrupt);
  EXPECT_NE(g.status().message().find("bad stripe count"), std::string::npos)
      << g.status().message();
}

}  // namespace
}  // namespace cairn
