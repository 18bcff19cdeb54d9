#include "policy/retention.h"

#include <gtest/gtest.h>

namespace cairn {
namespace {

std::vector<StoredVersion> Complete(std::initializer_list<int64_t> vs) {
  std::vector<StoredVersion> out;
  for (int64_t v : vs) out.push_back({v, true, false, false, {}});
  return out;
}

TEST(RetentionTest, KeepsNewestN) {
  EXPECT_EQ(VersionsToDelete(Complete({10, 20, 30, 40}), 2, {10, 20, 30, 40}),
            (std::vector<int64_t>{20, 10}));
  EXPECT_EQ(VersionsToDelete(Complete({10, 20}), 2, {10, 20}), std::vector<int64_t>{});
}

TEST(RetentionTest, NothingBeforeAVersionEveryRankHolds) {
  EXPECT_TRUE(VersionsToDelete(Complete({10, 20, 30}), 1, {}).empty());
}

TEST(RetentionTest, NeverDeletesTheNewestVersionEveryRankHolds) {
  // This rank has 40 and 50, but another rank lacks them (they may still be
  // arriving there): 30 is the newest version a restart can use here and
  // must survive keep = 1, and 40 and 50 stay too.
  EXPECT_EQ(VersionsToDelete(Complete({20, 30, 40, 50}), 1, {20, 30}),
            (std::vector<int64_t>{20}));
}

// The places of `keep` go to versions a restart could use: a copy that
// other ranks lack (their drain of it was superseded) takes none, and goes.
TEST(RetentionTest, CopiesOtherRanksLackTakeNoPlace) {
  EXPECT_EQ(VersionsToDelete(Complete({2, 4, 5}), 2, {2, 5}), (std::vector<int64_t>{4}));
}

TEST(RetentionTest, PinnedVersionsSurvive) {
  auto vs = Complete({10, 20, 30});
  vs[0].pinned = true;
  EXPECT_EQ(VersionsToDelete(vs, 1, {10, 20, 30}), (std::vector<int64_t>{20}));
}

TEST(RetentionTest, IncompleteLeftoversAreDeletedOnlyWhenOld) {
  std::vector<StoredVersion> vs = {{10, false, false, false, {}}, {20, true, false, false, {}},
                                   {30, false, false, false, {}}};
  EXPECT_EQ(VersionsToDelete(vs, 5, {20}), (std::vector<int64_t>{10}));
}

// A run that rolled back to 20 and committed 30 again leaves the earlier
// run's 40 and 50 behind: they go, even though they are the newest, and
// they take none of the `keep` places.
TEST(RetentionTest, SupersededVersionsAreDeletedAndNotKept) {
  auto vs = Complete({10, 20, 30, 40, 50});
  vs[3].superseded = true;
  vs[4].superseded = true;
  EXPECT_EQ(VersionsToDelete(vs, 2, {10, 20, 30}), (std::vector<int64_t>{50, 40, 10}));
}

TEST(RetentionTest, PinnedSupersededVersionsWait) {
  auto vs = Complete({20, 30, 40});
  vs[2].superseded = true;
  vs[2].pinned = true;
  EXPECT_TRUE(VersionsToDelete(vs, 2, {20, 30}).empty());
}

// A job that committed 10 in a directory where an older job of the same
// size left 90 and 100 (and never restarted from them) keeps its 10: the
// version it just committed is pinned, and the old ones are superseded.
TEST(RetentionTest, AJustCommittedVersionSurvivesNewerOldOnes) {
  auto vs = Complete({10, 90, 100});
  vs[0].pinned = true;
  vs[1].superseded = true;
  vs[2].superseded = true;
  EXPECT_EQ(VersionsToDelete(vs, 2, {}), (std::vector<int64_t>{100, 90}));
}

// [dedup]: a version that a kept version refers to stays, and so does what
// it refers to in turn; references from versions that go keep nothing.
TEST(RetentionTest, ReferencedVersionsStayWhileTheirReferrersDo) {
  auto vs = Complete({10, 20, 30, 40, 50});
  vs[4].references = {30};  // 50 refers to 30
  vs[2].references = {10};  // 30 refers to 10 (kept through 50)
  vs[1].references = {10};  // 20 goes; its reference alone would keep nothing
  EXPECT_EQ(VersionsToDelete(vs, 2, {10, 20, 30, 40, 50}), (std::vector<int64_t>{20}));
  vs[4].references.clear();
  EXPECT_EQ(VersionsToDelete(vs, 2, {10, 20, 30, 40, 50}), (std::vector<int64_t>{30, 20, 10}));
}

}  // namespace
}  // namespace cairn
