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

// Records whose page i has digest `digests[i]`, as a plan's do.
std::vector<PageRecord> RecordsOf(const std::vector<PageDigest>& digests) {
  std::vector<PageRecord> records(digests.size());
  for (size_t i = 0; i < digests.size(); ++i) records[i].digest = digests[i];
  return records;
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
  std::vector<PageDigest> pages;
  for (size_t page = 0; page < kPages; ++page) pages.push_back(pool[rng() % pool.size()]);
  const std::vector<PageRecord> records = RecordsOf(pages);
  DigestIndex index(kPages, records);
  std::map<PageDigest, size_t> reference;
  for (size_t page = 0; page < kPages; ++page) {
    auto [it, inserted] = reference.emplace(pages[page], page);
    std::optional<size_t> found = index.FindOrAdd(page);
    if (inserted) {
      ASSERT_FALSE(found.has_value()) << "page " << page;
    } else {
      ASSERT_EQ(found, it->second) << "page " << page;
    }
  }
  EXPECT_EQ(index.size(), reference.size());
  std::vector<PageDigest> digests{DigestOf(5, 5)};  // replaced
  index.Digests(&digests);
  std::sort(digests.begin(), digests.end());
  std::vector<PageDigest> expected;
  for (const auto& [d, page] : reference) expected.push_back(d);
  EXPECT_EQ(digests, expected);
  EXPECT_EQ(index.Contains(pool.front()), reference.count(pool.front()) > 0);
  EXPECT_FALSE(index.Contains(DigestOf(1, 1)));
}

// Digests that agree in the bytes the table probes by and in the bits a
// slot keeps (as the test-only colliding hash makes them) are still told
// apart by the rest.
TEST(DigestIndexTest, DigestsSharingTheirProbeAndTagBytesStayApart) {
  std::vector<PageDigest> pages;
  for (size_t page = 0; page < 256; ++page) pages.push_back(DigestOf(42, static_cast<uint8_t>(page)));
  pages.push_back(DigestOf(42, 7));
  const std::vector<PageRecord> records = RecordsOf(pages);
  DigestIndex index(300, records);
  for (size_t page = 0; page < 256; ++page) EXPECT_FALSE(index.FindOrAdd(page));
  EXPECT_EQ(index.size(), 256u);
  EXPECT_EQ(index.FindOrAdd(256), 7u);
  EXPECT_TRUE(index.Contains(DigestOf(42, 255)));
  EXPECT_FALSE(index.Contains(DigestOf(43, 7)));
}

// An index reset for other records (a planner keeps one from version to
// version) holds none of the earlier ones, with a table smaller or larger
// than before.
TEST(DigestIndexTest, AResetIndexHoldsOnlyItsNewRecords) {
  std::vector<PageDigest> before, after;
  for (uint64_t i = 0; i < 1000; ++i) before.push_back(DigestOf(i * 0x9E3779B97F4A7C15ULL, 1));
  for (uint64_t i = 0; i < 10; ++i) after.push_back(DigestOf(i * 0x9E3779B97F4A7C15ULL, 2));
  after.push_back(after[3]);
  const std::vector<PageRecord> old_records = RecordsOf(before);
  const std::vector<PageRecord> new_records = RecordsOf(after);
  DigestIndex index(before.size(), old_records);
  for (size_t page = 0; page < before.size(); ++page) ASSERT_FALSE(index.FindOrAdd(page));
  index.Reset(after.size(), new_records);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(index.Contains(before[3]));
  for (size_t page = 0; page < 10; ++page) EXPECT_FALSE(index.FindOrAdd(page)) << "page " << page;
  EXPECT_EQ(index.FindOrAdd(10), 3u);
  index.Reset(before.size(), old_records);
  EXPECT_FALSE(index.Contains(after[0]));
  for (size_t page = 0; page < before.size(); ++page) ASSERT_FALSE(index.FindOrAdd(page));
  EXPECT_EQ(index.size(), before.size());
}

}  // namespace
}  // namespace cairn
