#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "codec/crc32c.h"
#include "format/ecc_sidecar_layout.h"
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
  h.regions = {{0, 8, 10000, 0}, {5, 1, 3, 0}};
  h.Layout();
  return h;
}

TEST(PartTest, HeaderRoundTripAndLayout) {
  PartHeader h = SampleHeader();
  EXPECT_EQ(h.format, kPartFormatVersion);
  // The small region is packed after the header; the large one (80000
  // bytes) starts at the next page boundary after it.
  EXPECT_EQ(h.regions[1].offset, AlignUp(h.HeaderBytes(), kPackedRegionAlign));
  EXPECT_EQ(h.regions[0].offset, AlignUp(h.regions[1].offset + 3, kRegionAlign));
  EXPECT_EQ(h.FileSize(), h.regions[0].offset + 80000);
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

TEST(PartTest, SmallRegionsArePackedAndLargeOnesPageAligned) {
  PartHeader h;
  h.name = "hydro";
  // Five scalars, then an array of 64 KiB (aligned), then one of 100 bytes.
  for (int id = 0; id < 5; ++id) h.regions.push_back({id, 8, 1, 0});
  h.regions.push_back({5, 8, 8192, 0});
  h.regions.push_back({6, 4, 25, 0});
  h.Layout();
  uint64_t smalls_end = h.HeaderBytes();
  for (int i : {0, 1, 2, 3, 4, 6}) {
    EXPECT_EQ(h.regions[i].offset % kPackedRegionAlign, 0u) << i;
    EXPECT_GE(h.regions[i].offset, smalls_end) << "regions overlap at " << i;
    smalls_end = h.regions[i].offset + h.regions[i].bytes();
  }
  EXPECT_EQ(h.regions[5].offset, kRegionAlign);
  EXPECT_EQ(h.FileSize(), kRegionAlign + 65536);
  // Five scalars alone cost their 40 bytes, not five pages.
  h.regions.resize(5);
  EXPECT_EQ(h.Layout(), AlignUp(h.HeaderBytes(), kPackedRegionAlign) + 40);
  EXPECT_LT(h.FileSize(), 512u);
}

TEST(PartTest, FileSizeDoesNotDependOnTheName) {
  // What lets the memory tier reserve a part's slot before the checkpoint
  // has a name.
  PartHeader a = SampleHeader();
  PartHeader b = SampleHeader();
  a.name = "x";
  b.name = std::string(kMaxNameLength, 'y');
  EXPECT_EQ(a.Layout(), b.Layout());
  EXPECT_EQ(a.Encode().size(), b.Encode().size());
}

TEST(PartTest, FormatOneHeaderIsStillRead) {
  // Format 1: the name field is as long as the name, every region 4 KiB
  // aligned. Encode writes the format it is given.
  PartHeader h = SampleHeader();
  h.format = 1;
  h.regions[0].offset = AlignUp(h.HeaderBytes(), kRegionAlign);
  h.regions[1].offset = AlignUp(h.regions[0].offset + 80000, kRegionAlign);
  std::string bytes = h.Encode();
  EXPECT_EQ(bytes.size(), 38 + h.name.size() + 2 * 28 + 4);  // docs/format.md, format 1
  EXPECT_EQ(*PartHeaderSize(bytes.substr(0, 16), "p"), bytes.size());
  auto back = DecodePartHeader(bytes, "p");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->format, 1u);
  EXPECT_EQ(back->name, "heat");
  EXPECT_EQ(back->regions[1].offset, h.regions[1].offset);
  EXPECT_EQ(back->FileSize(), h.regions[1].offset + 3);
  EXPECT_EQ(back->Encode(), bytes);
}

TEST(PartTest, UnknownFormatIsRefusedNamingTheFile) {
  std::string bytes = SampleHeader().Encode();
  bytes[8] = 3;
  auto size = PartHeaderSize(bytes.substr(0, 16), "r000000.part");
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("r000000.part"), std::string::npos);
  EXPECT_NE(size.status().message().find("version 3"), std::string::npos);
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

// A manifest with a valid CRC is still not trusted with names: one that
// would lead a restart or `cairn verify` outside its version directory, or
// to another rank's files, is corrupt.
TEST(ManifestTest, StoredNamesThatLeaveTheDirectoryAreCorrupt) {
  struct Case {
    const char* what;
    void (*damage)(Manifest&);
  };
  const Case cases[] = {
      {"routed logical ../../x", [](Manifest& m) {
         m.files[1].logical = "../../x";
         m.files[1].name = RankFilePrefix(1) + "f.../../x";
       }},
      {"routed name with a slash", [](Manifest& m) { m.files[1].name = "../r000001.f.x"; }},
      {"part of another rank", [](Manifest& m) { m.files[0].name = PartFileName(0); }},
      {"absolute part name", [](Manifest& m) { m.files[0].name = "/etc/passwd"; }},
      {"parity outside", [](Manifest& m) {
         m.files.push_back({FileKind::kParity, "../r000001.part.ecc", "", 0, {}});
       }},
      {"checkpoint name ..", [](Manifest& m) { m.name = ".."; }},
      {"rank beyond nranks", [](Manifest& m) { m.rank = 2; }},
      {"negative version", [](Manifest& m) { m.version = -3; }},
      {"a file twice", [](Manifest& m) { m.files.push_back(m.files[1]); }},
  };
  for (const Case& c : cases) {
    Manifest m = SampleManifest();
    c.damage(m);
    auto back = DecodeManifest(m.Encode(), "m");
    EXPECT_EQ(back.status().code(), Code::kCorrupt) << c.what;
  }
}

// Version 1 manifests (before run_id) are still read, with run_id 0.
TEST(ManifestTest, FormatVersion1IsStillRead) {
  Manifest m = SampleManifest();
  m.run_id = 0;
  std::string v2 = m.Encode();
  // magic(8) format(4) block(4) version(8) rank(4) nranks(4), then run_id(8).
  constexpr size_t kRunIdAt = 32;
  // The tail of formats 3 and 4 before the CRC: no redundancy record (1
  // byte), no referenced versions (4 bytes), no ECC protection time (8).
  constexpr size_t kFormat4Tail = 1 + 4 + 8;
  std::string v1 = v2.substr(0, kRunIdAt) +
                   v2.substr(kRunIdAt + 8, v2.size() - kRunIdAt - 8 - kFormat4Tail - 4);
  const uint32_t one = 1;
  std::memcpy(v1.data() + 8, &one, 4);
  const uint32_t crc = Crc32c(v1.data(), v1.size());
  v1.append(reinterpret_cast<const char*>(&crc), 4);
  auto back = DecodeManifest(v1, "v1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->run_id, 0u);
  EXPECT_EQ(back->Encode(), v2);
}

// [dedup]: the versions a copy's pages refer to (format 3).
TEST(ManifestTest, ReferencedVersionsRoundTripAndMustBeOlderAndAscending) {
  Manifest m = SampleManifest();
  m.references = {m.version - 5, m.version - 2};
  auto back = DecodeManifest(m.Encode(), "m");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->references, m.references);
  for (std::vector<int64_t> bad : {std::vector<int64_t>{m.version},
                                   std::vector<int64_t>{m.version - 2, m.version - 5}}) {
    m.references = bad;
    EXPECT_EQ(DecodeManifest(m.Encode(), "m").status().code(), Code::kCorrupt);
  }
}

// The memory tier's ECC (format 4): the time the sidecar was committed,
// set exactly when a sidecar is listed.
TEST(ManifestTest, EccProtectionTimeRoundTripsAndMustMatchTheSidecar) {
  Manifest m = SampleManifest();
  auto back = DecodeManifest(m.Encode(), "m");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ecc_protected, 0.0);
  m.files.push_back({FileKind::kParity, EccSidecarName(1), "", 0, {}});
  m.ecc_protected = m.created + 0.25;
  back = DecodeManifest(m.Encode(), "m");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ecc_protected, m.created + 0.25);
  m.ecc_protected = 0;  // a sidecar without a time
  auto bad = DecodeManifest(m.Encode(), "m");
  EXPECT_EQ(bad.status().code(), Code::kCorrupt);
  EXPECT_NE(bad.status().message().find("ECC"), std::string::npos) << bad.status().ToString();
  m.files.pop_back();  // a time without a sidecar
  m.ecc_protected = m.created;
  EXPECT_EQ(DecodeManifest(m.Encode(), "m").status().code(), Code::kCorrupt);
}

// `m` as format 3 wrote it: no protection time.
std::string EncodeFormat3(const Manifest& m) {
  std::string v4 = m.Encode();
  std::string v3 = v4.substr(0, v4.size() - 8 - 4);  // drop the time and the CRC
  const uint32_t three = 3;
  std::memcpy(v3.data() + 8, &three, 4);
  const uint32_t crc = Crc32c(v3.data(), v3.size());
  v3.append(reinterpret_cast<const char*>(&crc), 4);
  return v3;
}

// A format 3 manifest has no protection time: one that lists a sidecar
// (written before the manifest then) reads as protected when created.
TEST(ManifestTest, Format3SidecarReadsAsProtectedWhenCreated) {
  Manifest m = SampleManifest();
  m.files.push_back({FileKind::kParity, EccSidecarName(1), "", 0, {}});
  m.ecc_protected = 7.0;
  auto back = DecodeManifest(EncodeFormat3(m), "v3");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ecc_protected, m.created);
  // Read back as format 4, as any manifest Cairn rewrites is (found by
  // fuzz_manifest: a format 3 sidecar without a creation time).
  auto again = DecodeManifest(back->Encode(), "v4");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  m.created = 0;
  EXPECT_EQ(DecodeManifest(EncodeFormat3(m), "v3").status().code(), Code::kCorrupt);
  m.created = 1.5e9;
  m.files.pop_back();
  back = DecodeManifest(EncodeFormat3(m), "v3");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ecc_protected, 0.0);
}

TEST(ManifestTest, CreationTimeMustBeAFiniteNonNegativeTime) {
  for (double bad : {-1.0, -1e9, std::nan(""), HUGE_VAL}) {
    Manifest m = SampleManifest();
    m.created = bad;
    auto back = DecodeManifest(m.Encode(), "m");
    EXPECT_EQ(back.status().code(), Code::kCorrupt) << bad;
    EXPECT_NE(back.status().message().find("creation time"), std::string::npos)
        << back.status().ToString();
  }
}

TEST(ManifestTest, RunIdRoundTrips) {
  Manifest m = SampleManifest();
  m.run_id = 0x0123456789abcdefull;
  auto back = DecodeManifest(m.Encode(), "m");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->run_id, m.run_id);
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

// Bytes added after a mark and then dropped leave no trace: the extent
// is as if only the bytes kept had been added, block CRCs included.
TEST(ManifestTest, ChecksummerRewindsToAMark) {
  std::mt19937 rng(11);
  std::string kept(3 * kBlockSize + 999, '\0'), dropped(2 * kBlockSize + 17, '\0');
  for (auto& c : kept) c = static_cast<char>(rng());
  for (auto& c : dropped) c = static_cast<char>(rng());
  const size_t split = kBlockSize + 4321;  // the mark falls inside a block
  ExtentChecksummer direct(0);
  direct.Update(kept.data(), kept.size());
  ExtentChecksummer rewound(0);
  rewound.Update(kept.data(), split);
  const ExtentChecksummer::Mark mark = rewound.mark();
  std::string sink(dropped.size(), '\0');
  rewound.CopyAndUpdate(sink.data(), dropped.data(), dropped.size(), CopyStores::kStreaming);
  rewound.RewindTo(mark);
  rewound.Update(kept.data() + split, kept.size() - split);
  Extent a = direct.Finish(), b = rewound.Finish();
  EXPECT_EQ(b.length, a.length);
  EXPECT_EQ(b.crcs, a.crcs);
}

}  // namespace
}  // namespace cairn
