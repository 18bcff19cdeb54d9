#include "format/page_table.h"

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "codec/crc32c.h"

namespace cairn {
namespace {

PagesHeader Sample() {
  PagesHeader h;
  h.hash = PageHashKind::kSha1;
  h.page_size = 4096;
  h.name = "heat";
  h.version = 7;
  h.rank = 1;
  h.nranks = 4;
  h.regions = {{0, 8, 1024}, {3, 1, 5000}};  // 2 pages, then 1 whole and 1 of 904 bytes
  h.pages.resize(4);
  for (size_t i = 0; i < 4; ++i) {
    h.pages[i].digest.bytes[0] = static_cast<uint8_t>(i + 1);
    h.pages[i].rank = 1;
    h.pages[i].version = 7;
  }
  h.pages[1].kind = PageKind::kLocalDup;
  h.pages[2] = {PageKind::kRemote, true, h.pages[2].digest, 3, 7};
  h.pages[3] = {PageKind::kPrevious, true, h.pages[3].digest, 0, 5};
  return h;
}

TEST(PagesHeaderTest, RoundTripsEveryRecordKind) {
  PagesHeader h = Sample();
  std::string bytes = h.Encode();
  EXPECT_EQ(bytes.size(), h.HeaderBytes());
  EXPECT_EQ(h.DataOffset() % kPagesDataAlign, 0u);
  auto size = PagesHeaderSize(bytes.substr(0, kPagesFixedPrefix), "x");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, bytes.size());
  auto back = DecodePagesHeader(bytes, "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, "heat");
  EXPECT_EQ(back->hash, PageHashKind::kSha1);
  ASSERT_EQ(back->pages.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(back->pages[i].kind, h.pages[i].kind) << i;
    EXPECT_EQ(back->pages[i].digest, h.pages[i].digest) << i;
    EXPECT_EQ(back->pages[i].rank, h.pages[i].rank) << i;
    EXPECT_EQ(back->pages[i].version, h.pages[i].version) << i;
  }
  EXPECT_EQ(back->PageLengths(), (std::vector<uint32_t>{4096, 4096, 4096, 904}));
  EXPECT_EQ(back->DataBytes(), 4096u);  // page 0 only
}

TEST(PagesHeaderTest, DamageAndBadReferencesAreCorrupt) {
  std::string bytes = Sample().Encode();
  std::string flipped = bytes;
  flipped[60] ^= 1;
  auto damaged = DecodePagesHeader(flipped, "r000001.pages");
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), Code::kCorrupt);
  EXPECT_NE(damaged.status().message().find("r000001.pages"), std::string::npos);

  PagesHeader h = Sample();
  h.pages[2].rank = 9;  // no rank 9 in a job of 4
  auto bad_rank = DecodePagesHeader(h.Encode(), "x");
  ASSERT_FALSE(bad_rank.ok());
  EXPECT_NE(bad_rank.status().message().find("rank 9"), std::string::npos);

  h = Sample();
  h.pages[3].version = 8;  // newer than the copy itself
  EXPECT_FALSE(DecodePagesHeader(h.Encode(), "x").ok());

  h = Sample();
  h.pages.pop_back();  // a page without a record
  EXPECT_FALSE(DecodePagesHeader(h.Encode(), "x").ok());
  EXPECT_FALSE(DecodePagesHeader(bytes.substr(0, bytes.size() - 3), "x").ok());
}

// Bytes the reader would skip must be what the writer writes (the fuzzer
// found both): a header that does not re-encode to itself is corrupt.
TEST(PagesHeaderTest, NonZeroReservedBytesAndUnknownFlagsAreCorrupt) {
  const std::string bytes = Sample().Encode();
  auto recrc = [](std::string b) {
    constexpr size_t kCrcOffset = 12;
    std::memset(b.data() + kCrcOffset, 0, 4);
    uint32_t crc = Crc32c(b.data(), b.size());
    std::memcpy(b.data() + kCrcOffset, &crc, 4);
    return b;
  };
  ASSERT_TRUE(DecodePagesHeader(recrc(bytes), "x").ok());
  std::string reserved = bytes;
  reserved[26] = 1;  // the u16 after the hash kind and digest length
  auto r = DecodePagesHeader(recrc(reserved), "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reserved"), std::string::npos) << r.status().ToString();

  PagesHeader h = Sample();
  std::string flags = h.Encode();
  const size_t first_record = h.HeaderBytes() - 4 * 2 - 4 * 20 - 2 * 12;
  flags[first_record + 1] = static_cast<char>(0x81);  // page 0's flags byte
  auto f = DecodePagesHeader(recrc(flags), "x");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("flags"), std::string::npos) << f.status().ToString();
}

TEST(PagesHeaderTest, FormatTwoPutsTheHeaderAfterThePagesAndATrailerLocatesIt) {
  PagesHeader h = Sample();
  ASSERT_EQ(h.format, kPagesFormatVersion);
  EXPECT_EQ(h.DataOffset(), kPagesDataAlign);
  EXPECT_EQ(h.HeaderOffset(), kPagesDataAlign + 4096);  // page 0 is the one stored
  EXPECT_EQ(h.FileSize(), h.HeaderOffset() + h.HeaderBytes() + kPagesTrailerBytes);

  const std::string preamble = EncodePagesPreamble();
  EXPECT_EQ(preamble.size(), kPagesDataAlign);
  auto format = PagesFileFormat(preamble.substr(0, 12), "x");
  ASSERT_TRUE(format.ok()) << format.status().ToString();
  EXPECT_EQ(*format, 2u);

  const std::string trailer = EncodePagesTrailer(h.HeaderOffset());
  ASSERT_EQ(trailer.size(), kPagesTrailerBytes);
  auto at = DecodePagesTrailer(trailer, h.FileSize(), "x");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(*at, h.HeaderOffset());
  // An offset inside the preamble, or with no room for a header after it.
  for (uint64_t bad : {uint64_t{100}, h.FileSize() - kPagesTrailerBytes - 10}) {
    auto refused = DecodePagesTrailer(EncodePagesTrailer(bad), h.FileSize(), "r000002.part");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), Code::kCorrupt);
    EXPECT_NE(refused.status().message().find("r000002.part"), std::string::npos);
  }
  std::string no_magic = trailer;
  no_magic[12] ^= 1;
  EXPECT_FALSE(DecodePagesTrailer(no_magic, h.FileSize(), "x").ok());
}

// The longest file the regions can make: all the data, and a header of
// references; no mix of kinds gives a longer one.
TEST(PagesHeaderTest, TheLongestFileSizeBoundsEveryPlan) {
  PagesHeader h = Sample();
  PagesHeader all_stored = h, all_references = h;
  for (auto& p : all_stored.pages) p.kind = PageKind::kData;
  for (auto& p : all_references.pages) p.kind = PageKind::kRemote;
  EXPECT_EQ(all_stored.DataBytes(), 8 * 1024 + 5000u);
  EXPECT_EQ(h.LongestFileSize(), kPagesDataAlign + all_stored.DataBytes() +
                                     all_references.HeaderBytes() + kPagesTrailerBytes);
  EXPECT_GE(h.LongestFileSize(), h.FileSize());
  EXPECT_GE(h.LongestFileSize(), all_stored.FileSize());
  // The records are not read: an empty plan of the same regions has it too.
  PagesHeader no_records = h;
  no_records.pages.clear();
  EXPECT_EQ(no_records.LongestFileSize(), h.LongestFileSize());
}

TEST(PagesHeaderTest, FormatOneIsStillRead) {
  PagesHeader h = Sample();
  h.format = kPagesFormatV1;
  const std::string bytes = h.Encode();
  auto format = PagesFileFormat(bytes.substr(0, 12), "x");
  ASSERT_TRUE(format.ok());
  EXPECT_EQ(*format, kPagesFormatV1);
  auto back = DecodePagesHeader(bytes, "x");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->format, kPagesFormatV1);
  EXPECT_EQ(back->HeaderOffset(), 0u);
  EXPECT_EQ(back->DataOffset(), 4096u);  // the header rounded up
  EXPECT_EQ(back->FileSize(), 4096u + 4096u);
}

TEST(PagesHeaderTest, ANewerFormatIsUnsupported) {
  std::string bytes = EncodePagesPreamble();
  bytes[8] = 3;
  auto format = PagesFileFormat(bytes.substr(0, 12), "x");
  ASSERT_FALSE(format.ok());
  EXPECT_EQ(format.status().code(), Code::kUnsupported);
  EXPECT_EQ(PagesFileFormat(std::string("CAIRNPAR\2\0\0\0", 12), "x").status().code(),
            Code::kCorrupt);
}

}  // namespace
}  // namespace cairn
