#include "policy/clc_rollback.h"

#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

using P = Placement;

TEST(ClcRollbackTest, WithoutCheckpointsEveryFailureRestartsFromTheBeginning) {
  // Failure at t: t seconds lost, uniform over [0, 10]: 5 on average.
  RollbackDistance d = MeanRollback({}, 10, true);
  EXPECT_DOUBLE_EQ(d.seconds, 5);
  EXPECT_DOUBLE_EQ(d.versions, 0);
}

// Call 1 in [4, 5] to the SSD, call 2 in [9, 10] to memory, run of 12 s.
//   [0, 5):   nothing restorable: lost t, integral 12.5
//   [5, 10):  version 1 (state at 4): lost t - 4, integral 5 x 3.5 = 17.5
//   [10, 12): memory lost: version 1 still, 1 call behind: 2 x 7 = 14;
//             memory intact: version 2 (state at 9): 2 x 2 = 4
TEST(ClcRollbackTest, MemoryLossFallsBackToTheOlderSsdCopy) {
  const std::vector<CheckpointCall> calls = {{4, 5, P::kSsd}, {9, 10, P::kMemory}};
  RollbackDistance lost = MeanRollback(calls, 12, true);
  EXPECT_DOUBLE_EQ(lost.seconds, (12.5 + 17.5 + 14) / 12);
  EXPECT_DOUBLE_EQ(lost.versions, 1.0 * 2 / 12);
  RollbackDistance intact = MeanRollback(calls, 12, false);
  EXPECT_DOUBLE_EQ(intact.seconds, (12.5 + 17.5 + 4) / 12);
  EXPECT_DOUBLE_EQ(intact.versions, 0);
}

TEST(ClcRollbackTest, SkippedVersionsCountAsLostWhetherMemorySurvivesOrNot) {
  // Call 1 [1, 2] memory, call 2 [3, 3] skipped, run of 4 s; memory intact:
  //   [0, 2): lost t, 2; [2, 3): version 1 (state 1): 1 x 1.5; [3, 4): the
  //   skip makes it 1 version behind, lost 1 x 2.5.
  const std::vector<CheckpointCall> calls = {{1, 2, P::kMemory}, {3, 3, P::kSkip}};
  RollbackDistance d = MeanRollback(calls, 4, false);
  EXPECT_DOUBLE_EQ(d.seconds, (2 + 1.5 + 2.5) / 4);
  EXPECT_DOUBLE_EQ(d.versions, 1.0 / 4);
  // Memory lost: nothing survives; 1 version behind on [2, 3), 2 on [3, 4).
  RollbackDistance lost = MeanRollback(calls, 4, true);
  EXPECT_DOUBLE_EQ(lost.seconds, 2.0);
  EXPECT_DOUBLE_EQ(lost.versions, (1.0 + 2.0) / 4);
}

TEST(ClcRollbackTest, AlwaysSsdLosesAboutHalfAnInterval) {
  // 10 calls, one every 10 s, each taking 1 s: in [10k + 1, 10(k+1) + 1)
  // the state restored is from 10k, so a failure there loses 6 s on average.
  std::vector<CheckpointCall> calls;
  for (int k = 1; k <= 10; ++k) calls.push_back({10.0 * k, 10.0 * k + 1, P::kSsd});
  RollbackDistance d = MeanRollback(calls, 101, true);
  // [0, 11): lost t, 60.5; nine such intervals of 10 s: 9 x 10 x 6; the
  // last call ends with the run.
  EXPECT_DOUBLE_EQ(d.seconds, (60.5 + 540) / 101);
  EXPECT_DOUBLE_EQ(d.versions, 0);
  EXPECT_DOUBLE_EQ(MeanRollback(calls, 101, false).seconds, d.seconds);
}

}  // namespace
}  // namespace cairn
