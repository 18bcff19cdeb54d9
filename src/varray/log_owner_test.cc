// The log's owner and client steps on one rank's memory, against a
// reference model of the array's history: puts, accs and version_incs at
// random, with a log small enough that cleaning runs often.
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "comm/rma_window.h"
#include "varray/log_client.h"
#include "varray/log_owner.h"

namespace cairn {
namespace {

struct LogHarness {
  LogHarness(uint64_t local_bytes, uint64_t block_size, uint64_t keep, uint64_t capacity,
             bool use_cas)
      : geometry(*Geometry::Make(local_bytes / 8, 8, block_size, 1)),
        layout(LogLayout::For(geometry, keep, capacity)),
        window(NewLocalRmaWindow(layout.capacity)),
        owner(window->local(), layout, local_bytes),
        client(window.get(), layout, use_cas) {
    owner.Format(42);
    Refresh();
  }
  void Refresh() {
    client.SetVersion(owner.version());
  }
  std::vector<uint8_t> Version(int64_t v) {
    std::vector<uint8_t> out(geometry.local_bytes(0));
    owner.Materialize(v, out);
    return out;
  }

  Geometry geometry;
  LogLayout layout;
  std::unique_ptr<RmaWindow> window;
  LogOwner owner;
  LogClient client;
};

TEST(LogOwner, FreshLogReadsZerosAndHoldsOnlyItsTable) {
  LogHarness h(4096, 256, 2, 0, true);
  EXPECT_EQ(h.owner.version(), 0);
  EXPECT_EQ(h.Version(0), std::vector<uint8_t>(4096, 0));
  EXPECT_EQ(h.owner.MemoryBytes(), h.layout.links_offset());
  EXPECT_TRUE(h.owner.CheckFormat().ok());
}

TEST(LogOwner, VersionIncCopiesNoMetadata) {
  LogHarness h(4096, 256, 8, 0, true);
  std::vector<uint8_t> all(4096, 1);
  ASSERT_TRUE(h.client.Write(0, 0, all, std::nullopt).ok());
  const uint64_t filled = h.owner.MemoryBytes();
  for (int v = 0; v < 5; ++v) {
    ASSERT_TRUE(h.owner.StartNextVersion(true, [](int64_t) { return Status::Ok(); }).ok());
  }
  EXPECT_EQ(h.owner.MemoryBytes(), filled);  // versions with no puts cost nothing
  h.Refresh();
  std::vector<uint8_t> one(8, 2);
  ASSERT_TRUE(h.client.Write(0, 0, one, std::nullopt).ok());
  EXPECT_EQ(h.owner.MemoryBytes(), filled + 8 + 256);  // one block and its link
  std::vector<uint8_t> expected = all;
  std::memset(expected.data(), 2, 8);
  EXPECT_EQ(h.Version(5), expected);
  for (int64_t v = 0; v < 5; ++v) EXPECT_EQ(h.Version(v), all) << "version " << v;
}

TEST(LogOwner, FirstPutAllocatesOverwriteWritesInPlace) {
  LogHarness h(4096, 256, 2, 0, true);
  std::vector<uint8_t> a(100, 7), b(100, 9);
  ASSERT_TRUE(h.client.Write(0, 10, a, std::nullopt).ok());
  const uint64_t after_first = h.owner.MemoryBytes();
  EXPECT_EQ(after_first, h.layout.links_offset() + 8 + 256);
  ASSERT_TRUE(h.client.Write(0, 50, b, std::nullopt).ok());
  EXPECT_EQ(h.owner.MemoryBytes(), after_first);  // the same block, in place
  EXPECT_EQ(h.client.counts().put_first, 1u);
  EXPECT_EQ(h.client.counts().put_ow_hit, 1u);
  std::vector<uint8_t> expected(4096, 0);
  std::memset(expected.data() + 10, 7, 100);
  std::memset(expected.data() + 50, 9, 100);
  EXPECT_EQ(h.Version(0), expected);
}

TEST(LogOwner, CorruptHeaderIsNamed) {
  LogHarness h(4096, 256, 2, 0, true);
  uint64_t wrong = 128;
  std::memcpy(h.window->local().data() + 8 * LogLayout::kBlockSize, &wrong, 8);
  Status s = h.owner.CheckFormat();
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("block_size"), std::string::npos) << s.message();
}

// Random puts and accs over several versions; after each version_inc every
// version in memory must read what the model says, through cleanings.
void RunAgainstModel(bool use_cas, uint64_t capacity, uint32_t seed) {
  SCOPED_TRACE(testing::Message() << "seed " << seed << " cas " << use_cas);
  constexpr uint64_t kBytes = 8192, kBlock = 128, kKeep = 3;
  LogHarness h(kBytes, kBlock, kKeep, capacity, use_cas);
  std::mt19937_64 rng(seed);
  std::map<int64_t, std::vector<uint8_t>> model;
  std::vector<uint8_t> current(kBytes, 0);
  std::vector<int64_t> evicted;
  for (int version = 0; version < 40; ++version) {
    for (int op = 0; op < 6; ++op) {
      const uint64_t n = 8 * (1 + rng() % 40);
      const uint64_t at = 8 * (rng() % ((kBytes - n) / 8 + 1));
      std::vector<uint8_t> data(n);
      for (auto& byte : data) byte = static_cast<uint8_t>(rng());
      if (rng() % 4 == 0) {
        ASSERT_TRUE(h.client.Write(0, at, data, RmaElement::kUint64).ok());
        for (uint64_t i = 0; i < n; i += 8) {
          uint64_t x, y;
          std::memcpy(&x, current.data() + at + i, 8);
          std::memcpy(&y, data.data() + i, 8);
          x += y;
          std::memcpy(current.data() + at + i, &x, 8);
        }
      } else {
        ASSERT_TRUE(h.client.Write(0, at, data, std::nullopt).ok());
        std::memcpy(current.data() + at, data.data(), n);
      }
    }
    model[version] = current;
    ASSERT_TRUE(h.owner.StartNextVersion(true, [&](int64_t v) {
      evicted.push_back(v);
      return Status::Ok();
    }).ok());
    h.Refresh();
    for (int64_t v = h.owner.oldest(); v < h.owner.version(); ++v) {
      ASSERT_EQ(h.Version(v), model[v]) << "version " << v;
    }
    ASSERT_EQ(h.Version(h.owner.version()), current);
  }
  EXPECT_EQ(h.owner.oldest(), 40 - static_cast<int64_t>(kKeep));
  EXPECT_EQ(evicted.size(), 40 - kKeep);
  EXPECT_GT(h.owner.Read(LogLayout::kCleanings), 0u);
}

TEST(LogOwner, MatchesModelWithCompareAndSwap) { RunAgainstModel(true, 0, 1234); }
TEST(LogOwner, MatchesModelWithClaimWords) { RunAgainstModel(false, 0, 5678); }
TEST(LogOwner, MatchesModelInATightLog) {
  // Room for 160 blocks, of which the four versions kept may use up to 136
  // (the array's 64 and up to 24 new in each of the three newer versions),
  // leaving the open version its 24: cleaning at almost every version_inc.
  Geometry g = *Geometry::Make(1024, 8, 128, 1);
  RunAgainstModel(true, LogLayout::CapacityFor(g, 160), 91);
}

TEST(LogOwner, RestoreRollsTheOpenVersionBack) {
  LogHarness h(4096, 256, 4, 0, true);
  std::vector<uint8_t> a(4096, 1), b(512, 2);
  ASSERT_TRUE(h.client.Write(0, 0, a, std::nullopt).ok());
  ASSERT_TRUE(h.owner.StartNextVersion(true, [](int64_t) { return Status::Ok(); }).ok());
  h.Refresh();
  ASSERT_TRUE(h.client.Write(0, 256, b, std::nullopt).ok());
  ASSERT_TRUE(h.owner.RestoreTo(0).ok());
  h.Refresh();
  EXPECT_EQ(h.Version(1), a);
  // A put after the restore copies the restored block, not the dropped one.
  std::vector<uint8_t> c(8, 3);
  ASSERT_TRUE(h.client.Write(0, 256, c, std::nullopt).ok());
  std::vector<uint8_t> expected = a;
  std::memset(expected.data() + 256, 3, 8);
  EXPECT_EQ(h.Version(1), expected);
}

TEST(LogOwner, RestoreThatDoesNotFitChangesNothing) {
  Geometry g = *Geometry::Make(512, 8, 128, 1);
  LogHarness h(4096, 128, 4, LogLayout::CapacityFor(g, 40), true);
  std::vector<uint8_t> a(4096, 1), b(1024, 2);
  ASSERT_TRUE(h.client.Write(0, 0, a, std::nullopt).ok());  // 32 slots
  ASSERT_TRUE(h.owner.StartNextVersion(true, [](int64_t) { return Status::Ok(); }).ok());
  h.Refresh();
  ASSERT_TRUE(h.client.Write(0, 0, b, std::nullopt).ok());  // 8 more: the log is full
  ASSERT_TRUE(h.owner.StartNextVersion(true, [](int64_t) { return Status::Ok(); }).ok());
  const std::vector<uint8_t> open = h.Version(2);
  // Blocks 0-7 of version 2 were written in version 1: each needs a slot.
  Status s = h.owner.RestoreTo(0);
  EXPECT_EQ(s.code(), Code::kNoSpace);
  EXPECT_NE(s.message().find("needs 8 blocks"), std::string::npos) << s.message();
  EXPECT_EQ(h.Version(2), open);
  EXPECT_EQ(h.Version(0), a);
}

TEST(LogOwner, FullLogIsNoSpaceNamingTheRank) {
  Geometry g = *Geometry::Make(512, 8, 128, 1);
  LogHarness h(4096, 128, 1, LogLayout::CapacityFor(g, 2), true);
  std::vector<uint8_t> all(4096, 5);
  Status s = h.client.Write(0, 0, all, std::nullopt);
  EXPECT_EQ(s.code(), Code::kNoSpace);
  EXPECT_NE(s.message().find("rank 0"), std::string::npos) << s.message();
  // The failed allocation is forgotten at the next version_inc.
  EXPECT_TRUE(h.owner.StartNextVersion(true, [](int64_t) { return Status::Ok(); }).ok());
}

}  // namespace
}  // namespace cairn
