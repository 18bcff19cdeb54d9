// The arena is a working heap, and a copy of its used bytes put back at the
// same address is the same heap again (what a transparent restart does).
#include "transparent/arena.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

constexpr uintptr_t kAddress = 0x300000000000;
constexpr size_t kCapacity = size_t{1} << 30;

class ArenaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = Arena::Reserve(kAddress, kCapacity);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  void SetUp() override { arena_.Format(); }
  Arena arena_{kAddress, kCapacity};
};

TEST_F(ArenaTest, ReserveRefusesATakenRangeNamingIt) {
  auto again = Arena::Reserve(kAddress, 4096 * 4);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kMismatch);
  EXPECT_NE(again.status().message().find("0x300000000000"), std::string::npos);
}

TEST_F(ArenaTest, RandomAllocationsKeepTheirBytesAndAlignment) {
  const unsigned seed = 4242;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::map<char*, std::pair<size_t, char>> live;
  for (int i = 0; i < 20000; ++i) {
    if (!live.empty() && rng() % 3 == 0) {
      auto it = std::next(live.begin(), rng() % live.size());
      auto [p, info] = *it;
      for (size_t k = 0; k < info.first; k += 97) ASSERT_EQ(p[k], info.second) << "seed " << seed;
      arena_.Free(p);
      live.erase(it);
      continue;
    }
    size_t size = rng() % 4 == 0 ? rng() % (1 << 20) : rng() % 512;
    size_t align = rng() % 5 == 0 ? size_t{1} << (4 + rng() % 9) : 16;
    auto* p = static_cast<char*>(arena_.AllocateAligned(align, size));
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(arena_.Owns(p));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    ASSERT_GE(arena_.UsableSize(p), size);
    char fill = static_cast<char>(rng());
    std::memset(p, fill, size);
    live[p] = {size, fill};
  }
  for (auto& [p, info] : live) arena_.Free(p);
}

TEST_F(ArenaTest, FreeingTheTopBlockLowersWhatACheckpointCaptures) {
  size_t before = arena_.used();
  void* big = arena_.Allocate(8 << 20);
  EXPECT_GE(arena_.used(), before + (8 << 20));
  arena_.Free(big);
  EXPECT_EQ(arena_.used(), before);
}

TEST_F(ArenaTest, ARestoredCopyIsTheSameHeap) {
  auto* list = static_cast<uintptr_t*>(arena_.Allocate(100 * sizeof(uintptr_t)));
  for (int i = 0; i < 100; ++i) {
    auto* s = static_cast<char*>(arena_.Allocate(40 + i));
    std::snprintf(s, 40 + i, "node %d", i);
    list[i] = reinterpret_cast<uintptr_t>(s);
  }
  std::vector<char> saved(arena_.used());
  std::memcpy(saved.data(), reinterpret_cast<void*>(kAddress), saved.size());
  // The run goes on and changes the heap; then the copy comes back.
  for (int i = 0; i < 50; ++i) arena_.Free(reinterpret_cast<void*>(list[i]));
  void* later = arena_.Allocate(1 << 20);
  std::memset(later, 0x5a, 1 << 20);
  std::memcpy(reinterpret_cast<void*>(kAddress), saved.data(), saved.size());
  ASSERT_TRUE(arena_.Check().ok());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(std::string(reinterpret_cast<char*>(list[i])), "node " + std::to_string(i));
  }
  // Allocation goes on from the restored state without touching live blocks.
  auto* fresh = static_cast<char*>(arena_.Allocate(40));
  for (int i = 0; i < 100; ++i) EXPECT_NE(fresh, reinterpret_cast<char*>(list[i]));
}

TEST_F(ArenaTest, CheckRefusesBytesThatAreNoHeap) {
  std::memset(reinterpret_cast<void*>(kAddress), 0, 64);
  Status s = arena_.Check();
  EXPECT_EQ(s.code(), Code::kCorrupt);
}

TEST_F(ArenaTest, AFullArenaReturnsNull) {
  EXPECT_EQ(arena_.Allocate(kCapacity), nullptr);
  EXPECT_EQ(arena_.Allocate(kCapacity - 4096), nullptr);
}

}  // namespace
}  // namespace cairn
