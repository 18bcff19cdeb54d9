#include "dedup/hash_merger.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

PageDigest D(uint8_t tag, uint8_t tag2 = 0) {
  PageDigest d;
  d.bytes[0] = tag;
  d.bytes[1] = tag2;
  return d;
}

HashFreqSet Merged(const HashFreqSet& left, const HashFreqSet& right, int nranks,
                   size_t threshold) {
  HashFreqSet out;
  HashMerger(left, right, nranks, threshold, &out);
  return out;
}

Result<HashFreqSet> Decoded(std::string_view wire, size_t digest_bytes, int nranks,
                            const std::string& origin) {
  HashFreqSet set;
  CAIRN_RETURN_IF_ERROR(DecodeHashFreqSet(wire, digest_bytes, nranks, origin, &set));
  return set;
}

TEST(HashMergerTest, PagesWithoutAChoiceChargeTheirOwnersFirst) {
  // Left (rank 0) holds a, b, c; right (rank 1) holds c and d, e. The
  // exclusive pages load rank 0 with 2 and rank 1 with 2; c goes to the
  // right side's owner on a tie (line 15's strict "<").
  HashFreqSet left{{D(1), 1, 0}, {D(2), 1, 0}, {D(3), 1, 0}};
  HashFreqSet right{{D(3), 1, 1}, {D(4), 1, 1}, {D(5), 1, 1}};
  HashFreqSet out = Merged(left, right, 2, 100);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[2].digest, D(3));
  EXPECT_EQ(out[2].count, 2u);
  EXPECT_EQ(out[2].owner, 1);
  // With rank 1 busier, the shared page goes to rank 0.
  right.push_back({D(6), 1, 1});
  out = Merged(left, right, 2, 100);
  EXPECT_EQ(out[2].owner, 0);
}

TEST(HashMergerTest, SharedPagesAlternateBetweenEquallyLoadedOwners) {
  HashFreqSet a;
  HashFreqSet b;
  for (int i = 0; i < 100; ++i) {
    a.push_back({D(static_cast<uint8_t>(i)), 1, 0});
    b.push_back({D(static_cast<uint8_t>(i)), 1, 1});
  }
  std::map<int, int> owned;
  for (const HashFreq& t : Merged(a, b, 2, 1000)) {
    EXPECT_EQ(t.count, 2u);
    ++owned[t.owner];
  }
  EXPECT_EQ(owned[0], 50);
  EXPECT_EQ(owned[1], 50);
}

TEST(HashMergerTest, TruncationKeepsTheMostFrequent) {
  HashFreqSet left{{D(1), 5, 0}, {D(2), 1, 0}, {D(3), 3, 0}};
  HashFreqSet right{{D(4), 4, 1}, {D(5), 1, 1}};
  HashFreqSet out = Merged(left, right, 2, 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].digest, D(1));
  EXPECT_EQ(out[1].digest, D(3));
  EXPECT_EQ(out[2].digest, D(4));
}

TEST(HashMergerTest, LocalHashFreqIsSortedUniqueAndBounded) {
  std::vector<PageDigest> mine{D(9), D(1), D(9), D(4)};
  // The result replaces whatever the set held.
  HashFreqSet set{{D(7), 2, 1}, {D(8), 1, 0}, {D(10), 1, 0}, {D(11), 1, 0}};
  LocalHashFreq(&mine, 3, 10, &set);
  ASSERT_EQ(set.size(), 3u);
  EXPECT_EQ(set[0].digest, D(1));
  EXPECT_EQ(set[1].digest, D(4));
  EXPECT_EQ(set[2].digest, D(9));
  EXPECT_EQ(set[2].owner, 3);
  EXPECT_EQ(set[2].count, 1u);
  LocalHashFreq(&mine, 3, 2, &set);
  EXPECT_EQ(set.size(), 2u);
}

TEST(HashMergerTest, WireFormatRoundTripsAndRejectsBadMessages) {
  HashFreqSet set{{D(1, 2), 4, 3}, {D(2, 9), 1, 0}};
  std::string wire = EncodeHashFreqSet(set, 16);
  auto back = Decoded(wire, 16, 4, "test");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].digest, D(1, 2));
  EXPECT_EQ((*back)[0].count, 4u);
  EXPECT_EQ((*back)[0].owner, 3);
  auto bad_owner = Decoded(wire, 16, 3, "rank 5");
  ASSERT_FALSE(bad_owner.ok());
  EXPECT_EQ(bad_owner.status().code(), Code::kCorrupt);
  EXPECT_NE(bad_owner.status().message().find("rank 5"), std::string::npos);
  EXPECT_FALSE(Decoded(wire.substr(0, wire.size() - 1), 16, 4, "t").ok());
  EXPECT_FALSE(Decoded(wire, 20, 4, "t").ok());
}

// A set decoded into one that held other tuples is exactly the message's:
// digests narrower than the ones before are zero past their width.
TEST(HashMergerTest, DecodingReplacesWhatTheSetHeld) {
  PageDigest wide;
  wide.bytes.fill(0xAB);
  HashFreqSet set{{wide, 3, 1}, {wide, 1, 2}, {wide, 2, 0}};
  const HashFreqSet sent{{D(1, 2), 4, 3}};
  ASSERT_TRUE(DecodeHashFreqSet(EncodeHashFreqSet(sent, 16), 16, 4, "rank 1", &set).ok());
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].digest, D(1, 2));
  EXPECT_EQ(set[0].count, 4u);
  EXPECT_EQ(set[0].owner, 3);
}

// HashMerger walks each side once per digest and sums counts: a set with a
// digest twice, or a page held by more ranks than there are, is refused.
TEST(HashMergerTest, WireFormatRejectsRepeatedDigestsAndImpossibleCounts) {
  auto refused = [](const HashFreqSet& set, const char* what) {
    auto back = Decoded(EncodeHashFreqSet(set, 16), 16, 4, "rank 2");
    ASSERT_FALSE(back.ok()) << what;
    EXPECT_EQ(back.status().code(), Code::kCorrupt) << what;
    EXPECT_NE(back.status().message().find("rank 2"), std::string::npos) << what;
  };
  refused({{D(1), 1, 0}, {D(1), 2, 1}}, "repeated digest");
  refused({{D(2), 1, 0}, {D(1), 1, 1}}, "descending digests");
  refused({{D(1), 0, 0}}, "held by no rank");
  refused({{D(1), 5, 0}}, "held by 5 of 4 ranks");
}

}  // namespace
}  // namespace cairn
