#include "dedup/digest_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace cairn {
namespace {

PageDigest DigestOf(uint64_t leading, uint8_t last) {
  PageDigest d;
  for (int b = 0; b < 8; ++b) d.bytes[b] = static_cast<uint8_t>(leading >> (8 * b));
  d.bytes[kMaxDigestBytes - 1] = last;
  return d;
}

// Against std::map over random digests with repeats: the first page of a
// digest is kept, later ones find it, and the table fills to capacity.
TEST(DigestIndexTest, KeepsTheFirstPageOfEachDigestLikeAMap) {
  constexpr uint32_t kSeed = 77;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937_64 rng(kSeed);
  constexpr size_t kPages = 5000;
  std::vector<PageDigest> pool;
  for (int i = 0; i < 1500; ++i) pool.push_back(DigestOf(rng(), static_cast<uint8_t>(rng())));
  DigestIndex index(kPages);
  std::map<PageDigest, size_t> reference;
  for (size_t page = 0; page < kPages; ++page) {
    const PageDigest& d = pool[rng() % pool.size()];
    auto [it, inserted] = reference.emplace(d, page);
    std::optional<size_t> found = index.FindOrAdd(d, page);
    if (inserted) {
      ASSERT_FALSE(found.has_value()) << "page " << page;
    } else {
      ASSERT_EQ(found, it->second) << "page " << page;
    }
  }
  EXPECT_EQ(index.size(), reference.size());
  std::vector<PageDigest> digests = index.Digests();
  std::sort(digests.begin(), digests.end());
  std::vector<PageDigest> expected;
  for (const auto& [d, page] : reference) expected.push_back(d);
  EXPECT_EQ(digests, expected);
  EXPECT_EQ(index.Contains(pool.front()), reference.count(pool.front()) > 0);
  EXPECT_FALSE(index.Contains(DigestOf(1, 1)));
}

// Digests that agree in the bytes the table probes by (as the test-only
// colliding hash makes them) are still told apart by the rest.
TEST(DigestIndexTest, DigestsSharingTheirProbeBytesStayApart) {
  DigestIndex index(300);
  for (size_t page = 0; page < 256; ++page) {
    EXPECT_FALSE(index.FindOrAdd(DigestOf(42, static_cast<uint8_t>(page)), page));
  }
  EXPECT_EQ(index.size(), 256u);
  EXPECT_EQ(index.FindOrAdd(DigestOf(42, 7), 999), 7u);
  EXPECT_TRUE(index.Contains(DigestOf(42, 255)));
  EXPECT_FALSE(index.Contains(DigestOf(43, 7)));
}

}  // namespace
}  // namespace cairn
