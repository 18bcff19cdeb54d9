#include "storage/pmem_writes.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <random>

#include "storage/tier.h"

namespace cairn {
namespace {

class PmemTierTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/dev/shm/cairn-pmem-tier-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_;
};

TEST_F(PmemTierTest, ProbeSaysWhatTheMediumIs) {
  auto writes = PmemTierWrites(root_);
  ASSERT_TRUE(writes.ok()) << writes.status().ToString();
  EXPECT_NE(writes->copy, nullptr);
  EXPECT_FALSE(writes->persist);  // tmpfs: nothing behind the page cache
  auto missing = PmemTierWrites(root_ + "/no/such/dir");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(root_ + "/no/such/dir"), std::string::npos);
}

// Parts go through the commit protocol into mapped slots that are reused,
// and read back byte for byte at every alignment the streaming copy meets.
TEST_F(PmemTierTest, PartsAreStreamedIntoReusedSlotsAndReadBack) {
  constexpr uint32_t kSeed = 1616;
  SCOPED_TRACE(testing::Message() << "seed " << kSeed);
  std::mt19937_64 rng(kSeed);
  Tier tier(PosixEnv(), TierKind::kPmem, root_, TierConfig{});
  ASSERT_TRUE(tier.PrepareRoot().ok());
  ASSERT_TRUE(tier.MapsSlots());
  ASSERT_TRUE(tier.persists());
  tier.EnableSlots("r000001.", 1);
  const uint64_t size = (3 << 20) + 13;
  for (int v = 1; v <= 4; ++v) {
    std::string data(size, '\0');
    for (auto& c : data) c = static_cast<char>(rng());
    auto pending = tier.Create("heat", v, "r000001.part", size);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    // Appends of odd lengths put the streaming copy at every offset.
    for (uint64_t done = 0; done < size;) {
      uint64_t n = std::min<uint64_t>(size - done, 1 + rng() % (300 << 10));
      ASSERT_TRUE((*pending)->file().Append(data.data() + done, n).ok());
      done += n;
    }
    ASSERT_TRUE((*pending)->Commit().ok());
    EXPECT_EQ(*tier.GetFile("heat", v, "r000001.part"), data) << "version " << v;
    if (v > 1) {
      ASSERT_TRUE(tier.Retire("heat", v - 1, "r000001.part").ok());
    }
  }
  // Steady state: one parked slot, reused by each next version.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(root_ + "/.free"),
                          std::filesystem::directory_iterator()),
            1);
}

}  // namespace
}  // namespace cairn
