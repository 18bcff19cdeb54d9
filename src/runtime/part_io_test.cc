#include "runtime/part_io.h"

#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "format/layout.h"
#include "runtime/ecc_sidecar.h"

namespace cairn {
namespace {

constexpr uint64_t kSeed = 20261107;

// Regions of random bytes, and buffers of the same shapes to restore into.
struct State {
  std::vector<std::vector<uint8_t>> data;
  std::vector<Region> regions;

  State(const std::vector<uint64_t>& sizes, uint64_t seed) {
    std::mt19937_64 rng(seed);
    data.resize(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      data[i].resize(sizes[i]);
      for (auto& b : data[i]) b = static_cast<uint8_t>(rng());
      regions.push_back({static_cast<int>(i), data[i].data(), sizes[i], 1});
    }
  }
  // Same shapes, zeroed.
  State Blank() const {
    State out = *this;
    for (size_t i = 0; i < out.data.size(); ++i) {
      std::fill(out.data[i].begin(), out.data[i].end(), 0);
      out.regions[i].ptr = out.data[i].data();
    }
    return out;
  }
};

class PartIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::printf("seed %llu\n", static_cast<unsigned long long>(kSeed));
    env_ = NewMemEnv();
    tier_ = std::make_unique<Tier>(env_.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  }

  // Restores version 1 of "c" from the tier into `into`, as restart does.
  Status Restore(const FileEntry& entry, State& into) {
    CAIRN_ASSIGN_OR_RETURN(PartHeader header, ReadPartHeader(*tier_, "c", 1, entry));
    CAIRN_RETURN_IF_ERROR(CheckRegionsMatch(header, into.regions));
    return ReadPartInto(*tier_, "c", 1, entry, into.regions);
  }

  std::unique_ptr<Env> env_;
  std::unique_ptr<Tier> tier_;
};

TEST_F(PartIoTest, ManyTinyRegionsMakeASmallPartRestoredBitExact) {
  // A hydrodynamics code's scalars and small tables beside one large field.
  std::vector<uint64_t> sizes;
  uint64_t small_bytes = 0;
  for (int i = 0; i < 200; ++i) {
    sizes.push_back(1 + i % 24);
    small_bytes += sizes.back();
  }
  sizes.push_back(3 * kBlockSize + 5);
  State state(sizes, kSeed);
  PartHeader header = MakePartHeader("c", 1, 0, 1, state.regions);
  auto entry = WritePart(*tier_, header, state.regions);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  // Packing costs at most 7 bytes per small region and one page before the
  // large one, not a page per region.
  EXPECT_LE(entry->size, header.HeaderBytes() + small_bytes + 7 * 200 + kRegionAlign +
                             sizes.back());
  EXPECT_EQ(header.regions.back().offset % kRegionAlign, 0u);
  State restored = state.Blank();
  Status s = Restore(*entry, restored);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(restored.data, state.data);
}

TEST_F(PartIoTest, FiveScalarsCostBytesNotPages) {
  State state({8, 8, 8, 8, 8}, kSeed);
  PartHeader header = MakePartHeader("hydro", 1, 0, 1, state.regions);
  auto entry = WritePart(*tier_, header, state.regions);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  EXPECT_EQ(entry->size, AlignUp(header.HeaderBytes(), kPackedRegionAlign) + 40);
}

TEST_F(PartIoTest, FormatOnePartIsStillRestored) {
  // A part as format 1 wrote it: a header with a name field of the name's
  // length, every region at a 4 KiB boundary, zeros between.
  State state({10, 70000, 3}, kSeed + 1);
  PartHeader header;
  header.format = 1;
  header.name = "c";
  header.version = 1;
  header.nranks = 1;
  uint64_t end = 0;
  for (const Region& r : state.regions) header.regions.push_back({r.id, 1, r.count, 0});
  end = header.HeaderBytes();
  for (auto& r : header.regions) {
    r.offset = AlignUp(end, kRegionAlign);
    end = r.offset + r.bytes();
  }
  std::string bytes = header.Encode();
  FileEntry entry;
  entry.name = PartFileName(0);
  ExtentChecksummer head_sum(0);
  head_sum.Update(bytes.data(), bytes.size());
  entry.extents.push_back(head_sum.Finish());
  for (size_t i = 0; i < state.regions.size(); ++i) {
    bytes.resize(header.regions[i].offset, '\0');
    bytes.append(reinterpret_cast<const char*>(state.data[i].data()), state.data[i].size());
    ExtentChecksummer sum(header.regions[i].offset);
    sum.Update(state.data[i].data(), state.data[i].size());
    entry.extents.push_back(sum.Finish());
  }
  entry.size = bytes.size();
  ASSERT_EQ(entry.size, end);
  ASSERT_TRUE(tier_->PutFile("c", 1, entry.name, bytes).ok());
  State restored = state.Blank();
  Status s = Restore(entry, restored);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(restored.data, state.data);
}

TEST_F(PartIoTest, EccSidecarCoversPackedRegionsSharingAShard) {
  // The header and several small regions share the part's first shard: a
  // damaged first page must be rebuilt from all of them.
  State state({5, 12, 64, 1000, 2 * kBlockSize}, kSeed + 2);
  PartHeader header = MakePartHeader("c", 1, 0, 1, state.regions);
  auto part = WritePart(*tier_, header, state.regions);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  auto parity = WriteEccSidecar(*tier_, header, state.regions, EccMode::kStrong);
  ASSERT_TRUE(parity.ok()) << parity.status().ToString();
  const std::string path = tier_->FilePath("c", 1, part->name);
  std::string bytes = *env_->ReadFileToString(path);
  const std::string pristine = bytes;
  for (size_t i = 0; i < kEccShardSize; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  ASSERT_TRUE(env_->WriteFileAtomic(path, bytes.data(), bytes.size(), false).ok());
  auto repaired = RepairPart(*tier_, "c", 1, *part, *parity);
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_EQ(std::string(repaired->bytes.begin(), repaired->bytes.end()), pristine);
  EXPECT_EQ(repaired->shards_corrected, 1u);
}

}  // namespace
}  // namespace cairn
