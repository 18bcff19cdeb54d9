#include <random>

#include <gtest/gtest.h>

#include "format/layout.h"
#include "format/manifest.h"
#include "format/part.h"

namespace cairn {
namespace {

TEST(LayoutTest, NamesAreValidated) {
  EXPECT_TRUE(ValidateName("name", "heat-2d_v1.0").ok());
  for (const std::string& bad : std::vector<std::string>{"", "../x", "a/b", ".hidden", "sp ace", std::string(10000, 'a'),
                          std::string("nul\0x", 5)}) {
    Status s = ValidateName("checkpoint name", bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("checkpoint name"), std::string::npos);
  }
  EXPECT_NE(ValidateName("n", std::string(10000, 'a')).message().find("10000"), std::string::npos);
}

TEST(LayoutTest, FileNamesRoundTrip) {
  EXPECT_EQ(ManifestFileName(3), "r000003.manifest");
  EXPECT_EQ(PartFileName(3), "r000003.part");
  EXPECT_EQ(RankFilePrefix(3), "r000003.");
  EXPECT_EQ(ParseManifestFileName("r000003.manifest"), 3);
  EXPECT_FALSE(ParseManifestFileName("r000003.part").has_value());
  EXPECT_EQ(ParseRankFilePrefix("r000012.part"), 12);
  EXPECT_EQ(ParseRankFilePrefix("r000012.f.out.dat"), 12);
  EXPECT_FALSE(ParseRankFilePrefix("rabcdef.part").has_value());
  EXPECT_FALSE(ParseRankFilePrefix("r00001.part").has_value());
  EXPECT_FALSE(ParseRankFilePrefix("r000001").has_value());
  EXPECT_EQ(RoutedFileName(1, "out.dat"), "r000001.f.out.dat");
}

PartHeader SampleHeader() {
  PartHeader h;
  h.name = "heat";
  h.version = 7;
  h.rank = 2;
  h.nranks = 4;
  h.regions = {{0, 8, 1000, 0}, {5, 1, 3, 0}};
  h.Layout();
  return h;
}

TEST(PartTest, HeaderRoundTripAndAlignment) {
  PartHeader h = SampleHeader();
  EXPECT_EQ(h.regions[0].offset % kRegionAlign, 0u);
  EXPECT_EQ(h.regions[1].offset, AlignUp(h.regions[0].offset + 8000, kRegionAlign));
  EXPECT_EQ(h.FileSize(), h.regions[1].offset + 3);
  std::string bytes = h.Encode();
  ASSERT_EQ(bytes.size(), h.HeaderBytes());
  auto size = PartHeaderSize(bytes.substr(0, 16), "p");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, bytes.size());
  auto back = DecodePartHeader(bytes, "p");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, "heat");
  EXPECT_EQ(back->version, 7);
  EXPECT_EQ(back->rank, 2);
  ASSERT_EQ(back->regions.size(), 2u);
  EXPECT_EQ(back->regions[1].id, 5);
  EXPECT_EQ(back->regions[1].offset, h.regions[1].offset);
}

TEST(PartTest, EveryFlippedHeaderByteIsDetected) {
  std::string bytes = SampleHeader().Encode();
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x10;
    auto size = PartHeaderSize(bad.substr(0, 16), "p");
    if (!size.ok()) continue;
    bad.resize(std::max<uint64_t>(bad.size(), *size), '\0');
    EXPECT_FALSE(DecodePartHeader(bad, "p").ok()) << "byte " << i;
  }
}

Manifest SampleManifest() {
  Manifest m;
  m.name = "heat";
  m.version = 9;
  m.rank = 1;
  m.nranks = 2;
  m.created = 1.5e9;
  std::string data(3 * kBlockSize + 17, 'z');
  ExtentChecksummer sum(4096);
  sum.Update(data.data(), 100);
  sum.Update(data.data() + 100, data.size() - 100);
  FileEntry part{FileKind::kPart, PartFileName(1), "", 4096 + data.size(), {sum.Finish()}};
  FileEntry routed{FileKind::kRouted, RoutedFileName(1, "x"), "x", 0, {}};
  m.files = {part, routed};
  return m;
}

TEST(ManifestTest, RoundTrip) {
  Manifest m = SampleManifest();
  auto back = DecodeManifest(m.Encode(), "m");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->version, 9);
  ASSERT_EQ(back->files.size(), 2u);
  EXPECT_EQ(back->files[0].extents[0].crcs.size(), 4u);
  EXPECT_EQ(back->files[0].extents[0].crcs, m.files[0].extents[0].crcs);
  EXPECT_EQ(back->files[1].logical, "x");
  EXPECT_EQ(back->DataBytes(), m.DataBytes());
}

TEST(ManifestTest, DamageIsDetected) {
  std::string bytes = SampleManifest().Encode();
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x01;
    EXPECT_EQ(DecodeManifest(bad, "m").status().code(), Code::kCorrupt) << "byte " << i;
  }
  for (size_t n = 0; n < bytes.size(); n += 7) {
    EXPECT_FALSE(DecodeManifest(bytes.substr(0, n), "m").ok()) << "truncated to " << n;
  }
}

TEST(ManifestTest, ChecksummerMatchesAnyChunking) {
  std::mt19937 rng(7);
  std::string data(5 * kBlockSize + 123, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  ExtentChecksummer whole(0);
  whole.Update(data.data(), data.size());
  Extent a = whole.Finish();
  ExtentChecksummer pieces(0);
  for (size_t pos = 0; pos < data.size();) {
    size_t n = std::min<size_t>(data.size() - pos, 1 + rng() % 100000);
    pieces.Update(data.data() + pos, n);
    pos += n;
  }
  EXPECT_EQ(pieces.Finish().crcs, a.crcs);
  EXPECT_TRUE(VerifyExtentRange(a, 0, data.data(), data.size(), "f").ok());
  data[3 * kBlockSize + 5] ^= 1;
  Status s = VerifyExtentRange(a, 0, data.data(), data.size(), "f");
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("block 3"), std::string::npos) << s.message();
  // A range holding only blocks 0..1 does not see the damage in block 3.
  EXPECT_TRUE(VerifyExtentRange(a, 0, data.data(), 2 * kBlockSize, "f").ok());
}

}  // namespace
}  // namespace cairn
