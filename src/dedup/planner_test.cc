#include "dedup/planner.h"

#include <cstring>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"

namespace cairn {
namespace {

constexpr uint32_t kPage = 4096;

// A buffer of `pages` pages whose page i is filled with byte tags[i].
std::vector<uint8_t> Pages(const std::vector<uint8_t>& tags, uint32_t tail = 0) {
  std::vector<uint8_t> buf(tags.size() * kPage + tail, 0xEE);
  for (size_t i = 0; i < tags.size(); ++i) std::memset(buf.data() + i * kPage, tags[i], kPage);
  return buf;
}

PageView ViewOf(const std::vector<uint8_t>& buf) {
  return PageView({{0, buf.data(), buf.size()}}, kPage);
}

std::vector<PageKind> Kinds(const DedupPlan& plan) {
  std::vector<PageKind> k;
  for (const auto& r : plan.records) k.push_back(r.kind);
  return k;
}

DedupPlan PlanAlone(DedupPlanner& planner, const std::vector<uint8_t>& buf, int64_t version,
                    const std::vector<bool>* changed = nullptr) {
  auto comm = NewSingleComm();
  PageView view = ViewOf(buf);
  auto plan = planner.Plan(*comm, view, version, changed);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : DedupPlan{};
}

TEST(PageViewTest, RegionsArePagedFromTheirFirstByteWithAShortLastPage) {
  std::vector<uint8_t> a(2 * kPage + 100);
  std::vector<uint8_t> b(kPage);
  PageView view({{1, a.data() + 0, a.size()}, {2, b.data(), b.size()}}, kPage);
  ASSERT_EQ(view.size(), 4u);
  EXPECT_EQ(view.page(2).length, 100u);
  EXPECT_FALSE(view.whole(2));
  EXPECT_EQ(view.page(3).data, b.data());
  EXPECT_EQ(view.total_bytes(), a.size() + b.size());
}

TEST(PageViewTest, AViewAssignedOtherRegionsHasOnlyTheirPages) {
  std::vector<uint8_t> a(5 * kPage + 7);
  std::vector<uint8_t> b(kPage + 1);
  PageView view({{1, a.data(), a.size()}}, kPage);
  view.Assign({{2, b.data(), b.size()}}, 512);
  ASSERT_EQ(view.size(), 9u);
  EXPECT_EQ(view.page_size(), 512u);
  EXPECT_EQ(view.page(0).data, b.data());
  EXPECT_EQ(view.page(8).length, 1u);
  EXPECT_EQ(view.total_bytes(), b.size());
}

TEST(PlannerTest, LocalDedupFollowsAlgorithmOne) {
  DedupPlanner planner({});
  auto buf = Pages({1, 2, 1, 1}, 10);  // plus a 10-byte tail page
  DedupPlan plan = PlanAlone(planner, buf, 0);
  EXPECT_EQ(Kinds(plan), (std::vector<PageKind>{PageKind::kData, PageKind::kData, PageKind::kLocalDup,
                                                PageKind::kLocalDup, PageKind::kData}));
  EXPECT_EQ(plan.counts.unique, 3u);
  EXPECT_EQ(plan.counts.local_dup, 2u);
  EXPECT_EQ(plan.counts.data_bytes, 2u * kPage + 10);
  EXPECT_TRUE(plan.full);
}

TEST(PlannerTest, VerifyCatchesAForcedCollision) {
  // Find two page tags whose test-collide digests are equal.
  PageHasher weak(PageHashKind::kTestCollide);
  std::map<PageDigest, uint8_t> first;
  uint8_t a = 0;
  uint8_t b = 0;
  for (int t = 0; t < 256 && a == b; ++t) {
    auto page = Pages({static_cast<uint8_t>(t)});
    auto [it, fresh] = first.emplace(weak.Hash(page.data(), kPage), static_cast<uint8_t>(t));
    if (!fresh) a = it->second, b = static_cast<uint8_t>(t);
  }
  ASSERT_NE(a, b) << "no collision among 256 pages of an 8-bit hash";
  auto buf = Pages({a, b, a});

  DedupPlanner unverified({.hash = PageHashKind::kTestCollide, .verify = false});
  EXPECT_EQ(Kinds(PlanAlone(unverified, buf, 0))[1], PageKind::kLocalDup)
      << "without verify the colliding page is (wrongly) a duplicate";

  DedupPlanner verified({.hash = PageHashKind::kTestCollide, .verify = true});
  DedupPlan plan = PlanAlone(verified, buf, 0);
  EXPECT_EQ(Kinds(plan), (std::vector<PageKind>{PageKind::kData, PageKind::kData, PageKind::kLocalDup}));
  EXPECT_FALSE(plan.records[1].shareable);
  EXPECT_EQ(plan.collisions, 1u);
}

// Runs one planning round on `nranks` thread ranks; rank r's pages are
// tags_of(r). Returns each rank's plan.
std::vector<DedupPlan> PlanOnRanks(int nranks, const DedupOptions& options,
                                   const std::function<std::vector<uint8_t>(int)>& tags_of) {
  std::vector<DedupPlan> plans(static_cast<size_t>(nranks));
  Status started = RunRanks(PosixEnv(), std::vector<int>(static_cast<size_t>(nranks), 0), [&](Comm& comm) {
    DedupPlanner planner(options);
    auto buf = Pages(tags_of(comm.rank()));
    auto plan = planner.Plan(comm, ViewOf(buf), 0);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    plans[static_cast<size_t>(comm.rank())] = std::move(plan).value();
  });
  EXPECT_TRUE(started.ok()) << started.ToString();
  return plans;
}

TEST(PlannerTest, IdenticalRanksStoreEachPageOnceAndShareTheLoad) {
  for (int nranks : {2, 3, 4, 8}) {
    SCOPED_TRACE(std::to_string(nranks) + " ranks");
    std::vector<uint8_t> tags(64);
    for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(i);
    auto plans = PlanOnRanks(nranks, {.collective = true}, [&](int) { return tags; });
    // Each page is stored by exactly one rank, and referenced to it by the others.
    std::map<PageDigest, int> stored_by;
    uint64_t most = 0;
    for (int r = 0; r < nranks; ++r) {
      const DedupPlan& p = plans[static_cast<size_t>(r)];
      most = std::max(most, p.counts.unique);
      EXPECT_EQ(p.counts.unique + p.counts.remote_ref, 64u);
      for (const PageRecord& rec : p.records) {
        if (rec.kind == PageKind::kData) {
          EXPECT_TRUE(stored_by.emplace(rec.digest, r).second);
        }
      }
    }
    ASSERT_EQ(stored_by.size(), 64u);
    for (const DedupPlan& p : plans) {
      for (const PageRecord& rec : p.records) {
        if (rec.kind == PageKind::kRemote) {
          EXPECT_EQ(stored_by.at(rec.digest), rec.rank);
        }
      }
    }
    // PageLoad balancing: no rank stores much more than its share.
    EXPECT_LE(most, (64 + nranks - 1) / nranks + 2u);
  }
}

TEST(PlannerTest, UniquePagesStayWithTheirRanks) {
  auto plans = PlanOnRanks(4, {.collective = true}, [](int r) {
    std::vector<uint8_t> tags(16);
    for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(r * 16 + i);
    return tags;
  });
  for (const DedupPlan& p : plans) {
    EXPECT_EQ(p.counts.unique, 16u);
    EXPECT_EQ(p.counts.remote_ref, 0u);
  }
}

TEST(PlannerTest, TheThresholdBoundsWhatTheCollectiveStepFinds) {
  // 32 shared pages but room for 8 in TopK: at most 8 pages become references.
  std::vector<uint8_t> tags(32);
  for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(i);
  auto plans = PlanOnRanks(2, {.collective = true, .threshold = 8}, [&](int) { return tags; });
  EXPECT_LE(plans[0].counts.remote_ref + plans[1].counts.remote_ref, 8u);
  EXPECT_GE(plans[0].counts.unique + plans[1].counts.unique, 56u);
}

TEST(PlannerTest, UnchangedPagesReferToThePreviousVersionUntilTheNextFullOne) {
  DedupPlanner planner({.incremental = true, .full_every = 3});
  std::vector<uint8_t> tags(20);
  for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(i + 1);
  auto buf = Pages(tags);
  PageView view = ViewOf(buf);
  DedupPlan v0 = PlanAlone(planner, buf, 10);
  EXPECT_TRUE(v0.full);
  planner.Committed(v0, view, 0);

  std::memset(buf.data() + 3 * kPage, 0x77, kPage);  // one page of 20 changes
  std::memset(buf.data() + 4 * kPage, 0x78, kPage);  // and another
  DedupPlan v1 = PlanAlone(planner, buf, 11);
  EXPECT_FALSE(v1.full);
  EXPECT_EQ(v1.counts.unchanged, 18u);
  EXPECT_EQ(v1.counts.unique, 2u);
  EXPECT_EQ(v1.referenced_versions, (std::set<int64_t>{10}));
  EXPECT_EQ(v1.records[0].version, 10);
  planner.Committed(v1, view, 0);

  // Unchanged again: pages still refer to where the bytes are (10 or 11).
  DedupPlan v2 = PlanAlone(planner, buf, 12);
  EXPECT_EQ(v2.counts.unchanged, 20u);
  EXPECT_EQ(v2.records[3].version, 11);
  EXPECT_EQ(v2.records[0].version, 10);
  planner.Committed(v2, view, 0);

  DedupPlan v3 = PlanAlone(planner, buf, 13);  // full_every = 3
  EXPECT_TRUE(v3.full);
  EXPECT_EQ(v3.counts.unchanged, 0u);
}

TEST(PlannerTest, AChangedMaskSkipsHashingOfCleanPages) {
  DedupPlanner planner({.incremental = true});
  auto buf = Pages({1, 2, 3, 4});
  PageView view = ViewOf(buf);
  DedupPlan v0 = PlanAlone(planner, buf, 0);
  planner.Committed(v0, view, 0);
  std::memset(buf.data() + kPage, 9, kPage);      // page 1 changes and is reported
  std::vector<bool> changed{false, true, false, false};
  DedupPlan v1 = PlanAlone(planner, buf, 1, &changed);
  EXPECT_EQ(Kinds(v1), (std::vector<PageKind>{PageKind::kPrevious, PageKind::kData,
                                              PageKind::kPrevious, PageKind::kPrevious}));
}

TEST(PlannerTest, AChangedMaskCountsOnlyTheHashedPages) {
  DedupPlanner planner({.incremental = true});
  auto buf = Pages({1, 2, 3, 4});
  DedupPlan v0 = PlanAlone(planner, buf, 0);
  EXPECT_EQ(v0.counts.hashed, 4u);
  planner.Committed(v0, ViewOf(buf), 0);
  std::vector<bool> changed{false, true, false, false};
  EXPECT_EQ(PlanAlone(planner, buf, 1, &changed).counts.hashed, 1u);
}

TEST(PlannerTest, AGrownRegionKeepsItsCleanPagesAndHashesTheNewOnes) {
  DedupPlanner planner({.incremental = true});
  auto buf = Pages({1, 2, 3});
  DedupPlan v0 = PlanAlone(planner, buf, 0);
  planner.Committed(v0, ViewOf(buf), 0);
  auto grown = Pages({1, 2, 3, 5, 6});
  // Even a mask that calls the new pages clean cannot skip them: the
  // previous version has no page at their index.
  std::vector<bool> changed(5, false);
  DedupPlan v1 = PlanAlone(planner, grown, 1, &changed);
  EXPECT_FALSE(v1.full);
  EXPECT_EQ(v1.counts.hashed, 2u);
  EXPECT_EQ(Kinds(v1), (std::vector<PageKind>{PageKind::kPrevious, PageKind::kPrevious,
                                              PageKind::kPrevious, PageKind::kData,
                                              PageKind::kData}));
}

TEST(PlannerTest, AForgottenPlannerStartsWithAFullVersion) {
  DedupPlanner planner({.incremental = true});
  auto buf = Pages({1, 2});
  DedupPlan v0 = PlanAlone(planner, buf, 0);
  planner.Committed(v0, ViewOf(buf), 0);
  planner.Forget();
  EXPECT_TRUE(PlanAlone(planner, buf, 1).full);
}

// Records what a plan hands over while it is made.
class RecordingSink final : public StoredPageSink {
 public:
  void Store(const PageView&, const std::vector<size_t>& pages) override {
    ++calls;
    stored.insert(stored.end(), pages.begin(), pages.end());
  }
  int calls = 0;
  std::vector<size_t> stored;
};

std::vector<size_t> StoredPages(const DedupPlan& plan) {
  std::vector<size_t> out;
  for (size_t i = 0; i < plan.records.size(); ++i) {
    if (plan.records[i].kind == PageKind::kData) out.push_back(i);
  }
  return out;
}

TEST(PlannerTest, WithoutACollectiveStepStoredPagesGoToTheSinkInChunksAsTheyAreHashed) {
  DedupPlanner planner({.incremental = true});
  // 200 pages: 4 chunks of 64 pages (256 KiB); every third page repeats.
  std::vector<uint8_t> tags(200);
  for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(i % 3 == 2 ? 7 : i);
  auto buf = Pages(tags, 10);
  auto comm = NewSingleComm();
  RecordingSink sink;
  auto plan = planner.Plan(*comm, ViewOf(buf), 0, nullptr, &sink);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_TRUE(plan->streamed);
  EXPECT_FALSE(plan->collective);
  EXPECT_EQ(sink.calls, 4);
  EXPECT_EQ(sink.stored, StoredPages(*plan));  // every stored page, in order, once
}

// A sink that copies ahead as a mapped pages file does, hashing each page
// it is asked to (with the hasher's own Hash: the copy itself is
// PagesFileWriter's, tested in pages_writer_test).
class CopyingSink final : public StoredPageSink {
 public:
  void Store(const PageView&, const std::vector<size_t>& pages) override {
    stored.insert(stored.end(), pages.begin(), pages.end());
  }
  bool CopyAhead(const PageView& view, size_t first, size_t last, const PageHasher* hasher,
                 PageDigest* digests) override {
    copied_ahead.push_back(first);
    for (size_t i = first; hasher != nullptr && i < last; ++i) {
      digests[i - first] = hasher->Hash(view.page(i).data, view.page(i).length);
    }
    return true;
  }
  std::vector<size_t> stored;
  std::vector<size_t> copied_ahead;  // each chunk's first page
};

// xxh3-128 pages copied ahead are hashed in the copy: counted apart, and
// no hashing pass of their own. A chunk that holds a page the changed mask
// calls clean is not copied ahead (the copy would hash it, and copy it for
// nothing unless it changed).
TEST(PlannerTest, PagesCopiedAheadAreHashedInTheCopyUnlessAChunkHoldsACleanPage) {
  DedupPlanner planner({.incremental = true});
  std::vector<uint8_t> tags(128);
  for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(i);
  auto buf = Pages(tags, 10);
  auto comm = NewSingleComm();
  CopyingSink full;
  auto v0 = planner.Plan(*comm, ViewOf(buf), 0, nullptr, &full);
  ASSERT_TRUE(v0.ok()) << v0.status().ToString();
  EXPECT_EQ(full.copied_ahead, (std::vector<size_t>{0, 64, 128}));
  EXPECT_EQ(v0->counts.hashed, 129u);
  EXPECT_EQ(v0->counts.hashed_in_copy, 129u);
  EXPECT_EQ(v0->hash_seconds, 0.0);
  const PageView view = ViewOf(buf);
  for (size_t i = 0; i < v0->records.size(); ++i) {
    const PageSpan& p = view.page(i);
    ASSERT_EQ(v0->records[i].digest, planner.hasher().Hash(p.data, p.length)) << "page " << i;
  }
  planner.Committed(*v0, ViewOf(buf), 0);
  // Version 1: the first chunk all written, the second with a clean page.
  for (size_t i = 0; i < 64; ++i) buf[i * kPage] ^= 0xFF;
  for (size_t i = 65; i < 128; ++i) buf[i * kPage] ^= 0xFF;
  std::vector<bool> changed(129, true);
  changed[64] = false;
  CopyingSink incremental;
  auto v1 = planner.Plan(*comm, ViewOf(buf), 1, &changed, &incremental);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(incremental.copied_ahead, (std::vector<size_t>{0}));
  EXPECT_EQ(v1->counts.hashed, 128u);
  EXPECT_EQ(v1->counts.hashed_in_copy, 64u);
  EXPECT_EQ(v1->counts.unchanged, 1u);  // page 64 (a short page is never a reference)
  EXPECT_EQ(incremental.stored, StoredPages(*v1));
}

// Plans versions 0..versions-1 on `nranks` thread ranks with a sink, rank
// r's pages of version v being tags_of(r, v); each rank's plans.
std::vector<std::vector<DedupPlan>> PlanVersionsOnRanks(
    int nranks, int versions, const DedupOptions& options,
    const std::function<std::vector<uint8_t>(int, int)>& tags_of) {
  std::vector<std::vector<DedupPlan>> plans(static_cast<size_t>(nranks));
  Status started = RunRanks(PosixEnv(), std::vector<int>(static_cast<size_t>(nranks), 0), [&](Comm& comm) {
    DedupPlanner planner(options);
    for (int v = 0; v < versions; ++v) {
      auto buf = Pages(tags_of(comm.rank(), v));
      RecordingSink sink;
      auto plan = planner.Plan(comm, ViewOf(buf), v, nullptr, &sink);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      if (plan->streamed) {
        EXPECT_EQ(sink.stored, StoredPages(*plan)) << "version " << v;
      }
      planner.Committed(*plan, ViewOf(buf), comm.rank());
      plans[static_cast<size_t>(comm.rank())].push_back(std::move(plan).value());
    }
  });
  EXPECT_TRUE(started.ok()) << started.ToString();
  return plans;
}

TEST(PlannerTest, ACollectiveStepThatFoundNoSharedPageIsSkippedUntilTheNextProbe) {
  // Pages of each rank's own until version 5, then every rank holds the
  // same ones; the last page is a copy of the first (local dedup saves
  // enough that no version is written whole).
  auto tags_of = [](int rank, int v) {
    std::vector<uint8_t> tags(16);
    for (size_t i = 0; i < tags.size(); ++i) {
      const int page = static_cast<int>(i % 15);
      tags[i] = static_cast<uint8_t>(v < 5 ? rank * 16 + page : 200 + page);
    }
    return tags;
  };
  auto plans = PlanVersionsOnRanks(3, 10, {.collective = true, .probe_every = 4}, tags_of);
  for (const auto& rank_plans : plans) {
    std::vector<bool> collective, streamed;
    for (const DedupPlan& p : rank_plans) {
      collective.push_back(p.collective);
      streamed.push_back(p.streamed);
    }
    // 0 probes and finds nothing shared: 1-3 skip, 4 probes; 5-7 skip
    // (the shared pages of 5-7 are stored by every rank), 8 probes and
    // finds them, so 9 takes the step again.
    EXPECT_EQ(collective, (std::vector<bool>{true, false, false, false, true, false, false, false,
                                             true, true}));
    // Streamed but where a step is expected to find shared pages (0: none
    // ran before; 9: 8 found some) or finds that another rank stores some
    // of this rank's (8).
    EXPECT_EQ(streamed, (std::vector<bool>{false, true, true, true, true, true, true, true, false,
                                           false}));
    EXPECT_EQ(rank_plans[3].counts.local_dup, 1u);
    EXPECT_EQ(rank_plans[7].counts.remote_ref, 0u);
    EXPECT_EQ(rank_plans[7].counts.unique, 15u);
  }
  uint64_t remote = 0;
  for (const auto& rank_plans : plans) remote += rank_plans[9].counts.remote_ref;
  EXPECT_EQ(remote, 2u * 16);  // each page stored once in the job at version 9
}

TEST(PlannerTest, ProbeEveryOneTakesTheCollectiveStepEveryVersion) {
  auto tags_of = [](int rank, int) {
    std::vector<uint8_t> tags(8);
    for (size_t i = 0; i < tags.size(); ++i) tags[i] = static_cast<uint8_t>(rank * 8 + i);
    return tags;
  };
  auto plans = PlanVersionsOnRanks(2, 3, {.collective = true, .probe_every = 1}, tags_of);
  for (const auto& rank_plans : plans) {
    for (const DedupPlan& p : rank_plans) EXPECT_TRUE(p.collective) << "version " << p.version;
  }
}

// Whether each plan of one rank was written whole.
std::vector<bool> Whole(const std::vector<DedupPlan>& plans) {
  std::vector<bool> out;
  for (const DedupPlan& p : plans) out.push_back(p.whole);
  return out;
}

TEST(PlannerTest, AfterAVersionThatSavedTooLittleTheNextOnesAreWholeUntilTheProbe) {
  // Pages of each rank's own until version 6, then each rank's pages
  // repeat one page: local dedup saves most of them.
  auto tags_of = [](int rank, int v) {
    std::vector<uint8_t> tags(16);
    for (size_t i = 0; i < tags.size(); ++i) {
      tags[i] = static_cast<uint8_t>(v < 6 ? rank * 16 + static_cast<int>(i) : 250 - rank);
    }
    return tags;
  };
  for (const DedupOptions& options :
       {DedupOptions{.probe_every = 4}, DedupOptions{.collective = true, .probe_every = 4}}) {
    auto plans = PlanVersionsOnRanks(3, 10, options, tags_of);
    for (const auto& rank_plans : plans) {
      // 0 saves nothing: 1-3 whole; 4 is planned and saves nothing: 5-7
      // whole (6 and 7 would save, but nothing looks); 8 finds the
      // repeated pages, so 9 is planned too. In the collective mode the
      // planned versions are those that take the step.
      EXPECT_EQ(Whole(rank_plans), (std::vector<bool>{false, true, true, true, false, true, true,
                                                      true, false, false}))
          << "collective " << options.collective;
      const DedupPlan& whole = rank_plans[7];
      EXPECT_TRUE(whole.records.empty());
      EXPECT_EQ(whole.counts.unique, 16u);
      EXPECT_EQ(whole.counts.data_bytes, 16u * kPage);
      EXPECT_EQ(whole.counts.hashed, 0u);
      EXPECT_FALSE(whole.streamed);  // the sink got nothing
      EXPECT_EQ(rank_plans[8].counts.local_dup, 15u);
      if (options.collective) {
        // The step runs in the planned versions that follow whole ones.
        EXPECT_TRUE(rank_plans[0].collective);
        EXPECT_TRUE(rank_plans[4].collective);
        EXPECT_TRUE(rank_plans[8].collective);
      }
    }
  }
}

TEST(PlannerTest, NoVersionIsWholeWhileOneRankSavesEnough) {
  // Rank 1 holds one page twice in every 16; the others' pages are their
  // own. With min_saving 1/16 that is too little, below it enough.
  auto tags_of = [](int rank, int v) {
    std::vector<uint8_t> tags(16);
    for (size_t i = 0; i < tags.size(); ++i) {
      const size_t page = rank == 1 && i == 15 ? 0 : i;
      tags[i] = static_cast<uint8_t>(rank * 16 + static_cast<int>(page) + v);
    }
    return tags;
  };
  auto enough = PlanVersionsOnRanks(3, 6, {.probe_every = 4, .min_saving = 0.05}, tags_of);
  for (const auto& rank_plans : enough) {
    EXPECT_EQ(Whole(rank_plans), std::vector<bool>(6, false));
  }
  auto little = PlanVersionsOnRanks(3, 6, {.probe_every = 4, .min_saving = 1.0 / 16}, tags_of);
  for (const auto& rank_plans : little) {
    EXPECT_EQ(Whole(rank_plans), (std::vector<bool>{false, true, true, true, false, true}));
  }
  auto never = PlanVersionsOnRanks(3, 6, {.probe_every = 1, .min_saving = 1.0}, tags_of);
  for (const auto& rank_plans : never) {
    EXPECT_EQ(Whole(rank_plans), std::vector<bool>(6, false));
  }
}

TEST(PlannerTest, AnIncrementalVersionIsJudgedOnlyWhenItLookedForUnchangedPages) {
  // Every page changes in every version: nothing stays unchanged.
  auto changing = [](int rank, int v) {
    std::vector<uint8_t> tags(8);
    for (size_t i = 0; i < tags.size(); ++i) {
      tags[i] = static_cast<uint8_t>(rank * 64 + v * 8 + static_cast<int>(i));
    }
    return tags;
  };
  auto plans = PlanVersionsOnRanks(2, 9, {.incremental = true, .probe_every = 4}, changing);
  for (const auto& rank_plans : plans) {
    // 0 is full (nothing to compare with); 1 finds nothing unchanged: 2-4
    // whole; 5 is full again and 6 judges: 7, 8 whole.
    EXPECT_EQ(Whole(rank_plans),
              (std::vector<bool>{false, false, true, true, true, false, false, true, true}));
    EXPECT_TRUE(rank_plans[5].full);
    EXPECT_TRUE(rank_plans[5].referenced_versions.empty());  // not the whole 4
  }
  // One page in 8 changes: the unchanged ones keep every version planned.
  auto quiescent = [](int rank, int v) {
    std::vector<uint8_t> tags(8);
    for (size_t i = 0; i < tags.size(); ++i) {
      tags[i] = static_cast<uint8_t>(rank * 64 + static_cast<int>(i) + (i == 0 ? v * 8 : 0));
    }
    return tags;
  };
  plans = PlanVersionsOnRanks(2, 9, {.incremental = true, .probe_every = 4}, quiescent);
  for (const auto& rank_plans : plans) {
    EXPECT_EQ(Whole(rank_plans), std::vector<bool>(9, false));
    EXPECT_EQ(rank_plans[3].counts.unchanged, 7u);
  }
}

TEST(PlannerTest, ForgetEndsTheWholeVersions) {
  DedupPlanner planner({.probe_every = 8});
  const auto unique = Pages({1, 2, 3, 4});
  DedupPlan v0 = PlanAlone(planner, unique, 0);
  planner.Committed(v0, ViewOf(unique), 0);
  DedupPlan v1 = PlanAlone(planner, unique, 1);
  EXPECT_TRUE(v1.whole);
  planner.Committed(v1, ViewOf(unique), 0);
  planner.Forget();  // a restart, or a failed checkpoint
  EXPECT_FALSE(PlanAlone(planner, unique, 2).whole);
}

// A planner made to reuse an earlier plan's memory (Recycle) plans as a
// fresh one does: nothing of the old plan's records or index leaks into
// the new plan, whether it has more pages or fewer.
TEST(PlannerTest, ARecycledPlanIsTheSameAsAFreshOne) {
  DedupPlanner reused({});
  const auto first = Pages({1, 2, 3, 1, 2, 3, 4, 5});
  const auto fewer = Pages({5, 6, 5}, 10);
  const auto more = Pages({7, 1, 7, 8, 9, 9, 1, 2, 3, 4, 7});
  int64_t version = 0;
  for (const auto* buf : {&first, &fewer, &more, &first}) {
    DedupPlan plan = PlanAlone(reused, *buf, version);
    DedupPlanner fresh({});
    DedupPlan expected = PlanAlone(fresh, *buf, version);
    EXPECT_EQ(Kinds(plan), Kinds(expected)) << "version " << version;
    ASSERT_EQ(plan.records.size(), expected.records.size());
    for (size_t i = 0; i < plan.records.size(); ++i) {
      EXPECT_EQ(plan.records[i].digest, expected.records[i].digest) << "page " << i;
    }
    EXPECT_EQ(plan.counts.unique, expected.counts.unique);
    EXPECT_EQ(plan.counts.local_dup, expected.counts.local_dup);
    reused.Recycle(std::move(plan));
    ++version;
  }
}

}  // namespace
}  // namespace cairn
