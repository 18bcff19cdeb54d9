// Regression tests for what adversarial testing found in the restart
// pipeline (issue 10 items 8, 9 and 12). Each scenario runs whole jobs of
// several ranks (threads over ThreadComm, two per virtual node) on real
// files, damages or forges what one rank's copy holds, and asserts what an
// application would see:
//   - item 9: a restart that fails leaves the protected memory of every rank
//     byte for byte as it was before the call, wherever the damage is found
//     (the last block of one rank's part, on the memory or the ssd tier);
//   - item 12: a manifest or part header that is well formed (valid CRCs)
//     but states absurd sizes or counts is a corrupt copy, passed over like
//     any other, never an allocation that aborts the process;
//   - item 8: a copy that does not fit the job (another job size in its
//     manifest, other regions in its part header) is passed over, and the
//     intact copy of the same version on a slower tier is restored.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/clock.h"
#include "codec/crc32c.h"
#include "env/env.h"
#include "format/layout.h"
#include "format/manifest.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"
#include "tests/reliability/thread_job.h"
#include "tests/test_support.h"

namespace cairn {
namespace {

using cairn_test::FillVersion;
using cairn_test::HoldsVersion;

constexpr size_t kWords = 64 * 1024;  // 512 KiB per rank: several 64 KiB blocks
constexpr int kRanks = 4;
constexpr int kRanksPerNode = 2;
const char kName[] = "job";

// One job of `ranks` ranks (tests/reliability/thread_job.h).
void RunJob(int ranks, Env* env, const Config& config,
            const std::function<void(int, Engine&, std::vector<uint64_t>&)>& body) {
  cairn_test::RunThreadJob(ranks, kRanksPerNode, kWords, env, config, body);
}

// State of version v on rank r: differs per rank and per version.
int64_t Seed(int rank, int64_t v) { return v * 1000 + rank; }
// What the application holds before it calls restart: no version's state.
int64_t Before(int rank) { return 999999 + rank; }

class RestoreReliabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = cairn_test::ThreeTierConfig(dir_.path());
    config_.ranks_per_node = kRanksPerNode;
  }

  // A job of kRanks that checkpoints `versions` and waits for the drains.
  void Checkpoint(std::initializer_list<int64_t> versions) {
    RunJob(kRanks, env_, config_, [&](int r, Engine& e, std::vector<uint64_t>& s) {
      for (int64_t v : versions) {
        FillVersion(s, Seed(r, v));
        Status saved = e.Checkpoint(kName, v);
        ASSERT_TRUE(saved.ok()) << saved.ToString();
      }
      Status waited = e.Wait();
      ASSERT_TRUE(waited.ok()) << waited.ToString();
    });
  }

  std::unique_ptr<Tier> TierOfNode(TierKind kind, int node) {
    auto tier = OpenNodeTier(env_, config_, kind, node);
    EXPECT_TRUE(tier.ok() && *tier) << TierKindName(kind);
    return std::move(tier).value();
  }
  std::unique_ptr<Tier> TierOfRank(TierKind kind, int rank) {
    return TierOfNode(kind, rank / kRanksPerNode);
  }

  // Removes every copy of version v from the tiers in `kinds`, on every node.
  void DropCopies(int64_t v, std::initializer_list<TierKind> kinds) {
    for (TierKind kind : kinds) {
      for (int node = 0; node < kRanks / kRanksPerNode; ++node) {
        auto tier = TierOfNode(kind, node);
        ASSERT_TRUE(env_->DeleteRecursive(tier->VersionDir(kName, v)).ok());
      }
    }
  }

  std::string PartPath(TierKind kind, int rank, int64_t v) {
    return TierOfRank(kind, rank)->FilePath(kName, v, PartFileName(rank));
  }

  // Flips one bit in the last block of rank's part of version v on `kind`.
  void DamageLastBlock(TierKind kind, int rank, int64_t v) {
    std::string path = PartPath(kind, rank, v);
    auto bytes = env_->ReadFileToString(path);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    (*bytes)[bytes->size() - 3] ^= 0x10;
    ASSERT_TRUE(env_->WriteFileAtomic(path, bytes->data(), bytes->size(), false).ok());
  }

  // Rewrites rank's manifest of version v on `kind` after `edit`, with a
  // valid CRC: a forged manifest that only its content betrays.
  void ForgeManifest(TierKind kind, int rank, int64_t v,
                     const std::function<void(Manifest&)>& edit) {
    auto tier = TierOfRank(kind, rank);
    auto m = ReadManifest(*tier, kName, v, rank);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    edit(*m);
    ASSERT_TRUE(tier->PutFile(kName, v, ManifestFileName(rank), m->Encode()).ok());
  }

  // Patches the header of rank's part of version v on `kind` with `edit`
  // (raw bytes, length unchanged), then makes it pass every check but its
  // content: the header's own CRC and the manifest's block CRCs of it.
  void ForgePartHeader(TierKind kind, int rank, int64_t v,
                       const std::function<void(std::string&)>& edit) {
    auto tier = TierOfRank(kind, rank);
    auto m = ReadManifest(*tier, kName, v, rank);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    std::string path = PartPath(kind, rank, v);
    auto bytes = env_->ReadFileToString(path);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    const uint64_t header = m->files[0].extents[0].length;
    std::string head = bytes->substr(0, header);
    edit(head);
    uint32_t crc = Crc32c(head.data(), header - 4);
    std::memcpy(head.data() + header - 4, &crc, 4);
    bytes->replace(0, header, head);
    ASSERT_TRUE(env_->WriteFileAtomic(path, bytes->data(), bytes->size(), false).ok());
    ExtentChecksummer sum(0);
    sum.Update(head.data(), head.size());
    m->files[0].extents[0] = sum.Finish();
    ASSERT_TRUE(tier->PutFile(kName, v, ManifestFileName(rank), m->Encode()).ok());
  }

  // A job of kRanks that fills its state with Before(rank), restarts and
  // checks the outcome on every rank: `expect_version` restored (its state
  // bit-exact, from `expect_tier` unless empty), or, with -1, a failed
  // restart that left every rank's memory as it was.
  void RestartAndCheck(int64_t requested, int64_t expect_version, const std::string& expect_tier) {
    RunJob(kRanks, env_, config_, [&](int r, Engine& e, std::vector<uint64_t>& s) {
      FillVersion(s, Before(r));
      auto report = e.Restart(kName, requested);
      if (expect_version < 0) {
        EXPECT_FALSE(report.ok()) << "rank " << r << " restored version " << report->version;
        if (!report.ok()) {
          EXPECT_EQ(report.status().code(), Code::kCorrupt) << report.status().ToString();
        }
        EXPECT_TRUE(HoldsVersion(s, Before(r)))
            << "rank " << r << ": a failed restart changed the protected memory";
        return;
      }
      ASSERT_TRUE(report.ok()) << "rank " << r << ": " << report.status().ToString();
      EXPECT_EQ(report->version, expect_version) << "rank " << r;
      if (!expect_tier.empty()) {
        EXPECT_EQ(report->tier, expect_tier) << "rank " << r;
      }
      EXPECT_TRUE(HoldsVersion(s, Seed(r, expect_version))) << "rank " << r;
    });
  }

  cairn_test::TempDir dir_;
  Config config_;
  Env* env_ = PosixEnv();
};

// Item 9: the only copy (memory tier) of the only version is damaged in the
// last block of the last rank's part. The other ranks' copies are intact,
// and that rank's damage is found only after most of its part was read:
// every rank's memory must still be untouched.
TEST_F(RestoreReliabilityTest, DamageOnOneRankLeavesEveryRanksMemoryUntouched) {
  Checkpoint({1});
  DropCopies(1, {TierKind::kSsd, TierKind::kPfs});
  DamageLastBlock(TierKind::kMemory, kRanks - 1, 1);
  RestartAndCheck(1, -1, "");
}

// Item 9, the damage on the first rank: its own earlier blocks are intact.
TEST_F(RestoreReliabilityTest, DamageInALaterBlockLeavesThatRanksMemoryUntouched) {
  Checkpoint({1});
  DropCopies(1, {TierKind::kSsd, TierKind::kPfs});
  DamageLastBlock(TierKind::kMemory, 0, 1);
  RestartAndCheck(1, -1, "");
}

// Item 9 from a device: the only copy is on the ssd tier.
TEST_F(RestoreReliabilityTest, DamagedSsdCopyLeavesMemoryUntouched) {
  Checkpoint({1});
  DropCopies(1, {TierKind::kMemory, TierKind::kPfs});
  DamageLastBlock(TierKind::kSsd, kRanks - 1, 1);
  RestartAndCheck(1, -1, "");
}

// Item 9 with an older version: the damaged newest one is given up on every
// rank and the older one restored on every rank, bit-exact.
TEST_F(RestoreReliabilityTest, DamageOnOneRankFallsBackToTheOlderVersionEverywhere) {
  Checkpoint({1, 2});
  DropCopies(2, {TierKind::kSsd, TierKind::kPfs});
  DamageLastBlock(TierKind::kMemory, kRanks - 1, 2);
  RestartAndCheck(2, 1, "");
}

// Item 12: with ECC on, a manifest with a valid CRC claims a part of 2^62
// bytes. The copy looks truncated, hence repairable from its sidecar; the
// repair must refuse the size (kCorrupt) instead of allocating it, and the
// restart falls back to the older version.
TEST_F(RestoreReliabilityTest, HugePartSizeInAManifestIsCorruptWithEcc) {
  for (EccMode mode : {EccMode::kNormal, EccMode::kStrong}) {
    SCOPED_TRACE(mode == EccMode::kNormal ? "ecc = normal" : "ecc = strong");
    config_.tier(TierKind::kMemory).ecc = mode;
    Checkpoint({1, 2});
    DropCopies(2, {TierKind::kSsd, TierKind::kPfs});
    ForgeManifest(TierKind::kMemory, 1, 2, [](Manifest& m) { m.files[0].size = 1ULL << 62; });
    RestartAndCheck(2, 1, "");
    ASSERT_TRUE(env_->DeleteRecursive(dir_.path() + "/ssd").ok());
    ASSERT_TRUE(env_->DeleteRecursive(dir_.path() + "/pfs").ok());
    ASSERT_TRUE(env_->DeleteRecursive(dir_.path() + "/shm").ok());
  }
}

// Item 12, the same forgery with an intact ssd copy: that copy is restored.
TEST_F(RestoreReliabilityTest, HugePartSizeFallsBackToTheSsdCopy) {
  config_.tier(TierKind::kMemory).ecc = EccMode::kStrong;
  Checkpoint({1});
  ForgeManifest(TierKind::kMemory, 1, 1, [](Manifest& m) { m.files[0].size = 1ULL << 62; });
  RestartAndCheck(1, 1, "");
}

// Byte offsets in a part header (docs/format.md "Part file").
constexpr size_t kRegionCountOffset = 8 + 4 + 4 + 8 + 4 + 4;  // after magic .. nranks
constexpr size_t kNameLengthOffset = kRegionCountOffset + 4;

// Item 12: a part header with valid CRCs (its own and the manifest's) that
// announces 2^32 - 1 regions, or a name of 65535 bytes: a corrupt copy,
// passed over for the older version.
TEST_F(RestoreReliabilityTest, HugeCountsInAPartHeaderAreCorrupt) {
  Checkpoint({1, 2});
  DropCopies(2, {TierKind::kSsd, TierKind::kPfs});
  ForgePartHeader(TierKind::kMemory, 1, 2, [](std::string& head) {
    const uint32_t regions = 0xFFFFFFFFu;
    std::memcpy(head.data() + kRegionCountOffset, &regions, 4);
  });
  ForgePartHeader(TierKind::kMemory, 2, 2, [](std::string& head) {
    const uint16_t name_length = 0xFFFF;
    std::memcpy(head.data() + kNameLengthOffset, &name_length, 2);
  });
  RestartAndCheck(2, 1, "");
}

// Item 8: the memory copy's manifest, with a valid CRC, says another job
// size wrote it. It is passed over like a corrupt copy: the intact ssd copy
// of the same version is restored, bit-exact.
TEST_F(RestoreReliabilityTest, CopyOfAnotherJobSizeFallsBackToTheSsdCopy) {
  Checkpoint({1});
  ForgeManifest(TierKind::kMemory, 1, 1, [](Manifest& m) { m.nranks = kRanks + 2; });
  // Only rank 1's copy was forged: the others restore from memory.
  RunJob(kRanks, env_, config_, [&](int r, Engine& e, std::vector<uint64_t>& s) {
    FillVersion(s, Before(r));
    auto report = e.Restart(kName, 1);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->tier, r == 1 ? "ssd" : "memory") << "rank " << r;
    EXPECT_TRUE(HoldsVersion(s, Seed(r, 1))) << "rank " << r;
  });
}

// Item 8: the memory copy's part header (valid CRCs) holds another region
// than the protected one: passed over, the ssd copy restored.
TEST_F(RestoreReliabilityTest, CopyWithOtherRegionsFallsBackToTheSsdCopy) {
  Checkpoint({1});
  ForgePartHeader(TierKind::kMemory, 1, 1, [](std::string& head) {
    // The first region's id, after the fixed fields, the name field.
    const size_t first_region = kNameLengthOffset + 2 + kMaxNameLength;
    const int32_t other_id = 5;
    std::memcpy(head.data() + first_region, &other_id, 4);
  });
  RunJob(kRanks, env_, config_, [&](int r, Engine& e, std::vector<uint64_t>& s) {
    FillVersion(s, Before(r));
    auto report = e.Restart(kName, 1);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->version, 1);
    EXPECT_EQ(report->tier, r == 1 ? "ssd" : "memory") << "rank " << r;
    EXPECT_TRUE(HoldsVersion(s, Seed(r, 1))) << "rank " << r;
  });
}

}  // namespace
}  // namespace cairn
