#include "runtime/pages_writer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "dedup/page_hash.h"
#include "env/env.h"

namespace cairn {
namespace {

const std::vector<size_t> kStored = {0, 1, 2, 3, 5, 7, 300};

// One region of random bytes, 301 pages of `page` bytes the last of them
// short (a file large enough for a mapped slot), and the header of a plan
// that stores kStored.
struct Plan {
  std::vector<uint8_t> bytes;
  PageView view;
  PagesHeader header;

  explicit Plan(uint32_t page = 4096)
      : bytes(300 * uint64_t{page} + 100), view(Fill(bytes), page) {
    header.page_size = page;
    header.name = "c";
    header.version = 1;
    header.nranks = 1;
    header.regions = {{0, 1, bytes.size()}};
    header.pages.resize(view.size());
    for (size_t i = 0; i < view.size(); ++i) {
      bool stored = std::find(kStored.begin(), kStored.end(), i) != kStored.end();
      header.pages[i].kind = stored ? PageKind::kData : PageKind::kLocalDup;
      header.pages[i].digest.bytes[0] = static_cast<uint8_t>(i);
      header.pages[i].digest.bytes[1] = static_cast<uint8_t>(i >> 8);
    }
  }
  static std::vector<PageView::RegionBytes> Fill(std::vector<uint8_t>& bytes) {
    std::mt19937 rng(4242);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    return {{0, bytes.data(), bytes.size()}};
  }
};

struct Written {
  std::string bytes;
  FileEntry entry;
};

// Writes the plan's pages file on a fresh memory tier (its files mapped
// when `mapped`) through `write`, and reads it back.
template <typename Write>
Written WriteWith(const Plan& plan, bool mapped, const Write& write) {
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  if (mapped) tier.EnableSlots("r000000.", 1);
  PagesFileWriter writer(&tier, "c", 1, "r000000.part", plan.header.LongestFileSize());
  write(writer);
  auto entry = writer.Finish(plan.header);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  auto bytes = tier.GetFile("c", 1, "r000000.part");
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return {bytes.ok() ? *bytes : "", entry.ok() ? *entry : FileEntry{}};
}

// Pages copied ahead and then stored, dropped by a Store of other pages,
// or left pending at Finish give the file, and the block CRCs, that
// storing only the stored pages gives; hashed in the copy or not. 16 KiB
// pages straddle the 64 KiB CRC blocks (the data starts 4 KiB in).
TEST(PagesFileWriterTest, PagesCopiedAheadAreKeptOnlyWhenStored) {
  for (uint32_t page : {4096u, 16384u}) {
    SCOPED_TRACE("page " + std::to_string(page));
    const Plan plan(page);
    const Written plain = WriteWith(plan, true, [&](PagesFileWriter& w) {
      w.Store(plan.view, {0, 1, 2, 3});
      w.Store(plan.view, {5, 7});
      w.Store(plan.view, {300});
    });
    const PageHasher xxh3(PageHashKind::kXxh3_128);
    for (const PageHasher* hasher : {static_cast<const PageHasher*>(nullptr), &xxh3}) {
      for (bool mapped : {true, false}) {
        SCOPED_TRACE(std::string(mapped ? "mapped" : "not mapped") +
                     (hasher ? ", hashed in the copy" : ""));
        std::vector<PageDigest> digests(301);
        const Written ahead = WriteWith(plan, mapped, [&](PagesFileWriter& w) {
          EXPECT_EQ(w.CopyAhead(plan.view, 0, 4, hasher, digests.data()), mapped);
          w.Store(plan.view, {0, 1, 2, 3});  // kept as copied
          EXPECT_EQ(w.CopyAhead(plan.view, 4, 8, hasher, digests.data() + 4), mapped);
          w.Store(plan.view, {5, 7});  // dropped, then these two stored
          EXPECT_EQ(w.CopyAhead(plan.view, 8, 301, hasher, digests.data() + 8), mapped);
          w.Store(plan.view, {300});
          // Pending at Finish.
          EXPECT_EQ(w.CopyAhead(plan.view, 300, 301, hasher, digests.data() + 300), mapped);
        });
        EXPECT_EQ(ahead.bytes, plain.bytes);
        ASSERT_EQ(ahead.entry.extents.size(), plain.entry.extents.size());
        for (size_t i = 0; i < plain.entry.extents.size(); ++i) {
          EXPECT_EQ(ahead.entry.extents[i].length, plain.entry.extents[i].length) << "extent " << i;
          EXPECT_EQ(ahead.entry.extents[i].crcs, plain.entry.extents[i].crcs) << "extent " << i;
        }
        // Every page's digest, the short last one included.
        for (size_t i = 0; hasher != nullptr && mapped && i < 301; ++i) {
          const PageSpan& p = plan.view.page(i);
          ASSERT_EQ(digests[i], xxh3.Hash(p.data, p.length)) << "page " << i;
        }
      }
    }
    // And the stored pages are the region's bytes, in order.
    std::string expected;
    for (size_t i : kStored) {
      expected.append(reinterpret_cast<const char*>(plan.view.page(i).data),
                      plan.view.page(i).length);
    }
    EXPECT_EQ(plain.bytes.substr(plan.header.DataOffset(), expected.size()), expected);
  }
}

}  // namespace
}  // namespace cairn
