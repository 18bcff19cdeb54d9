#include "dedup/page_hash.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <xxhash.h>

#include "base/vector_state.h"

namespace cairn {
namespace {

std::string Hex(PageHashKind kind, const std::string& text) {
  PageHasher h(kind);
  return h.Hash(text.data(), text.size()).Hex(h.digest_bytes());
}

TEST(PageHashTest, ShaDigestsMatchTheStandardVectors) {
  EXPECT_EQ(Hex(PageHashKind::kSha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Hex(PageHashKind::kSha256, "abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(PageHashTest, DispatchedXxh3MatchesThePortableOne) {
  // The reference twin: xxHash's plain entry point, canonical byte order.
  std::vector<uint8_t> page(4096);
  for (size_t i = 0; i < page.size(); ++i) page[i] = static_cast<uint8_t>(i * 31 + 7);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(page.data(), page.size()));
  PageDigest d = PageHasher(PageHashKind::kXxh3_128).Hash(page.data(), page.size());
  EXPECT_EQ(0, std::memcmp(d.bytes.data(), c.digest, 16));
  for (size_t i = 16; i < kMaxDigestBytes; ++i) EXPECT_EQ(d.bytes[i], 0) << "padding byte " << i;
}

// libxxhash's AVX2 kernel returns with the vector registers in use; the
// hasher clears them, or the SSE code after every page pays (vector_state.h).
TEST(PageHashTest, HashingLeavesNoVectorStateInUse) {
  if (!UpperVectorHalvesInUse().has_value()) GTEST_SKIP() << "the CPU cannot report XINUSE";
  std::vector<uint8_t> page(4096, 0x5a);
  for (PageHashKind kind : {PageHashKind::kXxh3_128, PageHashKind::kTestCollide}) {
    (void)PageHasher(kind).Hash(page.data(), page.size());
    EXPECT_EQ(UpperVectorHalvesInUse(), false) << PageHashKindName(kind);
  }
}

TEST(PageHashTest, TheTestHashCollidesOnPurpose) {
  PageHasher h(PageHashKind::kTestCollide);
  std::set<PageDigest> seen;
  for (uint32_t i = 0; i < 1000; ++i) seen.insert(h.Hash(&i, sizeof i));
  EXPECT_LE(seen.size(), 256u);
}

TEST(PageHashTest, NamesParseBackAndUnknownOnesNameTheKey) {
  for (PageHashKind k : {PageHashKind::kXxh3_128, PageHashKind::kSha1, PageHashKind::kSha256,
                         PageHashKind::kTestCollide}) {
    auto parsed = ParsePageHashKind(PageHashKindName(k));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, k);
  }
  auto bad = ParsePageHashKind("md5");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dedup.hash"), std::string::npos);
  EXPECT_NE(bad.status().message().find("md5"), std::string::npos);
}

}  // namespace
}  // namespace cairn
