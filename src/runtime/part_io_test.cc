#include "runtime/part_io.h"

#include <unistd.h>

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

// Restores version 1 of "c" from the tier into `into`, as restart does:
// phase one checks the whole part, phase two copies it in.
Status RestoreFrom(const Tier& tier, const FileEntry& entry, State& into) {
  CAIRN_ASSIGN_OR_RETURN(PartHeader header, ReadPartHeader(tier, "c", 1, entry));
  CAIRN_RETURN_IF_ERROR(CheckRegionsMatch(header, into.regions));
  CAIRN_ASSIGN_OR_RETURN(auto staged, StagePart(tier, "c", 1, entry));
  return staged->CopyInto(into.regions);
}

class PartIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::printf("seed %llu\n", static_cast<unsigned long long>(kSeed));
    env_ = NewMemEnv();
    tier_ = std::make_unique<Tier>(env_.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  }

  Status Restore(const FileEntry& entry, State& into) { return RestoreFrom(*tier_, entry, into); }

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

TEST_F(PartIoTest, SidecarWrittenWithThePartEqualsOneWrittenAfterIt) {
  // Packed small regions, a region ending mid-stripe, and a last stripe
  // the part fills only in part: every way a stripe is assembled.
  State state({5, 12, 64, 1000, 2 * kBlockSize + 333, 3 * kBlockSize}, kSeed + 5);
  PartHeader header = MakePartHeader("c", 1, 0, 1, state.regions);
  for (EccMode mode : {EccMode::kNormal, EccMode::kStrong}) {
    auto writer = EccSidecarWriter::Start(*tier_, header, mode);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    auto part = WritePart(*tier_, header, state.regions, writer->get());
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    auto fused = (*writer)->Commit();
    ASSERT_TRUE(fused.ok()) << fused.status().ToString();
    const std::string path = tier_->FilePath("c", 1, fused->name);
    const std::string fused_bytes = *env_->ReadFileToString(path);
    auto after = WriteEccSidecar(*tier_, header, state.regions, mode);
    ASSERT_TRUE(after.ok()) << after.status().ToString();
    EXPECT_EQ(*env_->ReadFileToString(path), fused_bytes);
    EXPECT_EQ(after->extents[0].crcs, fused->extents[0].crcs);
    EXPECT_EQ(fused->size, fused_bytes.size());
  }
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

// Phase one from the real file system: a memory-tier part is checked in a
// mapping (populated at once), a device's part through reads. A flipped
// byte is found before any byte reaches the regions.
class PartStagingTest : public ::testing::TestWithParam<TierKind> {
 protected:
  void SetUp() override {
    std::printf("seed %llu\n", static_cast<unsigned long long>(kSeed));
    root_ = "/tmp/cairn-part-staging-" + std::to_string(::getpid());
    tier_ = std::make_unique<Tier>(PosixEnv(), GetParam(), root_ + "/tier", TierConfig{});
  }
  void TearDown() override { (void)PosixEnv()->DeleteRecursive(root_); }

  std::string root_;
  std::unique_ptr<Tier> tier_;
};

TEST_P(PartStagingTest, StagedPartIsCopiedBitExact) {
  State state({3, 5 * kBlockSize + 17, 4096}, kSeed + 3);
  PartHeader header = MakePartHeader("c", 1, 0, 1, state.regions);
  auto entry = WritePart(*tier_, header, state.regions);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  State restored = state.Blank();
  Status s = RestoreFrom(*tier_, *entry, restored);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(restored.data, state.data);
}

TEST_P(PartStagingTest, FlippedByteFailsPhaseOneNamingTheFile) {
  State state({5 * kBlockSize + 17}, kSeed + 4);
  PartHeader header = MakePartHeader("c", 1, 0, 1, state.regions);
  auto entry = WritePart(*tier_, header, state.regions);
  ASSERT_TRUE(entry.ok()) << entry.status().ToString();
  const std::string path = tier_->FilePath("c", 1, entry->name);
  std::string bytes = *PosixEnv()->ReadFileToString(path);
  const uint64_t flipped = header.regions[0].offset + 3 * kBlockSize + 100;
  bytes[flipped] = static_cast<char>(bytes[flipped] ^ 0x01);
  ASSERT_TRUE(PosixEnv()->WriteFileAtomic(path, bytes.data(), bytes.size(), false).ok());
  auto staged = StagePart(*tier_, "c", 1, *entry);
  ASSERT_FALSE(staged.ok());
  EXPECT_EQ(staged.status().code(), Code::kCorrupt);
  EXPECT_NE(staged.status().message().find(path), std::string::npos) << staged.status().ToString();
  EXPECT_NE(staged.status().message().find("block 3"), std::string::npos)
      << staged.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Tiers, PartStagingTest,
                         ::testing::Values(TierKind::kMemory, TierKind::kSsd),
                         [](const auto& info) { return std::string(TierKindName(info.param)); });

}  // namespace
}  // namespace cairn
