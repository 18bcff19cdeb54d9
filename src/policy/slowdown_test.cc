#include "policy/slowdown.h"

#include <gtest/gtest.h>

#include "policy/clc.h"

namespace cairn {
namespace {

TEST(SlowdownTrackerTest, AccumulatesComputeAndCheckpointTime) {
  FakeClock clock(1000);
  SlowdownTracker t(&clock);
  EXPECT_DOUBLE_EQ(t.slowdown(), 0);
  clock.Advance(5);                       // compute from construction
  EXPECT_DOUBLE_EQ(t.compute_seconds(), 5);
  t.EnterCheckpoint();
  EXPECT_TRUE(t.inside_checkpoint());
  clock.Advance(2);
  // Inside the call: neither clock runs for the estimate (Algorithm 1
  // updates T_chk only after the write).
  EXPECT_DOUBLE_EQ(t.compute_seconds(), 5);
  EXPECT_DOUBLE_EQ(t.checkpoint_seconds(), 0);
  t.LeaveCheckpoint();
  EXPECT_DOUBLE_EQ(t.checkpoint_seconds(), 2);
  EXPECT_DOUBLE_EQ(t.slowdown(), 2.0 / 7);
  clock.Advance(3);
  EXPECT_DOUBLE_EQ(t.compute_seconds(), 8);
  EXPECT_DOUBLE_EQ(t.slowdown(), 2.0 / 10);
  t.EnterCheckpoint();
  clock.Advance(1);
  t.EnterCheckpoint();  // ignored: already inside
  clock.Advance(1);
  t.LeaveCheckpoint();
  t.LeaveCheckpoint();  // ignored: already outside
  EXPECT_DOUBLE_EQ(t.checkpoint_seconds(), 4);
  EXPECT_DOUBLE_EQ(t.compute_seconds(), 8);
  EXPECT_DOUBLE_EQ(t.slowdown(), 4.0 / 12);
}

TEST(SlowdownTrackerTest, ClockSteppingBackCountsNothing) {
  FakeClock clock(1000);
  SlowdownTracker t(&clock);
  clock.Advance(-10);
  t.EnterCheckpoint();
  clock.Advance(-1);
  t.LeaveCheckpoint();
  EXPECT_DOUBLE_EQ(t.compute_seconds(), 0);
  EXPECT_DOUBLE_EQ(t.checkpoint_seconds(), 0);
}

TEST(SlowdownTrackerTest, DrivesThePerformanceLossRule) {
  // The paper's PLE behaviour with a 5 s compute phase, a 3.2 s SSD write
  // and a 0.15 s memory write (100 MB per rank, 8 ranks): after one SSD
  // checkpoint the slowdown is 3.2 / 8.2 = 39%, so memory until it falls
  // to 10%: before checkpoint k + 2, k memory checkpoints in, T_chk =
  // 3.2 + 0.15k <= 0.1 (T_chk + 5 (k + 2)) <=> k >= 5.15: six memory
  // checkpoints, then the SSD again (checkpoint 8).
  FakeClock clock(0);
  SlowdownTracker t(&clock);
  ClcSettings s;
  s.lifetime = false;
  std::vector<Placement> placements;
  for (int i = 1; i <= 9; ++i) {
    clock.Advance(5);
    t.EnterCheckpoint();
    ClcInput in;
    in.checkpoint_number = i;
    in.checkpoint_seconds = t.checkpoint_seconds();
    in.compute_seconds = t.compute_seconds();
    ClcDecision d = DecidePlacement(s, in);
    placements.push_back(d.placement);
    clock.Advance(d.placement == Placement::kSsd ? 3.2 : 0.15);
    t.LeaveCheckpoint();
  }
  using P = Placement;
  EXPECT_EQ(placements, (std::vector<P>{P::kSsd, P::kMemory, P::kMemory, P::kMemory, P::kMemory,
                                        P::kMemory, P::kMemory, P::kSsd, P::kMemory}));
}

}  // namespace
}  // namespace cairn
