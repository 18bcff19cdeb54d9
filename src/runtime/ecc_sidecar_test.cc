#include "runtime/ecc_sidecar.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "codec/crc32c.h"
#include "format/layout.h"

namespace cairn {
namespace {

constexpr uint64_t kS = kEccShardSize;

// A part file and its sidecar on a memory tier in a MemEnv, written by
// WritePart and WriteEccSidecar from regions of random bytes, for each ecc
// mode. Damage is applied to the stored files; the regions stay pristine.
class EccSidecarTest : public ::testing::TestWithParam<EccMode> {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    tier_ = std::make_unique<Tier>(env_.get(), TierKind::kMemory, "/shm/0", TierConfig{});
    RsCode code(*EccCodeFor(GetParam()));
    k_ = code.k();
    m_ = code.m();
  }

  // Writes version 1 with one region per entry of `sizes` (bytes).
  void Write(const std::vector<uint64_t>& sizes, uint64_t seed = 17) {
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    data_.assign(sizes.size(), {});
    std::vector<Region> regions;
    for (size_t i = 0; i < sizes.size(); ++i) {
      data_[i].resize(sizes[i]);
      for (auto& b : data_[i]) b = static_cast<uint8_t>(rng());
      regions.push_back({static_cast<int>(i), data_[i].data(), sizes[i], 1});
    }
    PartHeader header = MakePartHeader("c", 1, 0, 1, regions);
    auto part = WritePart(*tier_, header, regions);
    ASSERT_TRUE(part.ok()) << part.status().ToString();
    part_ = *part;
    auto parity = WriteEccSidecar(*tier_, header, regions, GetParam());
    ASSERT_TRUE(parity.ok()) << parity.status().ToString();
    parity_ = *parity;
    pristine_ = Read(PartPath());
    pristine_sidecar_ = Read(SidecarPath());
  }

  std::string PartPath() const { return tier_->FilePath("c", 1, part_.name); }
  std::string SidecarPath() const { return tier_->FilePath("c", 1, parity_.name); }
  uint64_t Stripes() const { return (part_.size + k_ * kS - 1) / (k_ * kS); }
  uint64_t RecordBytes() const { return m_ * kS + 4 * (k_ + m_); }
  // Offset in the sidecar of the CRC32C of shard j (data 0..k-1, then parity).
  uint64_t CrcAt(uint64_t stripe, int j) const {
    return kEccHeaderSize + stripe * RecordBytes() + m_ * kS + 4 * j;
  }
  uint64_t ParityAt(uint64_t stripe, int p) const {
    return kEccHeaderSize + stripe * RecordBytes() + p * kS;
  }

  std::string Read(const std::string& path) {
    auto s = env_->ReadFileToString(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : std::string();
  }
  void Store(const std::string& path, const std::string& bytes) {
    ASSERT_TRUE(env_->WriteFileAtomic(path, bytes.data(), bytes.size(), false).ok());
  }

  // Overwrites data shard j of stripe s (as far as the file holds it) with
  // garbage.
  static void Garble(std::string& part, uint64_t s, int j, int k, std::mt19937_64& rng) {
    uint64_t begin = (s * k + j) * kS;
    for (uint64_t i = begin; i < std::min<uint64_t>(part.size(), begin + kS); ++i) {
      part[i] = static_cast<char>(part[i] ^ (1 + rng() % 255));
    }
  }

  Result<RepairedPart> Repair() { return RepairPart(*tier_, "c", 1, part_, parity_); }
  Result<EccScan> Scan() { return ScanPart(*tier_, "c", 1, part_, parity_); }

  // The part repairs to its pristine bytes with `shards` shards corrected.
  void ExpectRepaired(uint64_t shards) {
    auto r = Repair();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->shards_corrected, shards);
    EXPECT_TRUE(r->bytes == std::vector<uint8_t>(pristine_.begin(), pristine_.end()));
    auto scan = Scan();
    ASSERT_TRUE(scan.ok()) << scan.status().ToString();
    EXPECT_TRUE(scan->status.ok()) << scan->status.ToString();
    EXPECT_EQ(scan->shards_corrected, shards);
    EXPECT_EQ(scan->shards_uncorrectable, 0u);
    EXPECT_EQ(scan->stripes_uncorrectable, 0u);
  }

  std::unique_ptr<Env> env_;
  std::unique_ptr<Tier> tier_;
  int k_ = 0;
  int m_ = 0;
  std::vector<std::vector<uint8_t>> data_;
  FileEntry part_;
  FileEntry parity_;
  std::string pristine_;
  std::string pristine_sidecar_;
};

// Three regions, the last two ending off any shard or stripe boundary:
// several stripes, the last one short.
const std::vector<uint64_t> kSizes = {300000, 5000, 1001};

TEST_P(EccSidecarTest, SidecarHasTheDocumentedSize) {
  Write(kSizes);
  EXPECT_EQ(parity_.kind, FileKind::kParity);
  EXPECT_EQ(parity_.name, EccSidecarName(0));
  EXPECT_NE(part_.size % (k_ * kS), 0u);
  EXPECT_EQ(parity_.size, kEccHeaderSize + Stripes() * RecordBytes());
  EXPECT_EQ(pristine_sidecar_.size(), parity_.size);
  EXPECT_EQ(pristine_sidecar_.substr(0, 8), std::string(kEccMagic, 8));
}

TEST_P(EccSidecarTest, UndamagedPartNeedsNoCorrection) {
  Write(kSizes);
  ExpectRepaired(0);
  auto r = Repair();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stripes_repaired, 0u);
}

TEST_P(EccSidecarTest, SyndromesFindABadShardWhoseCrcMatches) {
  Write(kSizes);
  // A bit flipped in data shard 5 of stripe 1, and the shard's CRC in the
  // sidecar patched to match, as if CRC32C had collided.
  std::string part = pristine_, sidecar = pristine_sidecar_;
  uint64_t shard = 1 * k_ + 5;
  part[shard * kS + 77] ^= 0x08;
  uint32_t crc = Crc32c(part.data() + shard * kS, kS);
  std::memcpy(sidecar.data() + CrcAt(1, 5), &crc, 4);
  Store(PartPath(), part);
  Store(SidecarPath(), sidecar);
  ExpectRepaired(1);
}

TEST_P(EccSidecarTest, RebuildsUpToMErasuresInEveryStripe) {
  Write(kSizes);
  std::mt19937_64 rng(5);
  for (int e = 1; e <= m_; ++e) {
    std::string part = pristine_;
    uint64_t total = 0;
    for (uint64_t s = 0; s < Stripes(); ++s) {
      std::vector<int> js;
      for (int j = 0; j < k_; ++j) {
        if ((s * k_ + j) * kS < part.size()) js.push_back(j);
      }
      std::shuffle(js.begin(), js.end(), rng);
      js.resize(std::min<size_t>(js.size(), e));
      for (int j : js) Garble(part, s, j, k_, rng);
      total += js.size();
    }
    Store(PartPath(), part);
    SCOPED_TRACE(e);
    ExpectRepaired(total);
  }
}

TEST_P(EccSidecarTest, ParityShardsCountTowardsTheM) {
  Write(kSizes);
  std::mt19937_64 rng(6);
  // m - 1 data shards and one parity shard: within capacity.
  std::string part = pristine_, sidecar = pristine_sidecar_;
  for (int j = 0; j < m_ - 1; ++j) Garble(part, 0, j, k_, rng);
  sidecar[ParityAt(0, m_ - 1) + 10] ^= 0x40;
  Store(PartPath(), part);
  Store(SidecarPath(), sidecar);
  ExpectRepaired(m_);
  // m data shards and one parity shard: beyond it.
  Garble(part, 0, m_ - 1, k_, rng);
  Store(PartPath(), part);
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
}

TEST_P(EccSidecarTest, MPlusOneBadShardsAreUncorrectableAndNameTheFile) {
  Write(kSizes);
  std::mt19937_64 rng(7);
  std::string part = pristine_;
  for (int j = 0; j <= m_; ++j) Garble(part, 1, j * 3, k_, rng);  // m + 1 in stripe 1
  Garble(part, 0, 2, k_, rng);                                    // 1 in stripe 0
  Store(PartPath(), part);
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  const std::string message = r.status().ToString();
  EXPECT_NE(message.find(PartPath()), std::string::npos) << message;
  EXPECT_NE(message.find("stripe 1 "), std::string::npos) << message;
  // The scan goes on and counts both stripes.
  auto scan = Scan();
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ(scan->status.code(), Code::kCorrupt);
  EXPECT_NE(scan->status.ToString().find("stripe 1 "), std::string::npos);
  EXPECT_EQ(scan->shards_corrected, 1u);
  EXPECT_EQ(scan->stripes_repaired, 1u);
  EXPECT_EQ(scan->shards_uncorrectable, static_cast<uint64_t>(m_ + 1));
  EXPECT_EQ(scan->stripes_uncorrectable, 1u);
}

TEST_P(EccSidecarTest, TwoBadShardsWithMatchingCrcsAreDetected) {
  Write(kSizes);
  std::string part = pristine_, sidecar = pristine_sidecar_;
  for (int j : {1, 4}) {
    part[j * kS + 9] ^= 0x01;
    uint32_t crc = Crc32c(part.data() + j * kS, kS);
    std::memcpy(sidecar.data() + CrcAt(0, j), &crc, 4);
  }
  Store(PartPath(), part);
  Store(SidecarPath(), sidecar);
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("matching CRCs"), std::string::npos);
  auto scan = Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->stripes_uncorrectable, 1u);
  EXPECT_EQ(scan->shards_uncorrectable, 0u);  // no CRC names them
}

// A parity shard altered together with its CRC, and m data shards erased:
// no parity is left to cross-check the rebuild, which comes out wrong; only
// the part's block CRCs can tell.
TEST_P(EccSidecarTest, BlockCrcsCatchAWrongRebuild) {
  Write(kSizes);
  std::mt19937_64 rng(11);
  std::string part = pristine_, sidecar = pristine_sidecar_;
  for (int j = 0; j < m_; ++j) Garble(part, 1, j, k_, rng);
  sidecar[ParityAt(1, 0) + 123] ^= 0x20;
  uint32_t crc = Crc32c(sidecar.data() + ParityAt(1, 0), kS);
  std::memcpy(sidecar.data() + CrcAt(1, k_), &crc, 4);
  Store(PartPath(), part);
  Store(SidecarPath(), sidecar);
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  EXPECT_NE(r.status().ToString().find("fails its CRC32C"), std::string::npos)
      << r.status().ToString();
  auto scan = Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->status.code(), Code::kCorrupt);
  EXPECT_EQ(scan->stripes_uncorrectable, 0u);  // the stripe looked repaired
}

TEST_P(EccSidecarTest, TruncatedPartIsRebuiltWithinCapacity) {
  Write(kSizes);
  // The cut removes the part's last shard, partly filled, and some of the
  // one before: two erasures.
  const uint64_t last_shard = (part_.size - 1) / kS;
  Store(PartPath(), pristine_.substr(0, last_shard * kS - 100));
  ExpectRepaired(2);
}

TEST_P(EccSidecarTest, TruncationBeyondCapacityIsUncorrectable) {
  Write(kSizes);
  const uint64_t last_stripe_begin = (Stripes() - 1) * k_ * kS;
  ASSERT_GT(part_.size - last_stripe_begin, m_ * kS) << "the last stripe must hold > m shards";
  Store(PartPath(), pristine_.substr(0, last_stripe_begin + 10));
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  EXPECT_NE(r.status().ToString().find(PartPath()), std::string::npos);
}

TEST_P(EccSidecarTest, DamagedSidecarHeaderIsRefused) {
  Write(kSizes);
  std::string part = pristine_, sidecar = pristine_sidecar_;
  std::mt19937_64 rng(8);
  Garble(part, 0, 0, k_, rng);
  Store(PartPath(), part);
  sidecar[20] ^= 0x01;  // the part size field: the header CRC fails
  Store(SidecarPath(), sidecar);
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  EXPECT_NE(r.status().ToString().find(SidecarPath()), std::string::npos);
  EXPECT_FALSE(Scan().ok());
}

TEST_P(EccSidecarTest, SidecarOfTheWrongSizeIsRefused) {
  Write(kSizes);
  Store(SidecarPath(), pristine_sidecar_.substr(0, pristine_sidecar_.size() - 1));
  auto r = Repair();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  EXPECT_NE(r.status().ToString().find(SidecarPath()), std::string::npos);
}

TEST_P(EccSidecarTest, DamagedShardCrcInTheSidecarIsAnErasure) {
  Write(kSizes);
  std::string sidecar = pristine_sidecar_;
  sidecar[CrcAt(Stripes() - 1, 0)] ^= 0x10;
  Store(SidecarPath(), sidecar);
  // The shard is rebuilt to what it already held.
  ExpectRepaired(1);
}

// Every shard of the file, one at a time, for parts whose size is not a
// multiple of the stripe (nor, for the first, of the shard).
TEST_P(EccSidecarTest, EveryShardOfOddSizedPartsIsRepairable) {
  for (const auto& sizes : std::vector<std::vector<uint64_t>>{{1}, {4096}, {70001, 3}}) {
    Write(sizes, sizes.front());
    std::mt19937_64 rng(9);
    const uint64_t shards = (part_.size + kS - 1) / kS;
    for (uint64_t shard = 0; shard < shards; ++shard) {
      std::string part = pristine_;
      Garble(part, shard / k_, static_cast<int>(shard % k_), k_, rng);
      Store(PartPath(), part);
      SCOPED_TRACE(testing::Message() << "part " << part_.size << " bytes, shard " << shard);
      ExpectRepaired(1);
    }
  }
}

TEST_P(EccSidecarTest, StreamingHandsOutTheRepairedPartInOrder) {
  Write(kSizes);
  std::mt19937_64 rng(10);
  std::string part = pristine_;
  Garble(part, Stripes() - 1, 1, k_, rng);
  Store(PartPath(), part);
  std::string streamed;
  auto counts = RepairPartStreaming(*tier_, "c", 1, part_, parity_,
                                    [&](uint64_t offset, const uint8_t* data, uint64_t n) {
                                      EXPECT_EQ(offset, streamed.size());
                                      EXPECT_LE(n, k_ * kS);
                                      streamed.append(reinterpret_cast<const char*>(data), n);
                                      return Status::Ok();
                                    });
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->shards_corrected, 1u);
  EXPECT_EQ(counts->stripes_repaired, 1u);
  EXPECT_TRUE(streamed == pristine_);
  // A sink's error stops the repair and comes back.
  int calls = 0;
  auto stopped = RepairPartStreaming(*tier_, "c", 1, part_, parity_,
                                     [&](uint64_t, const uint8_t*, uint64_t) {
                                       ++calls;
                                       return Error(Code::kIo, "disk full");
                                     });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.status().code(), Code::kIo);
  EXPECT_EQ(calls, 1);
}

INSTANTIATE_TEST_SUITE_P(BothModes, EccSidecarTest,
                         ::testing::Values(EccMode::kNormal, EccMode::kStrong),
                         [](const auto& info) {
                           return info.param == EccMode::kNormal ? "normal" : "strong";
                         });

TEST(EccSidecar, CodeForEachMode) {
  EXPECT_EQ(EccCodeFor(EccMode::kNone), std::nullopt);
  EXPECT_EQ(EccCodeFor(EccMode::kNormal), RsCodeId::kRs36_32);
  EXPECT_EQ(EccCodeFor(EccMode::kStrong), RsCodeId::kRs19_16);
  EXPECT_EQ(EccSidecarName(3), "r000003.part.ecc");
}

}  // namespace
}  // namespace cairn
