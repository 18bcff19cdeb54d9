#include "runtime/pages_writer.h"

#include <gtest/gtest.h>

#include <random>

#include "env/env.h"

namespace cairn {
namespace {

constexpr uint32_t kPage = 4096;
// 301 pages, the last short: a file large enough for a mapped slot.
constexpr uint64_t kRegionBytes = 300 * kPage + 100;
const std::vector<size_t> kStored = {0, 1, 2, 3, 5, 7, 300};

// One region of random bytes and the header of a plan that stores kStored.
struct Plan {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kRegionBytes);
  PageView view;
  PagesHeader header;

  Plan() : view(Fill(bytes), kPage) {
    header.page_size = kPage;
    header.name = "c";
    header.version = 1;
    header.nranks = 1;
    header.regions = {{0, 1, kRegionBytes}};
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
  PagesHeader bound = plan.header;
  PagesFileWriter writer(&tier, "c", 1, "r000000.part", PagesFileBound(bound));
  write(writer);
  auto entry = writer.Finish(plan.header);
  EXPECT_TRUE(entry.ok()) << entry.status().ToString();
  auto bytes = tier.GetFile("c", 1, "r000000.part");
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return {bytes.ok() ? *bytes : "", entry.ok() ? *entry : FileEntry{}};
}

// Pages copied ahead and then stored, dropped by a Store of other pages,
// or left pending at Finish give the file, and the block CRCs, that
// storing only the stored pages gives.
TEST(PagesFileWriterTest, PagesCopiedAheadAreKeptOnlyWhenStored) {
  const Plan plan;
  const Written plain = WriteWith(plan, true, [&](PagesFileWriter& w) {
    w.Store(plan.view, {0, 1, 2, 3});
    w.Store(plan.view, {5, 7});
    w.Store(plan.view, {300});
  });
  for (bool mapped : {true, false}) {
    SCOPED_TRACE(mapped ? "mapped" : "not mapped");
    const Written ahead = WriteWith(plan, mapped, [&](PagesFileWriter& w) {
      EXPECT_EQ(w.CopyAhead(plan.view, 0, 4), mapped);
      w.Store(plan.view, {0, 1, 2, 3});  // kept as copied
      EXPECT_EQ(w.CopyAhead(plan.view, 4, 8), mapped);
      w.Store(plan.view, {5, 7});  // dropped, then these two stored
      EXPECT_EQ(w.CopyAhead(plan.view, 8, 301), mapped);
      w.Store(plan.view, {300});
      EXPECT_EQ(w.CopyAhead(plan.view, 300, 301), mapped);  // pending at Finish
    });
    EXPECT_EQ(ahead.bytes, plain.bytes);
    ASSERT_EQ(ahead.entry.extents.size(), plain.entry.extents.size());
    for (size_t i = 0; i < plain.entry.extents.size(); ++i) {
      EXPECT_EQ(ahead.entry.extents[i].length, plain.entry.extents[i].length) << "extent " << i;
      EXPECT_EQ(ahead.entry.extents[i].crcs, plain.entry.extents[i].crcs) << "extent " << i;
    }
  }
  // And the stored pages are the region's bytes, in order.
  std::string expected;
  for (size_t i : kStored) {
    expected.append(reinterpret_cast<const char*>(plan.view.page(i).data), plan.view.page(i).length);
  }
  EXPECT_EQ(plain.bytes.substr(plan.header.DataOffset(), expected.size()), expected);
}

}  // namespace
}  // namespace cairn
