#include "format/pmem_array_layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace cairn {
namespace {

std::vector<uint8_t> HeaderPage(const PmemArrayShape& shape) {
  std::vector<uint8_t> page(kPmemArrayHeaderBytes, 0);
  EncodePmemArrayHeader(shape, page.data());
  return page;
}

TEST(PmemArrayLayoutTest, ShapePadsEachCopyToPages) {
  auto shape = PmemArrayShapeFor(1000, 8);
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->copy_bytes, 8192u);
  EXPECT_EQ(shape->FileBytes(), 4096u + 2 * 8192u);
  EXPECT_FALSE(PmemArrayShapeFor(0, 8));
  EXPECT_FALSE(PmemArrayShapeFor(8, 0));
  EXPECT_FALSE(PmemArrayShapeFor(uint64_t{1} << 62, 2));
}

TEST(PmemArrayLayoutTest, HeaderRoundTripsAndRefusesDamageNamingTheFile) {
  const PmemArrayShape shape = *PmemArrayShapeFor(1000, 8);
  std::vector<uint8_t> page = HeaderPage(shape);
  auto back = DecodePmemArrayHeader(page.data(), shape.FileBytes(), "a.pmem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->count, 1000u);
  EXPECT_EQ(back->elem_size, 8u);
  EXPECT_EQ(back->copy_bytes, 8192u);

  auto refused = [](const std::vector<uint8_t>& p, uint64_t size, const char* what) {
    auto h = DecodePmemArrayHeader(p.data(), size, "a.pmem");
    ASSERT_FALSE(h.ok()) << what;
    EXPECT_EQ(h.status().code(), Code::kCorrupt) << what;
    EXPECT_NE(h.status().message().find("a.pmem"), std::string::npos) << what;
  };
  refused(page, shape.FileBytes() - 1, "shorter than both copies");
  refused(page, 100, "shorter than the header page");
  std::vector<uint8_t> flipped = page;
  flipped[17] ^= 1;  // the element size, under the CRC
  refused(flipped, shape.FileBytes(), "CRC");
  // A header whose CRC is right but whose copies are not its elements
  // padded to pages.
  PmemArrayShape inconsistent = shape;
  inconsistent.copy_bytes = 4096;
  refused(HeaderPage(inconsistent), shape.FileBytes(), "copy size");
}

TEST(PmemArrayLayoutTest, TheNewestValidRecordWinsAndATornOneIsSkipped) {
  std::vector<uint8_t> page = HeaderPage(*PmemArrayShapeFor(10, 4));
  EXPECT_FALSE(NewestEpochRecord(page.data())) << "nothing committed yet";
  EncodeEpochRecord({6, 0, EpochMode::kInPlace}, page.data() + kEpochRecordOffset[0]);
  EncodeEpochRecord({7, 1, EpochMode::kCopy}, page.data() + kEpochRecordOffset[1]);
  auto newest = NewestEpochRecord(page.data());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->iteration, 7);
  EXPECT_EQ(newest->consistent, 1);
  EXPECT_EQ(newest->mode, EpochMode::kCopy);
  page[kEpochRecordOffset[1] + 3] ^= 0x10;  // iteration 7's commit was torn
  newest = NewestEpochRecord(page.data());
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->iteration, 6);
  EXPECT_EQ(newest->consistent, 0);
}

}  // namespace
}  // namespace cairn
