#include "policy/retention.h"

#include <gtest/gtest.h>

namespace cairn {
namespace {

std::vector<StoredVersion> Complete(std::initializer_list<int64_t> vs) {
  std::vector<StoredVersion> out;
  for (int64_t v : vs) out.push_back({v, true, false});
  return out;
}

TEST(RetentionTest, KeepsNewestN) {
  EXPECT_EQ(VersionsToDelete(Complete({10, 20, 30, 40}), 2, 40), (std::vector<int64_t>{20, 10}));
  EXPECT_EQ(VersionsToDelete(Complete({10, 20}), 2, 20), std::vector<int64_t>{});
}

TEST(RetentionTest, NothingBeforeAGloballyCompleteVersion) {
  EXPECT_TRUE(VersionsToDelete(Complete({10, 20, 30}), 1, -1).empty());
}

TEST(RetentionTest, NeverDeletesNewestGloballyCompleteVersion) {
  // This rank has 40 and 50, but another rank lacks them: 30 is the newest
  // version every rank can recover here and must survive keep = 1.
  EXPECT_EQ(VersionsToDelete(Complete({20, 30, 40, 50}), 1, 30), (std::vector<int64_t>{20}));
}

TEST(RetentionTest, PinnedVersionsSurvive) {
  auto vs = Complete({10, 20, 30});
  vs[0].pinned = true;
  EXPECT_EQ(VersionsToDelete(vs, 1, 30), (std::vector<int64_t>{20}));
}

TEST(RetentionTest, IncompleteLeftoversAreDeletedOnlyWhenOld) {
  std::vector<StoredVersion> vs = {{10, false, false}, {20, true, false}, {30, false, false}};
  EXPECT_EQ(VersionsToDelete(vs, 5, 20), (std::vector<int64_t>{10}));
}

}  // namespace
}  // namespace cairn
