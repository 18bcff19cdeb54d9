// The engine with [dedup] on: checkpoints in every mode restore bit-exact on
// 1-8 ranks (ranks as threads, virtual nodes), references resolve across
// ranks, nodes and versions, a lost node falls back to the pfs copy, a
// forced collision is caught by verify, retention keeps referenced
// versions, and a version whose reference cannot be resolved is passed
// over for an older one, by restart and by restart_test.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"
#include "env/env.h"
#include "format/layout.h"
#include "format/manifest.h"
#include "format/page_table.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kPages = 24;
constexpr size_t kStateBytes = kPages * kPage + 100;  // and a short last page

// The "stencil" pattern: the first 2/3 of the pages are the same on every
// rank (a field that is mostly uniform), the rest differ per rank; a few
// pages repeat within a rank; each version changes one page.
void Fill(std::vector<uint8_t>& state, int rank, int64_t version) {
  for (size_t p = 0; p < kPages; ++p) {
    uint8_t tag = p < 2 * kPages / 3 ? static_cast<uint8_t>(p % 10)
                                     : static_cast<uint8_t>(100 + rank * 8 + p % 5);
    std::memset(state.data() + p * kPage, tag, kPage);
  }
  std::memset(state.data() + kPages * kPage, 0xA0 + rank, 100);
  if (version > 0) {
    size_t changed = static_cast<size_t>(version) % kPages;
    std::memset(state.data() + changed * kPage, static_cast<int>(200 + version), kPage);
    std::memcpy(state.data() + changed * kPage, &version, sizeof version);
  }
}

class EngineDedupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    config_.dir = "/data";
    config_.log_level = "off";
    config_.tier(TierKind::kMemory).path = "/shm/{node}";
    config_.tier(TierKind::kMemory).keep_at_finalize = true;
    config_.tier(TierKind::kSsd).enabled = false;
    config_.tier(TierKind::kPfs).path = "{dir}/pfs";
    config_.keep = 2;
    config_.dedup.mode = DedupMode::kCollective;
  }

  using Body = std::function<void(int rank, Engine& engine, std::vector<uint8_t>& state)>;

  // One job of `ranks` ranks, `per_node` to a virtual node, each
  // protecting state_bytes_.
  void RunJob(int ranks, int per_node, const Body& body) {
    std::vector<int> nodes;
    for (int r = 0; r < ranks; ++r) nodes.push_back(r / per_node);
    ThreadGroup group(nodes);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        auto engine = Engine::Create(std::make_unique<ThreadComm>(&group, r), config_, env_.get(),
                                     Clock::Real());
        ASSERT_TRUE(engine.ok()) << engine.status().ToString();
        std::vector<uint8_t> state(state_bytes_);
        ASSERT_TRUE((*engine)->Protect(0, state.data(), state.size(), 1).ok());
        body(r, **engine, state);
        Status done = (*engine)->Finalize();
        EXPECT_TRUE(done.ok()) << done.ToString();
      });
    }
    for (auto& t : threads) t.join();
  }

  // Checkpoints versions 0..last (each after fill_), waits for the drains.
  void CheckpointJob(int ranks, int per_node, int64_t last,
                     std::vector<PageCounts>* counts = nullptr) {
    if (counts) counts->assign(static_cast<size_t>(ranks), {});
    RunJob(ranks, per_node, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
      for (int64_t v = 0; v <= last; ++v) {
        fill_(state, rank, v);
        Status s = e.Checkpoint("dd", v);
        ASSERT_TRUE(s.ok()) << "rank " << rank << " version " << v << ": " << s.ToString();
        if (counts) (*counts)[static_cast<size_t>(rank)] = e.last_checkpoint().pages;
      }
      ASSERT_TRUE(e.Wait().ok());
    });
  }

  // Restarts and checks every rank's bytes against fill_(expected).
  void ExpectRestart(int ranks, int per_node, int64_t expected) {
    RunJob(ranks, per_node, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
      auto report = e.Restart("dd", 1000);  // the newest recoverable
      ASSERT_TRUE(report.ok()) << "rank " << rank << ": " << report.status().ToString();
      EXPECT_EQ(report->version, expected);
      std::vector<uint8_t> want(state.size());
      fill_(want, rank, expected);
      EXPECT_TRUE(state == want) << "rank " << rank << " restored other bytes";
    });
  }

  void DeleteNodeLocal(int node) {
    ASSERT_TRUE(env_->DeleteRecursive("/shm/" + std::to_string(node)).ok());
  }

  std::unique_ptr<Env> env_;
  Config config_;
  // What each rank protects, and its bytes at each version.
  size_t state_bytes_ = kStateBytes;
  std::function<void(std::vector<uint8_t>&, int rank, int64_t version)> fill_ = Fill;
};

// More pages than one rank's page index holds: refused when protected,
// naming the key to change, and the regions already protected stay.
TEST_F(EngineDedupTest, RegionsOfTooManyPagesAreRefusedWhenProtected) {
  config_.dedup.page_size = 512;
  RunJob(1, 1, [&](int, Engine& e, std::vector<uint8_t>& state) {
    uint8_t byte = 0;
    // As many pages as the index holds, and region 0's besides; never
    // touched: refused before anything reads it.
    Status s = e.Protect(1, &byte, DigestIndex::kMaxPages, 512);
    ASSERT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("dedup.page_size"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("region 1"), std::string::npos) << s.ToString();
    fill_(state, 0, 0);
    ASSERT_TRUE(e.Checkpoint("dd", 0).ok());
  });
  ExpectRestart(1, 1, 0);
}

TEST_F(EngineDedupTest, EveryModeRestoresBitExactOnOneToEightRanks) {
  for (DedupMode mode : {DedupMode::kOff, DedupMode::kLocal, DedupMode::kCollective,
                         DedupMode::kIncremental, DedupMode::kCollectiveIncremental}) {
    for (int ranks : {1, 2, 4, 8}) {
      SCOPED_TRACE(std::string(DedupModeName(mode)) + ", " + std::to_string(ranks) + " ranks");
      SetUp();
      config_.dedup.mode = mode;
      CheckpointJob(ranks, 2, 3);
      ExpectRestart(ranks, 2, 3);
    }
  }
}

TEST_F(EngineDedupTest, SharedPagesAreStoredOnceAcrossRanksAndNodes) {
  std::vector<PageCounts> counts;
  CheckpointJob(4, 1, 0, &counts);  // every rank on a node of its own
  uint64_t stored_shared = 0;
  for (const PageCounts& c : counts) {
    EXPECT_GT(c.remote_ref, 0u);
    stored_shared += c.unique;
  }
  // 16 shared pages, 10 distinct, stored once in the job; each rank's own
  // 8 pages (5 distinct) and its tail page.
  EXPECT_EQ(stored_shared, 10u + 4 * (5 + 1));
  ExpectRestart(4, 1, 0);
}

TEST_F(EngineDedupTest, UnchangedPagesReferToThePreviousVersion) {
  config_.dedup.mode = DedupMode::kCollectiveIncremental;
  std::vector<PageCounts> counts;
  CheckpointJob(2, 1, 2, &counts);
  for (const PageCounts& c : counts) EXPECT_GT(c.unchanged, 10u);
  ExpectRestart(2, 1, 2);
}

TEST_F(EngineDedupTest, ALostNodeFallsBackToThePfsCopyAndStillResolves) {
  CheckpointJob(4, 2, 1);
  DeleteNodeLocal(1);  // ranks 2 and 3 lose their memory-tier copies
  ExpectRestart(4, 2, 1);
}

TEST_F(EngineDedupTest, VerifyCatchesAForcedCollision) {
  config_.dedup.mode = DedupMode::kLocal;
  config_.dedup.hash = DedupHash::kTestCollide;  // 8 bits: distinct pages collide
  config_.dedup.verify = true;
  CheckpointJob(2, 1, 1);
  ExpectRestart(2, 1, 1);
}

TEST_F(EngineDedupTest, RetentionKeepsReferencedVersions) {
  config_.dedup.mode = DedupMode::kIncremental;
  config_.dedup.full_every = 4;
  config_.keep = 1;
  CheckpointJob(2, 1, 3);
  // keep = 1, but version 3 refers to 0 (the full one) and to 2 (page 1,
  // restored to its first value in 2, is unchanged in 3): only 1 goes.
  auto tier = OpenNodeTier(env_.get(), config_, TierKind::kMemory, 0);
  ASSERT_TRUE(tier.ok());
  auto held = (*tier)->Versions("dd");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(*held, (std::vector<int64_t>{0, 2, 3}));
  auto m = ReadManifest(**tier, "dd", 3, 0);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->references, (std::vector<int64_t>{0, 2}));
  ExpectRestart(2, 1, 3);
}

// Deleting one version: refused while a kept version's pages refer to it
// (the message names that version), allowed for the referring one; the
// next version is then planned afresh, never against a deleted one.
TEST_F(EngineDedupTest, DeletingAVersionKeepsEveryKeptVersionResolvable) {
  config_.dedup.mode = DedupMode::kCollectiveIncremental;
  config_.keep = 10;
  RunJob(2, 1, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
    for (int64_t v = 0; v <= 2; ++v) {
      fill_(state, rank, v);
      ASSERT_TRUE(e.Checkpoint("dd", v).ok());
    }
    Status refused = e.DeleteVersion("dd", 0);  // 1 and 2 refer to the full 0
    EXPECT_EQ(refused.code(), Code::kInvalidArgument);
    EXPECT_NE(refused.ToString().find("refers to its pages"), std::string::npos) << refused.ToString();
    ASSERT_TRUE(e.DeleteVersion("dd", 2).ok());
    // Planned against 2 (deleted), version 3 would refer to its pages.
    fill_(state, rank, 3);
    ASSERT_TRUE(e.Checkpoint("dd", 3).ok());
    ASSERT_TRUE(e.Wait().ok());
  });
  auto tier = OpenNodeTier(env_.get(), config_, TierKind::kMemory, 0);
  ASSERT_TRUE(tier.ok());
  auto held = (*tier)->Versions("dd");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(*held, (std::vector<int64_t>{0, 1, 3}));
  auto m = ReadManifest(**tier, "dd", 3, 0);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->references.empty()) << m->references.size();
  ExpectRestart(2, 1, 3);
}

TEST_F(EngineDedupTest, AnUnresolvableReferenceFallsBackToAnOlderVersion) {
  config_.dedup.mode = DedupMode::kCollectiveIncremental;
  config_.dedup.full_every = 2;  // 0 full, 1 -> 0, 2 full, 3 -> 2
  config_.keep = 4;
  CheckpointJob(2, 1, 3);
  // Rank 1's copies of version 2, which version 3 refers to, are lost on
  // every tier: versions 3 and 2 are unrecoverable, 1 is restored.
  for (const std::string& dir : {std::string("/shm/1"), std::string("/data/pfs")}) {
    auto tier_kind = dir == "/shm/1" ? TierKind::kMemory : TierKind::kPfs;
    auto t = OpenNodeTier(env_.get(), config_, tier_kind, 1);
    ASSERT_TRUE(t.ok());
    (void)(*t)->Remove("dd", 2, PartFileName(1));
  }
  ExpectRestart(2, 1, 1);
}

TEST_F(EngineDedupTest, ADamagedStoredPageFallsBackToTheNextTiersCopy) {
  CheckpointJob(2, 1, 1);
  // One bit of a stored page of rank 0's memory copy of version 1: its
  // block CRC catches it, and the pfs copy serves (bit-exact, version 1).
  auto t = OpenNodeTier(env_.get(), config_, TierKind::kMemory, 0);
  ASSERT_TRUE(t.ok());
  auto bytes = (*t)->GetFile("dd", 1, PartFileName(0));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  (*bytes)[kPagesDataAlign + 5] ^= 0x10;  // the first stored page, after the preamble
  ASSERT_TRUE((*t)->PutFile("dd", 1, PartFileName(0), *bytes).ok());
  ExpectRestart(2, 1, 1);
}

// With the memory tier's ECC on, a damaged paged copy is rebuilt from its
// sidecar: there is no other tier to fall back to here, yet the newest
// version restores bit-exact, through a reference into a damaged older
// copy too. Damage is a flipped stored byte, or a pages file cut short
// (its header and trailer, which say where the pages are, lost with it).
TEST_F(EngineDedupTest, AnEccSidecarRepairsADamagedPagedCopy) {
  config_.dedup.mode = DedupMode::kCollectiveIncremental;
  config_.tier(TierKind::kMemory).ecc = EccMode::kNormal;
  config_.tier(TierKind::kPfs).enabled = false;
  config_.keep = 4;
  for (bool truncate : {false, true}) {
    SCOPED_TRACE(truncate ? "truncated" : "a flipped byte");
    env_ = NewMemEnv();
    // Each version's sidecar is encoded in the background after its
    // commit, and a queued encode of an older version is dropped for a
    // newer one: each is waited for.
    RunJob(2, 1, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
      for (int64_t v = 0; v <= 1; ++v) {
        fill_(state, rank, v);
        ASSERT_TRUE(e.Checkpoint("dd", v).ok());
        ASSERT_TRUE(e.Wait().ok());
      }
    });
    // Version 1's unchanged pages refer to version 0. Damage rank 0's copy
    // of version 0 and rank 1's of version 1.
    for (auto [rank, version] : {std::pair{0, int64_t{0}}, std::pair{1, int64_t{1}}}) {
      auto t = OpenNodeTier(env_.get(), config_, TierKind::kMemory, rank);
      ASSERT_TRUE(t.ok());
      auto m = ReadManifest(**t, "dd", version, rank);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ASSERT_EQ(m->files.size(), 2u);
      EXPECT_EQ(m->files[1].kind, FileKind::kParity) << "version " << version;
      auto bytes = (*t)->GetFile("dd", version, PartFileName(rank));
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      if (truncate) {
        bytes->resize(bytes->size() - 200);
      } else {
        (*bytes)[kPagesDataAlign + 5] ^= 0x10;  // the first stored page
      }
      ASSERT_TRUE((*t)->PutFile("dd", version, PartFileName(rank), *bytes).ok());
    }
    RunJob(2, 1, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
      auto report = e.Restart("dd", 1000);
      ASSERT_TRUE(report.ok()) << "rank " << rank << ": " << report.status().ToString();
      EXPECT_EQ(report->version, 1);
      std::vector<uint8_t> want(state.size());
      fill_(want, rank, 1);
      EXPECT_TRUE(state == want) << "rank " << rank << " restored other bytes";
      EXPECT_GE(e.ecc_shards_corrected(), 1u) << "rank " << rank;
    });
  }
}

TEST_F(EngineDedupTest, RestartTestPassesOverAVersionWhoseReferenceIsGone) {
  config_.dedup.mode = DedupMode::kIncremental;
  config_.dedup.full_every = 2;  // 0 full, 1 -> 0, 2 full, 3 -> 2
  config_.keep = 4;
  CheckpointJob(2, 1, 3);
  // Rank 1's whole copy of version 2 (manifest and part) is gone on every
  // tier; version 3 still has all of its own copies, but its unchanged
  // pages refer to version 2: it must not count as recoverable.
  for (TierKind kind : {TierKind::kMemory, TierKind::kPfs}) {
    auto t = OpenNodeTier(env_.get(), config_, kind, 1);
    ASSERT_TRUE(t.ok());
    for (const std::string& file : {ManifestFileName(1), PartFileName(1)}) {
      (void)(*t)->Remove("dd", 2, file);  // a drain may have been superseded
      ASSERT_FALSE(env_->FileExists((*t)->FilePath("dd", 2, file))) << file;
    }
  }
  RunJob(2, 1, [&](int rank, Engine& e, std::vector<uint8_t>&) {
    auto newest = e.RestartTest("dd", -1);
    ASSERT_TRUE(newest.ok()) << "rank " << rank << ": " << newest.status().ToString();
    EXPECT_EQ(*newest, 1) << "rank " << rank;
  });
  ExpectRestart(2, 1, 1);
}

// Pages files of a different size at every version, on the memory tier
// alone: each goes into a reserved slot cut (or regrown) to its size
// (storage/slot_cache.h), and the newest version restores bit-exact.
TEST_F(EngineDedupTest, PagesFilesOfChangingSizesRestoreBitExact) {
  config_.dedup.mode = DedupMode::kLocal;
  config_.tier(TierKind::kPfs).enabled = false;
  constexpr size_t kBigPages = 1024;  // 4 MiB: worth a slot
  state_bytes_ = kBigPages * kPage;
  // Version v repeats its first page over a share of the pages that grows
  // and shrinks with v, so that every pages file has its own size.
  fill_ = [](std::vector<uint8_t>& state, int rank, int64_t v) {
    const size_t repeated = kBigPages * static_cast<size_t>(5 + (v * 37) % 90) / 100;
    for (size_t p = 0; p < kBigPages; ++p) {
      const uint64_t words[2] = {p < repeated ? 0 : p + 1, static_cast<uint64_t>(v * 16 + rank)};
      std::memset(state.data() + p * kPage, static_cast<int>(v), kPage);
      std::memcpy(state.data() + p * kPage, words, sizeof words);
    }
  };
  constexpr int64_t kLast = 7;
  RunJob(2, 2, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
    std::set<uint64_t> sizes;
    for (int64_t v = 0; v <= kLast; ++v) {
      fill_(state, rank, v);
      ASSERT_TRUE(e.Checkpoint("dd", v).ok()) << "version " << v;
      ASSERT_TRUE(e.Wait().ok());
      sizes.insert(e.last_checkpoint().bytes);
    }
    EXPECT_GE(sizes.size(), 6u) << "rank " << rank << ": the versions' files should differ in size";
  });
  ExpectRestart(2, 2, kLast);
}

// Rewrites rank's copy of `version` on `tier` in pages format 1 (the
// header first, then the stored pages), with its manifest entry, as a
// Cairn from before format 2 wrote it.
void RewriteInFormatOne(Tier& tier, int64_t version, int rank) {
  auto manifest = ReadManifest(tier, "dd", version, rank);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  FileEntry& part = manifest->files.front();
  auto bytes = tier.GetFile("dd", version, part.name);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  uint64_t at = 0;
  std::memcpy(&at, bytes->data() + bytes->size() - kPagesTrailerBytes, 8);
  auto header = DecodePagesHeader(bytes->substr(at), part.name);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  const std::string pages = bytes->substr(kPagesDataAlign, at - kPagesDataAlign);
  header->format = kPagesFormatV1;
  std::string head = header->Encode();
  std::string v1 = head + std::string(header->DataOffset() - head.size(), '\0') + pages;
  ExtentChecksummer head_sum(0), data_sum(header->DataOffset());
  head_sum.Update(head.data(), head.size());
  data_sum.Update(pages.data(), pages.size());
  part.size = v1.size();
  part.extents = {head_sum.Finish(), data_sum.Finish()};
  ASSERT_TRUE(tier.PutFile("dd", version, part.name, v1).ok());
  ASSERT_TRUE(tier.PutFile("dd", version, ManifestFileName(rank), manifest->Encode()).ok());
}

TEST_F(EngineDedupTest, CopiesInPagesFormatOneStillRestore) {
  config_.dedup.mode = DedupMode::kCollectiveIncremental;
  CheckpointJob(2, 1, 2);
  // Every copy, memory (a node per rank) and pfs (shared), of every version.
  for (int node = 0; node < 2; ++node) {
    for (TierKind kind : {TierKind::kMemory, TierKind::kPfs}) {
      auto t = OpenNodeTier(env_.get(), config_, kind, node);
      ASSERT_TRUE(t.ok());
      auto versions = (*t)->Versions("dd");
      ASSERT_TRUE(versions.ok());
      for (int64_t v : *versions) {
        if (env_->FileExists((*t)->FilePath("dd", v, ManifestFileName(node)))) {
          RewriteInFormatOne(**t, v, node);
        }
      }
    }
  }
  ExpectRestart(2, 1, 2);
}

// Ranks without a page in common: after the first collective step finds
// none, versions skip it (and write their pages as they hash them) until
// every probe_every-th; each restores bit-exact, and so does a version
// after the pages became shared.
TEST_F(EngineDedupTest, SkippedCollectiveStepsRestoreBitExact) {
  auto fill = [](std::vector<uint8_t>& state, int rank, int64_t v) {
    for (size_t p = 0; p < kPages; ++p) {
      // Unique to the rank until version 5; then the same on every rank.
      // The last whole page repeats the first: local dedup saves enough
      // that no version is written whole.
      const int page = static_cast<int>(p % (kPages - 1));
      int tag = v < 5 ? rank * 64 + page : 200 + page;
      std::memset(state.data() + p * kPage, tag, kPage);
      std::memcpy(state.data() + p * kPage, &v, sizeof v);
    }
  };
  for (int64_t last : {int64_t{4}, int64_t{6}}) {
    SCOPED_TRACE("newest version " + std::to_string(last));
    SetUp();
    config_.dedup.probe_every = 3;
    config_.keep = 8;
    fill_ = fill;
    CheckpointJob(4, 2, last);
    ExpectRestart(4, 2, last);
  }
}

// Pages nothing deduplicates (each rank's own, all new in every version):
// once a planned version finds so, the versions up to the next probe are
// written whole, as plain parts with nothing hashed. They restore
// bit-exact, from memory and, after a node is lost, from the pfs; and the
// versions checkpointed after restoring one restore bit-exact too.
TEST_F(EngineDedupTest, VersionsWrittenWholeRestoreBitExact) {
  config_.dedup.mode = DedupMode::kCollectiveIncremental;
  config_.dedup.probe_every = 4;
  fill_ = [](std::vector<uint8_t>& state, int rank, int64_t v) {
    for (size_t at = 0; at < state.size(); at += kPage) {
      const size_t n = std::min(kPage, state.size() - at);
      std::memset(state.data() + at, static_cast<int>(rank * 16 + v), n);
      const uint64_t words[2] = {at, static_cast<uint64_t>(v)};
      std::memcpy(state.data() + at, words, std::min(n, sizeof words));
    }
  };
  constexpr int64_t kLast = 7;
  RunJob(2, 1, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
    std::vector<bool> whole;
    for (int64_t v = 0; v <= kLast; ++v) {
      fill_(state, rank, v);
      ASSERT_TRUE(e.Checkpoint("dd", v).ok()) << "version " << v;
      const CheckpointReport& r = e.last_checkpoint();
      whole.push_back(r.dedup_whole);
      if (r.dedup_whole) {
        EXPECT_EQ(r.pages.hashed, 0u);
        EXPECT_EQ(r.pages.unique, kPages + 1);
      }
    }
    // 0 is full (nothing to compare with); 1 finds nothing unchanged or
    // repeated: 2 and 3 whole; 4 takes the collective step and is full, 5
    // finds nothing again: 6 and 7 whole.
    EXPECT_EQ(whole, (std::vector<bool>{false, false, true, true, false, false, true, true}))
        << "rank " << rank;
    ASSERT_TRUE(e.Wait().ok());
  });
  ExpectRestart(2, 1, kLast);
  // Restored from a whole version, the job goes on: the next version is
  // planned afresh (full), the one after it refers to it.
  RunJob(2, 1, [&](int rank, Engine& e, std::vector<uint8_t>& state) {
    auto restored = e.Restart("dd", 6);
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    ASSERT_EQ(restored->version, 6);
    for (int64_t v = 7; v <= 8; ++v) {
      // Version 8 repeats 7 but for its first page: mostly unchanged.
      fill_(state, rank, 7);
      if (v == 8) std::memset(state.data(), 0x5A, kPage);
      ASSERT_TRUE(e.Checkpoint("dd", v).ok()) << "version " << v;
      EXPECT_FALSE(e.last_checkpoint().dedup_whole) << "version " << v;
    }
    EXPECT_GE(e.last_checkpoint().pages.unchanged, kPages - 1);
    ASSERT_TRUE(e.Wait().ok());
  });
  auto fill_whole = fill_;
  fill_ = [fill_whole](std::vector<uint8_t>& state, int rank, int64_t v) {
    fill_whole(state, rank, v == 8 ? 7 : v);
    if (v == 8) std::memset(state.data(), 0x5A, kPage);
  };
  ExpectRestart(2, 1, 8);
  DeleteNodeLocal(1);  // rank 1's memory copies: its pfs ones serve
  ExpectRestart(2, 1, 8);
}

}  // namespace
}  // namespace cairn
