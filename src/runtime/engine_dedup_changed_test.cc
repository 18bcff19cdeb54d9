// Changed pages (Engine::NoteChangedPages, ChangedPageMask): a note spares
// hashing exactly the clean pages that cannot have moved, is ignored
// whenever it is not relative to the previous version of the same name, and
// versions that used it restore bit-exact.
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "comm/comm.h"
#include "env/env.h"
#include "runtime/engine.h"

namespace cairn {
namespace {

constexpr uint32_t kPage = 4096;

Region RegionAt(int id, void* ptr, uint64_t bytes) { return {id, ptr, bytes, 1}; }

ChangedPages Note(int64_t since, const void* base, std::vector<ChangedPages::Run> runs,
                  uint64_t page_size = kPage) {
  ChangedPages n;
  n.since_version = since;
  n.base = base;
  n.page_size = page_size;
  n.runs = std::move(runs);
  return n;
}

TEST(ChangedPageMask, OnlyUnwrittenWholePagesOfAnUnmovedRegionAreClean) {
  std::vector<uint8_t> heap(4 * kPage + 10), other(2 * kPage);
  std::vector<Region> regions{RegionAt(1, heap.data(), heap.size()),
                              RegionAt(2, other.data(), other.size())};
  ChangedPagesByRegion notes{{1, Note(3, heap.data(), {{1, 2}})}};
  std::vector<bool> mask = ChangedPageMask(regions, regions, kPage, notes, 3);
  // heap: pages 0 clean, 1-2 written, 3 clean, the short page 4 hashed;
  // region 2 has no note.
  EXPECT_EQ(mask, (std::vector<bool>{false, true, true, false, true, true, true}));
}

TEST(ChangedPageMask, ANoteIsIgnoredUnlessItIsRelativeToThePreviousVersionAtTheSamePlace) {
  std::vector<uint8_t> heap(4 * kPage), moved(4 * kPage);
  std::vector<Region> regions{RegionAt(1, heap.data(), heap.size())};
  ChangedPagesByRegion notes{{1, Note(3, heap.data(), {})}};
  EXPECT_TRUE(ChangedPageMask(regions, regions, kPage, notes, 2).empty());             // other version
  EXPECT_TRUE(ChangedPageMask(regions, regions, kPage, notes, std::nullopt).empty());  // forgotten
  std::vector<Region> before{RegionAt(1, moved.data(), moved.size())};
  EXPECT_TRUE(ChangedPageMask(regions, before, kPage, notes, 3).empty());  // region moved
  // A region listed before it grew: the heap's pages now sit at other indices.
  std::vector<uint8_t> first(kPage), first_grown(2 * kPage);
  std::vector<Region> was{RegionAt(0, first.data(), first.size()), regions[0]};
  std::vector<Region> now{RegionAt(0, first.data(), first_grown.size()), regions[0]};
  EXPECT_TRUE(ChangedPageMask(now, was, kPage, notes, 3).empty());
}

TEST(ChangedPageMask, PagesBeyondTheOldEndAreHashedAndLargerPagesSeeSmallerWrites) {
  std::vector<uint8_t> heap(8 * kPage);
  std::vector<Region> before{RegionAt(1, heap.data(), 4 * kPage)};
  std::vector<Region> now{RegionAt(1, heap.data(), 8 * kPage)};
  ChangedPagesByRegion notes{{1, Note(0, heap.data(), {{2, 1}})}};
  EXPECT_EQ(ChangedPageMask(now, before, kPage, notes, 0),
            (std::vector<bool>{false, false, true, false, true, true, true, true}));
  // Dedup pages of 8 KiB over a tracker's 4 KiB pages: page 1 holds 2-3.
  EXPECT_EQ(ChangedPageMask(now, before, 2 * kPage, notes, 0),
            (std::vector<bool>{false, true, true, true}));
}

// Two names checkpointed in turn (transparent mode's image and data): each
// version of "data" hashes only the noted pages and restores bit-exact.
TEST(EngineChangedPages, OnlyNotedPagesAreHashedAndTheVersionRestoresBitExact) {
  auto env = NewMemEnv();
  Config config;
  config.dir = "/data";
  config.log_level = "off";
  config.tier(TierKind::kMemory).path = "/shm/{node}";
  config.tier(TierKind::kMemory).keep_at_finalize = true;
  config.tier(TierKind::kSsd).enabled = false;
  config.tier(TierKind::kPfs).path = "{dir}/pfs";
  config.dedup.mode = DedupMode::kIncremental;
  std::vector<uint8_t> heap(64 * kPage);
  for (size_t i = 0; i < heap.size(); ++i) heap[i] = static_cast<uint8_t>(i * 31 + i / kPage);
  std::vector<uint8_t> image(100, 7);
  {
    auto engine = Engine::Create(NewSingleComm(), config, env.get(), Clock::Real());
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    Engine& e = **engine;
    for (int64_t v = 0; v < 3; ++v) {
      if (v > 0) heap[(5 * v) * kPage + 1] ^= 0xFF;  // one written page per version
      ASSERT_TRUE(e.Protect(0, image.data(), image.size(), 1).ok());
      ASSERT_TRUE(e.Checkpoint("data.image", v).ok());
      ASSERT_TRUE(e.Unprotect(0).ok());
      // For the next checkpoint call only, as transparent mode notes them.
      if (v > 0) {
        e.NoteChangedPages(1, Note(v - 1, heap.data(), {{static_cast<uint64_t>(5 * v), 1}}));
      }
      ASSERT_TRUE(e.Protect(1, heap.data(), heap.size(), 1).ok());
      Status s = e.Checkpoint("data", v);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_TRUE(e.Unprotect(1).ok());
      const PageCounts& c = e.last_checkpoint().pages;
      EXPECT_EQ(c.hashed, v == 0 ? 64u : 1u) << "version " << v;
      EXPECT_EQ(c.unchanged, v == 0 ? 0u : 63u) << "version " << v;
    }
    ASSERT_TRUE(e.Finalize().ok());
  }
  auto engine = Engine::Create(NewSingleComm(), config, env.get(), Clock::Real());
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::vector<uint8_t> restored(heap.size());
  ASSERT_TRUE((*engine)->Protect(1, restored.data(), restored.size(), 1).ok());
  auto report = (*engine)->Restart("data", 2);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(restored == heap);
  ASSERT_TRUE((*engine)->Finalize().ok());
}

}  // namespace
}  // namespace cairn
