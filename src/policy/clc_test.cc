#include "policy/clc.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

namespace cairn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- formulas --

struct LifetimeCase {
  const char* name;
  double rating, used, warranty, bandwidth;
  double expected, estimated;  // hand-computed, seconds
};

TEST(ClcFormulaTest, LifetimeEquations) {
  const LifetimeCase cases[] = {
      // Eq. (1): (1000 - 200) * 10 / 1000 = 8;  Eq. (2): (1000 - 200) / 4 = 200.
      {"small numbers", 1000, 200, 10, 4, 8, 200},
      // A new device is expected to last its warranty exactly.
      {"new device", 1000, 0, 10, 50, 10, 20},
      // The paper's S3700: 14.6 PBW, 5 years; half used -> 2.5 years left.
      // At 100 MB/s: 7.3e15 / 1e8 = 7.3e7 s.
      {"S3700 half used", 14.6e15, 7.3e15, 5 * kSecondsPerYear, 100e6, 2.5 * kSecondsPerYear, 7.3e7},
      // Nothing being written: infinite estimated lifetime.
      {"idle", 1000, 0, 10, 0, 10, kInf},
      // Written to its rating or beyond: no life left by either measure.
      {"worn out", 1000, 1000, 10, 4, 0, 0},
      {"beyond rating", 1000, 1500, 10, 4, 0, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    LifetimeEstimate e = EstimateLifetime({c.rating, c.used, c.warranty, c.bandwidth});
    EXPECT_DOUBLE_EQ(e.expected_seconds, c.expected);
    if (std::isinf(c.estimated)) {
      EXPECT_TRUE(std::isinf(e.estimated_seconds));
    } else {
      EXPECT_DOUBLE_EQ(e.estimated_seconds, c.estimated);
    }
  }
}

TEST(ClcFormulaTest, LifetimeTestIsABandwidthThreshold) {
  // L_estimated > L_expected  <=>  B_SSD < PBW_rating / warranty whatever
  // PBW_used is: for the S3700 that is 14.6e15 B / 5 y = 92.52 MB/s.
  const double threshold = 14.6e15 / (5 * kSecondsPerYear);
  EXPECT_NEAR(threshold, 92.52e6, 0.01e6);
  for (double used : {0.0, 1e15, 10e15}) {
    LifetimeEstimate below = EstimateLifetime({14.6e15, used, 5 * kSecondsPerYear, threshold * 0.99});
    LifetimeEstimate above = EstimateLifetime({14.6e15, used, 5 * kSecondsPerYear, threshold * 1.01});
    EXPECT_GT(below.estimated_seconds, below.expected_seconds) << used;
    EXPECT_LT(above.estimated_seconds, above.expected_seconds) << used;
  }
}

TEST(ClcFormulaTest, SlowdownEquation) {
  EXPECT_DOUBLE_EQ(SlowdownFraction(1, 9), 0.1);      // 1 / (9 + 1)
  EXPECT_DOUBLE_EQ(SlowdownFraction(32, 5), 32.0 / 37);
  EXPECT_DOUBLE_EQ(SlowdownFraction(0, 100), 0);
  EXPECT_DOUBLE_EQ(SlowdownFraction(0, 0), 0);       // nothing measured yet
  EXPECT_DOUBLE_EQ(SlowdownFraction(5, 0), 1);
}

TEST(ClcFormulaTest, WearFromLedgerReading) {
  SsdEndurance endurance;
  endurance.rating_bytes = 2e15;
  endurance.warranty_seconds = 3 * kSecondsPerYear;
  endurance.already_written_bytes = 1e12;
  WearReading reading;
  reading.ledger_bytes = 5e11;
  reading.bandwidth = 7e6;
  SsdWear wear = MakeSsdWear(endurance, reading);
  EXPECT_DOUBLE_EQ(wear.rating_bytes, 2e15);
  EXPECT_DOUBLE_EQ(wear.used_bytes, 1.5e12);
  EXPECT_DOUBLE_EQ(wear.warranty_seconds, 3 * kSecondsPerYear);
  EXPECT_DOUBLE_EQ(wear.bandwidth, 7e6);
}

// ------------------------------------------------------------ Algorithm 1 --

// Knobs of one row: SSD rating 1000 B over a 10 s warranty (L_expected =
// 10 s when new); B_SSD 50 B/s gives L_estimated 20 s (lifetime ok), 100
// B/s exactly 10 s (not ok: the test is strict), 200 B/s 5 s (not ok).
// T_chk + T_compute = 10 s; bound 0.1. Memory 800 B over 8 ranks: a share
// of 100 B. A capacity of 0 in the table stands for kNoMemoryLimit.
struct BranchCase {
  const char* name;
  bool lifetime, slowdown, size;  // switches
  double bandwidth;               // B_SSD
  double t_chk;                   // of 10 s
  uint64_t bytes;                 // checkpoint
  uint64_t capacity;              // memory tier
  double used;                    // PBW_used
  Placement placement;
  Placement preferred;
  ClcRule rule;
};

ClcInput BranchInput(const BranchCase& c) {
  ClcInput in;
  in.checkpoint_number = 3;
  in.checkpoint_bytes = c.bytes;
  in.memory_capacity = c.capacity == 0 ? kNoMemoryLimit : c.capacity;
  in.ranks_on_node = 8;
  in.wear = {1000, c.used, 10, c.bandwidth};
  in.checkpoint_seconds = c.t_chk;
  in.compute_seconds = 10 - c.t_chk;
  return in;
}

TEST(ClcAlgorithmTest, EveryBranch) {
  using P = Placement;
  using R = ClcRule;
  const BranchCase cases[] = {
      // name                                     LE     PLE    size   B    chk bytes cap  used  placement  preferred  rule
      {"line 5: lifetime ok, slowdown ok",        true,  true,  true,  50,  1,  50,  800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"line 7: lifetime ok, slowdown over",      true,  true,  true,  50,  2,  50,  800, 0,    P::kMemory, P::kMemory, R::kSlowdown},
      {"line 10: wearing, slowdown ok",           true,  true,  true,  200, 1,  50,  800, 0,    P::kMemory, P::kMemory, R::kLifetime},
      {"line 10: wearing, slowdown over",         true,  true,  true,  200, 2,  50,  800, 0,    P::kMemory, P::kMemory, R::kLifetime},
      {"line 14: slowdown over, too big",         true,  true,  true,  50,  2,  101, 800, 0,    P::kSkip,   P::kMemory, R::kSlowdown},
      {"line 14: wearing, too big",               true,  true,  true,  200, 1,  101, 800, 0,    P::kSkip,   P::kMemory, R::kLifetime},
      {"line 13: SSD needs no memory",            true,  true,  true,  50,  1,  101, 800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"line 13: exactly the share fits",         true,  true,  true,  200, 1,  100, 800, 0,    P::kMemory, P::kMemory, R::kLifetime},
      {"line 13: no capacity, no limit",          true,  true,  true,  200, 1,  1000000000, 0,   0,    P::kMemory, P::kMemory, R::kLifetime},
      {"size off: too big stays in memory",       true,  true,  false, 200, 1,  101, 800, 0,    P::kMemory, P::kMemory, R::kLifetime},
      {"LE: slowdown ignored",                    true,  false, false, 50,  5,  50,  800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"LE: wearing",                             true,  false, false, 200, 0,  50,  800, 0,    P::kMemory, P::kMemory, R::kLifetime},
      {"PLE only: wearing ignored",               false, true,  false, 200, 1,  50,  800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"PLE only: slowdown over",                 false, true,  false, 200, 2,  50,  800, 0,    P::kMemory, P::kMemory, R::kSlowdown},
      {"no tests: SSD",                           false, false, true,  200, 9,  101, 800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"strict >: L_estimated == L_expected",     true,  true,  true,  100, 1,  50,  800, 0,    P::kMemory, P::kMemory, R::kLifetime},
      {"strict >: slowdown == bound is ok",       true,  true,  true,  50,  1,  50,  800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"idle SSD: infinite lifetime",             true,  true,  true,  0,   1,  50,  800, 0,    P::kSsd,    P::kSsd,    R::kWithinLimits},
      {"worn-out SSD, even idle",                 true,  true,  true,  0,   0,  50,  800, 1000, P::kMemory, P::kMemory, R::kLifetime},
      {"half-used SSD, same threshold",           true,  true,  true,  50,  0,  50,  800, 500,  P::kSsd,    P::kSsd,    R::kWithinLimits},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ClcSettings s;
    s.lifetime = c.lifetime;
    s.slowdown = c.slowdown;
    s.size = c.size;
    s.slowdown_bound = 0.1;
    ASSERT_TRUE(s.Validate().ok());
    ClcDecision d = DecidePlacement(s, BranchInput(c));
    EXPECT_EQ(d.placement, c.placement) << d.reason;
    EXPECT_EQ(d.preferred, c.preferred) << d.reason;
    EXPECT_EQ(d.rule, c.rule) << d.reason;
    EXPECT_FALSE(d.forced);
    EXPECT_EQ(d.lifetime_checked, c.lifetime);
    EXPECT_EQ(d.slowdown_checked, c.slowdown);
    EXPECT_EQ(d.size_checked, c.size);
    EXPECT_EQ(d.reason.rfind(PlacementName(c.placement), 0), 0u) << d.reason;
  }
}

TEST(ClcAlgorithmTest, EstimatesAreReported) {
  ClcSettings s;
  BranchCase c{"", true, true, true, 200, 2, 101, 800, 200, Placement::kSkip, Placement::kMemory,
               ClcRule::kLifetime};
  ClcDecision d = DecidePlacement(s, BranchInput(c));
  EXPECT_DOUBLE_EQ(d.expected_lifetime_seconds, 8);   // (1000 - 200) * 10 / 1000
  EXPECT_DOUBLE_EQ(d.estimated_lifetime_seconds, 4);  // (1000 - 200) / 200
  EXPECT_DOUBLE_EQ(d.bandwidth, 200);
  EXPECT_DOUBLE_EQ(d.slowdown, 0.2);                  // 2 / 10
  EXPECT_FALSE(d.lifetime_ok);
  EXPECT_FALSE(d.slowdown_ok);
  EXPECT_FALSE(d.fits);
  EXPECT_EQ(d.size_limit, 100u);                      // 800 / 8
  EXPECT_EQ(d.checkpoint_bytes, 101u);
  EXPECT_EQ(d.memory_capacity, 800u);
  EXPECT_NE(d.reason.find("skip: memory wanted (the SSD would wear out"), std::string::npos) << d.reason;
}

TEST(ClcAlgorithmTest, SizeLimitDividesCapacityByRanksOnNode) {
  // The paper's setting: 4 GiB of tmpfs for 8 ranks -> 512 MiB each, so
  // 500 MB checkpoints fit and 600 MB ones do not (Figure 11).
  ClcSettings s;
  ClcInput in;
  in.memory_capacity = 4ull << 30;
  in.ranks_on_node = 8;
  in.wear = {14.6e15, 0, 5 * kSecondsPerYear, 1e9};  // wearing: memory wanted
  in.checkpoint_bytes = 500'000'000;
  ClcDecision fits = DecidePlacement(s, in);
  EXPECT_EQ(fits.size_limit, 512ull << 20);
  EXPECT_EQ(fits.placement, Placement::kMemory);
  in.checkpoint_bytes = 600'000'000;
  EXPECT_EQ(DecidePlacement(s, in).placement, Placement::kSkip);
  in.ranks_on_node = 0;  // treated as 1
  EXPECT_EQ(DecidePlacement(s, in).size_limit, 4ull << 30);
  // A full memory tier: nothing fits (0 is no room, not "no limit").
  in.memory_capacity = 0;
  in.checkpoint_bytes = 1;
  EXPECT_EQ(DecidePlacement(s, in).placement, Placement::kSkip);
  in.memory_capacity = kNoMemoryLimit;
  in.checkpoint_bytes = UINT64_MAX;
  EXPECT_EQ(DecidePlacement(s, in).placement, Placement::kMemory);
}

TEST(ClcAlgorithmTest, ReasonsReadWell) {
  // The paper's device: 14.6 PBW over 5 years. At 216.2 MB/s (always-SSD
  // at 1000 MB per rank) L_estimated = 14.6e15 / 216.2e6 s = 2.14 y.
  ClcSettings s;
  ClcInput in;
  in.ranks_on_node = 8;
  in.memory_capacity = 4ull << 30;
  in.checkpoint_bytes = 100'000'000;
  in.wear = {14.6e15, 0, 5 * kSecondsPerYear, 216.2e6};
  in.checkpoint_seconds = 1;
  in.compute_seconds = 9;
  EXPECT_EQ(DecidePlacement(s, in).reason,
            "memory: the SSD would wear out before its time: L_estimated 2.14 y <= L_expected "
            "5.00 y at B_SSD 216.2 MB/s");
  in.checkpoint_bytes = 600'000'000;
  EXPECT_EQ(DecidePlacement(s, in).reason,
            "skip: memory wanted (the SSD would wear out before its time: L_estimated 2.14 y <= "
            "L_expected 5.00 y at B_SSD 216.2 MB/s) but 600.0 MB > memory share 536.9 MB "
            "(4.29 GB / node ranks)");
  in.wear.bandwidth = 50e6;  // 14.6e15 / 50e6 s = 9.25 y
  in.checkpoint_seconds = 2;
  in.compute_seconds = 8;
  in.checkpoint_bytes = 100'000'000;
  EXPECT_EQ(DecidePlacement(s, in).reason,
            "memory: L_estimated 9.25 y > L_expected 5.00 y at B_SSD 50.0 MB/s, but slowdown "
            "20.0% > bound 10.0%");
  in.checkpoint_seconds = 0.5;
  in.compute_seconds = 9.5;
  EXPECT_EQ(DecidePlacement(s, in).reason,
            "ssd: L_estimated 9.25 y > L_expected 5.00 y at B_SSD 50.0 MB/s and slowdown 5.0% <= "
            "bound 10.0%");
  in.wear.bandwidth = 0;
  EXPECT_EQ(DecidePlacement(s, in).reason,
            "ssd: L_estimated infinite > L_expected 5.00 y at B_SSD 0 B/s and slowdown 5.0% <= "
            "bound 10.0%");
}

// ------------------------------------------------------------- look-ahead --

TEST(ClcLookaheadTest, ProjectWearAddsTheCheckpointWithinTheSpan) {
  // 1000 B over a 10 s warranty: cap 100 B/s. 40 B/s measured over 50 s,
  // plus 1000 B: (40 + 1000 / 50) x 1.02 = 61.2 B/s; used 200 + 1000.
  SsdWear wear{1000, 200, 10, 40, 50};
  SsdWear after = ProjectWear(wear, 1000);
  EXPECT_DOUBLE_EQ(after.bandwidth, 60 * (1 + kLifetimeMargin));
  EXPECT_DOUBLE_EQ(after.used_bytes, 1200);
  EXPECT_DOUBLE_EQ(after.rating_bytes, 1000);
  EXPECT_DOUBLE_EQ(after.span_seconds, 50);
  // Unknown span: the paper's test on B_SSD as measured.
  wear.span_seconds = 0;
  SsdWear same = ProjectWear(wear, 1000);
  EXPECT_DOUBLE_EQ(same.bandwidth, 40);
  EXPECT_DOUBLE_EQ(same.used_bytes, 200);
}

TEST(ClcLookaheadTest, SpanComesFromTheReadingAndIsAtLeastOneSecond) {
  WearReading reading;
  reading.time = 1000;
  reading.span_start = 400;
  EXPECT_DOUBLE_EQ(MakeSsdWear(SsdEndurance{}, reading).span_seconds, 600);
  reading.span_start = 999.5;
  EXPECT_DOUBLE_EQ(MakeSsdWear(SsdEndurance{}, reading).span_seconds, 1);
}

TEST(ClcLookaheadTest, ACheckpointThatWouldCrossTheCapGoesToMemory) {
  // Cap 1e9 B / 1e4 s = 1e5 B/s. Measured 9e4 B/s over 100 s: the paper's
  // test passes. This rank's 1e6 B x 8 ranks = 8e6 B more over 100 s is
  // +8e4 B/s: 1.7e5 B/s with it, over the cap.
  ClcSettings s;
  s.slowdown = s.size = false;
  ClcInput in;
  in.ranks_on_node = 8;
  in.checkpoint_bytes = 1'000'000;
  in.wear = {1e9, 0, 1e4, 9e4, 100};
  ClcDecision d = DecidePlacement(s, in);
  EXPECT_EQ(d.placement, Placement::kMemory) << d.reason;
  EXPECT_EQ(d.rule, ClcRule::kLifetime);
  EXPECT_DOUBLE_EQ(d.lookahead_bytes, 8e6);
  EXPECT_DOUBLE_EQ(d.measured_bandwidth, 9e4);
  EXPECT_DOUBLE_EQ(d.bandwidth, 1.7e5 * (1 + kLifetimeMargin));
  EXPECT_DOUBLE_EQ(d.expected_lifetime_seconds, (1e9 - 8e6) * 1e4 / 1e9);
  EXPECT_NE(d.reason.find("with this checkpoint's 8.0 MB (measured 90.0 kB/s)"), std::string::npos)
      << d.reason;
  // Ten times the span: +8e3 B/s, (9e4 + 8e3) x 1.02 = 99 960 B/s < cap.
  in.wear.span_seconds = 1000;
  EXPECT_EQ(DecidePlacement(s, in).placement, Placement::kSsd);
  // Within the margin of the cap: memory.
  in.wear.bandwidth = 9.5e4;  // (9.5e4 + 8e3) x 1.02 = 105 060 B/s
  EXPECT_EQ(DecidePlacement(s, in).placement, Placement::kMemory);
}

// A node that writes whenever the LE test lets it, at a rate well over the
// cap: with the look-ahead the rate after every write stays under the cap,
// so the lifetime the run projects (rating / (bytes / runtime), Figure 9)
// is never below the warranty, at any point the run could stop.
TEST(ClcLookaheadTest, LifetimeNeverFallsBelowTheWarranty) {
  ClcSettings s;
  s.slowdown = s.size = false;
  const double rating = 14.6e15, warranty = 5 * kSecondsPerYear;
  const double cap = rating / warranty;
  for (double mb : {100.0, 400.0, 1000.0}) {
    SCOPED_TRACE(mb);
    const double node_bytes = 8 * mb * 1e6;
    const double t_ssd = node_bytes / 250e6, t_memory = node_bytes / 6.3e9;
    double now = 0, written = 0;
    int ssd = 0;
    for (int i = 1; i <= 400; ++i) {
      now += 5;  // compute
      ClcInput in;
      in.checkpoint_number = i;
      in.ranks_on_node = 8;
      in.checkpoint_bytes = static_cast<uint64_t>(mb * 1e6);
      in.wear = {rating, written, warranty, written / std::max(now, 1.0), std::max(now, 1.0)};
      if (DecidePlacement(s, in).placement == Placement::kSsd) {
        now += t_ssd;
        written += node_bytes;
        ++ssd;
      } else {
        now += t_memory;
      }
      ASSERT_LT(written / now, cap) << "checkpoint " << i;
    }
    EXPECT_GT(ssd, 0);  // the SSD is still used, up to the cap
    EXPECT_GT(written / now, 0.8 * cap);
  }
}

TEST(ClcAlgorithmTest, ForcedCheckpointsGoToTheSsdWhateverElseSays) {
  ClcSettings s;
  s.force_ssd_every = 10;
  // Everything says "not the SSD": wearing, over the bound, too big.
  BranchCase worst{"", true, true, true, 200, 2, 101, 800, 0, Placement::kSkip, Placement::kMemory,
                   ClcRule::kLifetime};
  for (PlacementPolicy policy : {PlacementPolicy::kClc, PlacementPolicy::kMemory,
                                 PlacementPolicy::kRatio, PlacementPolicy::kSsd}) {
    SCOPED_TRACE(PlacementPolicyName(policy));
    s.policy = policy;
    s.ratio = 7;
    ClcInput in = BranchInput(worst);
    for (int64_t n = 1; n <= 30; ++n) {
      in.checkpoint_number = n;
      ClcDecision d = DecidePlacement(s, in);
      bool forced = n % 10 == 0;
      EXPECT_EQ(d.forced, forced) << n;
      if (forced) {
        EXPECT_EQ(d.placement, Placement::kSsd) << n;
        EXPECT_EQ(d.rule, ClcRule::kForcedEvery) << n;
        EXPECT_EQ(d.period, 10) << n;
        EXPECT_NE(d.reason.find("multiple of force_ssd_every = 10"), std::string::npos) << d.reason;
      } else {
        EXPECT_NE(d.rule, ClcRule::kForcedEvery) << n;
      }
    }
    in.checkpoint_number = 11;
    in.force_ssd = true;
    ClcDecision flagged = DecidePlacement(s, in);
    EXPECT_TRUE(flagged.forced);
    EXPECT_EQ(flagged.placement, Placement::kSsd);
    EXPECT_EQ(flagged.rule, ClcRule::kForcedFlag);
  }
}

TEST(ClcAlgorithmTest, FixedPolicies) {
  BranchCase c{"", true, true, true, 200, 2, 101, 800, 0, Placement::kSkip, Placement::kMemory,
               ClcRule::kLifetime};
  ClcSettings s;
  s.policy = PlacementPolicy::kMemory;
  ClcDecision m = DecidePlacement(s, BranchInput(c));
  // The size rule belongs to the clc policy: a fixed policy is what the user
  // asked for (a full memory tier then fails the write with kNoSpace).
  EXPECT_EQ(m.placement, Placement::kMemory);
  EXPECT_EQ(m.rule, ClcRule::kFixedMemory);
  EXPECT_FALSE(m.lifetime_checked || m.slowdown_checked || m.size_checked);
  s.policy = PlacementPolicy::kSsd;
  ClcDecision d = DecidePlacement(s, BranchInput(c));
  EXPECT_EQ(d.placement, Placement::kSsd);
  EXPECT_EQ(d.rule, ClcRule::kFixedSsd);
  EXPECT_EQ(d.reason, "ssd: policy ssd");
}

TEST(ClcAlgorithmTest, RatioSendsEveryNthCheckpointToTheSsd) {
  ClcSettings s;
  s.policy = PlacementPolicy::kRatio;
  s.ratio = 10;  // the paper's 9:1
  ClcInput in;
  int ssd = 0;
  for (int64_t n = 1; n <= 100; ++n) {
    in.checkpoint_number = n;
    ClcDecision d = DecidePlacement(s, in);
    EXPECT_EQ(d.placement, n % 10 == 0 ? Placement::kSsd : Placement::kMemory) << n;
    EXPECT_EQ(d.rule, ClcRule::kRatio);
    ssd += d.placement == Placement::kSsd;
  }
  EXPECT_EQ(ssd, 10);
  s.ratio = 1;
  in.checkpoint_number = 7;
  EXPECT_EQ(DecidePlacement(s, in).placement, Placement::kSsd);
}

TEST(ClcSettingsTest, ValidateAndParse) {
  ClcSettings s;
  EXPECT_TRUE(s.Validate().ok());
  for (double bound : {0.0, 1.0, -0.1, std::nan("")}) {
    ClcSettings b;
    b.slowdown_bound = bound;
    EXPECT_EQ(b.Validate().code(), Code::kInvalidArgument) << bound;
  }
  ClcSettings f;
  f.force_ssd_every = -1;
  EXPECT_NE(f.Validate().message().find("force_ssd_every"), std::string::npos);
  ClcSettings r;
  r.ratio = 0;
  EXPECT_NE(r.Validate().message().find("ratio"), std::string::npos);

  for (auto p : {PlacementPolicy::kClc, PlacementPolicy::kMemory, PlacementPolicy::kSsd,
                 PlacementPolicy::kRatio}) {
    auto parsed = ParsePlacementPolicy(PlacementPolicyName(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  auto bad = ParsePlacementPolicy("dram");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'dram'"), std::string::npos);
}

// ------------------------------------------------------------------- wire --

// A decision of the given placement (clc policy, the BranchCase knobs).
ClcDecision Sample(Placement placement) {
  BranchCase c{"", true, true, true, 50, 1, 50, 800, 0, {}, {}, {}};  // ssd
  if (placement != Placement::kSsd) c.bandwidth = 200;                // wearing: memory
  if (placement == Placement::kSkip) c.bytes = 101;                   // and too big
  ClcDecision d = DecidePlacement(ClcSettings{}, BranchInput(c));
  EXPECT_EQ(d.placement, placement);
  return d;
}

TEST(ClcWireTest, RoundTrip) {
  ClcSettings s;
  s.force_ssd_every = 4;
  std::vector<ClcDecision> decisions;
  for (const BranchCase& c :
       {BranchCase{"", true, true, true, 50, 1, 50, 800, 0, {}, {}, {}},
        BranchCase{"", true, true, true, 0, 1, 50, 800, 0, {}, {}, {}},     // infinite L_estimated
        BranchCase{"", true, true, true, 200, 2, 101, 800, 0, {}, {}, {}},  // skip
        BranchCase{"", false, true, false, 50, 2, 50, 0, 1000, {}, {}, {}}}) {
    for (int64_t n : {3, 4}) {  // 4 is forced
      ClcInput in = BranchInput(c);
      in.checkpoint_number = n;
      in.wear.span_seconds = 100;  // with the look-ahead's words
      decisions.push_back(DecidePlacement(s, in));
    }
  }
  for (size_t i = 0; i < decisions.size(); ++i) {
    SCOPED_TRACE(decisions[i].reason);
    RankDecision r{static_cast<int>(i * 3), decisions[i]};
    auto back = DecodeDecision(EncodeDecision(r));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    const ClcDecision& a = r.decision;
    const ClcDecision& b = back->decision;
    EXPECT_EQ(back->node, r.node);
    EXPECT_EQ(b.placement, a.placement);
    EXPECT_EQ(b.preferred, a.preferred);
    EXPECT_EQ(b.rule, a.rule);
    EXPECT_EQ(b.forced, a.forced);
    EXPECT_EQ(b.lifetime_checked, a.lifetime_checked);
    EXPECT_EQ(b.slowdown_checked, a.slowdown_checked);
    EXPECT_EQ(b.size_checked, a.size_checked);
    EXPECT_EQ(b.lifetime_ok, a.lifetime_ok);
    EXPECT_EQ(b.slowdown_ok, a.slowdown_ok);
    EXPECT_EQ(b.fits, a.fits);
    EXPECT_EQ(b.checkpoint_number, a.checkpoint_number);
    EXPECT_EQ(b.period, a.period);
    EXPECT_EQ(b.checkpoint_bytes, a.checkpoint_bytes);
    EXPECT_EQ(b.memory_capacity, a.memory_capacity);
    EXPECT_EQ(b.size_limit, a.size_limit);
    // Bit for bit, infinity included.
    EXPECT_EQ(std::memcmp(&b.slowdown, &a.slowdown, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&b.slowdown_bound, &a.slowdown_bound, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&b.expected_lifetime_seconds, &a.expected_lifetime_seconds, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&b.estimated_lifetime_seconds, &a.estimated_lifetime_seconds, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&b.bandwidth, &a.bandwidth, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&b.measured_bandwidth, &a.measured_bandwidth, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&b.lookahead_bytes, &a.lookahead_bytes, sizeof(double)), 0);
    EXPECT_EQ(b.reason, a.reason);
  }
}

TEST(ClcWireTest, RejectsWhatIsNotADecision) {
  ClcWire good = EncodeDecision({1, Sample(Placement::kSsd)});
  ASSERT_TRUE(DecodeDecision(good).ok());
  ClcWire zero{};
  EXPECT_EQ(DecodeDecision(zero).status().code(), Code::kCorrupt);
  // Every single-bit change of the header is caught or decodes to a
  // different but valid decision; none crashes. Bits of magic and version
  // and the unused bits must all be caught.
  for (int bit = 0; bit < 64; ++bit) {
    ClcWire w = good;
    w[0] ^= int64_t{1} << bit;
    auto d = DecodeDecision(w);
    if (bit >= 15) {
      EXPECT_FALSE(d.ok()) << "bit " << bit;
    }
  }
  // B_SSD is infinite when the wear is unknown (no ledger): the SSD counts
  // as wearing. That must travel.
  ClcDecision unknown = Sample(Placement::kMemory);
  unknown.bandwidth = kInf;
  unknown.estimated_lifetime_seconds = 0;
  auto travelled = DecodeDecision(EncodeDecision({0, unknown}));
  ASSERT_TRUE(travelled.ok()) << travelled.status().ToString();
  EXPECT_TRUE(std::isinf(travelled->decision.bandwidth));
  ClcWire neg_node = good;
  neg_node[1] = -1;
  EXPECT_FALSE(DecodeDecision(neg_node).ok());
  ClcWire nan_slowdown = good;
  nan_slowdown[7] = std::bit_cast<int64_t>(std::nan(""));
  EXPECT_FALSE(DecodeDecision(nan_slowdown).ok());
  ClcWire big_slowdown = good;
  big_slowdown[7] = std::bit_cast<int64_t>(1.5);
  EXPECT_FALSE(DecodeDecision(big_slowdown).ok());
  ClcWire neg_bandwidth = good;
  neg_bandwidth[11] = std::bit_cast<int64_t>(-1.0);
  EXPECT_FALSE(DecodeDecision(neg_bandwidth).ok());
  ClcWire skip_from_ssd = good;  // placement skip (2) with preferred ssd (1)
  skip_from_ssd[0] = (skip_from_ssd[0] & ~int64_t{15}) | 2 | (1 << 2);
  EXPECT_FALSE(DecodeDecision(skip_from_ssd).ok());
  ClcWire bad_rule = good;
  bad_rule[0] = (bad_rule[0] & ~int64_t{0xf0}) | (int64_t{kClcRules} << 4);
  EXPECT_FALSE(DecodeDecision(bad_rule).ok());
}

TEST(ClcWireTest, DecodeGatheredTransposesAllgatherResults) {
  // Three ranks; the engine gathers word w of every rank in gathered[w].
  std::vector<RankDecision> ranks = {{0, Sample(Placement::kSsd)},
                                     {1, Sample(Placement::kMemory)},
                                     {1, Sample(Placement::kSkip)}};
  std::array<std::vector<int64_t>, kClcWireWords> gathered;
  for (const auto& r : ranks) {
    ClcWire w = EncodeDecision(r);
    for (int i = 0; i < kClcWireWords; ++i) gathered[i].push_back(w[i]);
  }
  auto back = DecodeGathered(gathered);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ((*back)[r].node, ranks[r].node);
    EXPECT_EQ((*back)[r].decision.reason, ranks[r].decision.reason);
  }
  auto bad = gathered;
  bad[0][2] = 0;
  auto err = DecodeGathered(bad);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), Code::kCorrupt);
  EXPECT_NE(err.status().message().find("rank 2"), std::string::npos) << err.status().ToString();
  bad = gathered;
  bad[5].pop_back();
  EXPECT_EQ(DecodeGathered(bad).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DecodeGathered({}).status().code(), Code::kInvalidArgument);
}

// -------------------------------------------------------------- collective --

// One rank's local view, from the knobs that make ranks disagree.
struct RankView {
  int node;
  double bandwidth;  // its node's B_SSD as it read it (50 ok, 200 wearing)
  double t_chk;      // of 10 s (1 ok, 2 over the bound)
  uint64_t bytes;    // capacity 800 per node, 8 ranks... see below
  bool force = false;
};

// capacity 0 stands for kNoMemoryLimit.
std::vector<RankDecision> Decide(const std::vector<RankView>& views, const ClcSettings& s,
                                 int ranks_per_node, uint64_t capacity) {
  std::vector<RankDecision> out;
  for (const auto& v : views) {
    ClcInput in;
    in.checkpoint_number = 5;
    in.force_ssd = v.force;
    in.checkpoint_bytes = v.bytes;
    in.memory_capacity = capacity == 0 ? kNoMemoryLimit : capacity;
    in.ranks_on_node = ranks_per_node;
    in.wear = {1000, 0, 10, v.bandwidth};
    in.checkpoint_seconds = v.t_chk;
    in.compute_seconds = 10 - v.t_chk;
    // Through the wire, as the engine does after its Allgather.
    auto decoded = DecodeDecision(EncodeDecision({v.node, DecidePlacement(s, in)}));
    EXPECT_TRUE(decoded.ok());
    out.push_back(*decoded);
  }
  return out;
}

struct CombineCase {
  const char* name;
  std::vector<RankView> views;  // 2 nodes x 2 ranks, capacity 200 per node
  bool size = true;
  Placement placement;
  ClcRule rule;
  std::vector<int> nodes_wearing, ranks_over_bound, nodes_not_fitting;
};

TEST(ClcCollectiveTest, RanksThatDisagreeGetOneAnswer) {
  using P = Placement;
  using R = ClcRule;
  const CombineCase cases[] = {
      {"all ranks allow the SSD",
       {{0, 50, 1, 100}, {0, 50, 1, 100}, {1, 50, 1, 100}, {1, 50, 1, 100}}, true,
       P::kSsd, R::kWithinLimits, {}, {}, {}},
      {"node 1's SSD wears too fast: memory everywhere",
       {{0, 50, 1, 100}, {0, 50, 1, 100}, {1, 200, 1, 100}, {1, 200, 1, 100}}, true,
       P::kMemory, R::kLifetime, {1}, {}, {}},
      {"ranks of node 0 read its ledger at different moments",
       {{0, 50, 1, 100}, {0, 200, 1, 100}, {1, 50, 1, 100}, {1, 50, 1, 100}}, true,
       P::kMemory, R::kLifetime, {0}, {}, {}},
      {"one rank over the slowdown bound",
       {{0, 50, 1, 100}, {0, 50, 1, 100}, {1, 50, 1, 100}, {1, 50, 2, 100}}, true,
       P::kMemory, R::kSlowdown, {}, {3}, {}},
      {"lifetime is reported before slowdown",
       {{0, 50, 2, 100}, {0, 50, 1, 100}, {1, 200, 1, 100}, {1, 50, 1, 100}}, true,
       P::kMemory, R::kLifetime, {1}, {0}, {}},
      {"one forced rank forces the version",
       {{0, 200, 2, 100}, {0, 200, 2, 100}, {1, 200, 2, 100, true}, {1, 200, 2, 100}}, true,
       P::kSsd, R::kForcedFlag, {0, 1}, {0, 1, 2, 3}, {}},
      {"memory wanted, node 1 cannot hold its ranks' sum: all skip",
       {{0, 200, 1, 100}, {0, 200, 1, 100}, {1, 200, 1, 150}, {1, 200, 1, 100}}, true,
       P::kSkip, R::kLifetime, {0, 1}, {}, {1}},
      {"rank 2 alone would skip (150 > 200 / 2) but node 1's sum fits",
       {{0, 200, 1, 100}, {0, 200, 1, 100}, {1, 200, 1, 150}, {1, 200, 1, 50}}, true,
       P::kMemory, R::kLifetime, {0, 1}, {}, {}},
      {"memory on one node only, the other rank's node cannot hold it",
       {{0, 50, 1, 100}, {0, 50, 1, 100}, {1, 200, 1, 300}, {1, 50, 1, 100}}, true,
       P::kSkip, R::kLifetime, {1}, {}, {1}},
      {"SSD by consensus: size does not matter",
       {{0, 50, 1, 100}, {0, 50, 1, 100}, {1, 50, 1, 900}, {1, 50, 1, 900}}, true,
       P::kSsd, R::kWithinLimits, {}, {}, {1}},
      {"size test off: too big stays in memory",
       {{0, 200, 1, 100}, {0, 200, 1, 100}, {1, 200, 1, 900}, {1, 200, 1, 100}}, false,
       P::kMemory, R::kLifetime, {0, 1}, {}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ClcSettings s;
    s.size = c.size;
    auto ranks = Decide(c.views, s, 2, 200);
    auto combined = CombineDecisions(ranks);
    ASSERT_TRUE(combined.ok()) << combined.status().ToString();
    EXPECT_EQ(combined->placement, c.placement) << combined->reason;
    EXPECT_EQ(combined->rule, c.rule) << combined->reason;
    EXPECT_EQ(combined->nodes_wearing, c.nodes_wearing) << combined->reason;
    EXPECT_EQ(combined->ranks_over_bound, c.ranks_over_bound) << combined->reason;
    EXPECT_EQ(combined->nodes_not_fitting, c.nodes_not_fitting) << combined->reason;
    EXPECT_EQ(combined->skipped_for_size, c.placement == Placement::kSkip);
    EXPECT_EQ(combined->ranks, 4);
    EXPECT_EQ(combined->nodes, 2);
    EXPECT_EQ(combined->reason.rfind(PlacementName(c.placement), 0), 0u) << combined->reason;
    // The rule is a function of the gathered list, so every rank computing
    // it on its own gets this same answer; and in any order of the inputs.
    std::vector<RankDecision> reversed(ranks.rbegin(), ranks.rend());
    auto again = CombineDecisions(reversed);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->placement, combined->placement);
  }
}

TEST(ClcCollectiveTest, WorstNodeAndMaxSlowdown) {
  ClcSettings s;
  auto ranks = Decide({{0, 50, 0.5, 10}, {1, 200, 1.5, 10}, {2, 100, 1, 10}}, s, 1, 0);
  auto c = CombineDecisions(ranks);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->worst_node, 1);
  EXPECT_DOUBLE_EQ(c->worst_estimated_lifetime_seconds, 5);  // 1000 / 200
  EXPECT_DOUBLE_EQ(c->worst_expected_lifetime_seconds, 10);
  EXPECT_DOUBLE_EQ(c->max_slowdown, 0.15);
  EXPECT_EQ(c->nodes_wearing, (std::vector<int>{1, 2}));
  EXPECT_EQ(c->ranks_over_bound, (std::vector<int>{1}));
  EXPECT_EQ(c->ranks_preferring_ssd, 1);
  EXPECT_NE(c->reason.find("node(s) 1, 2"), std::string::npos) << c->reason;
}

TEST(ClcCollectiveTest, FixedPoliciesCombineTrivially) {
  for (auto [policy, placement] : {std::pair{PlacementPolicy::kMemory, Placement::kMemory},
                                   std::pair{PlacementPolicy::kSsd, Placement::kSsd}}) {
    ClcSettings s;
    s.policy = policy;
    auto c = CombineDecisions(Decide({{0, 200, 2, 900}, {1, 50, 1, 10}}, s, 1, 100));
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->placement, placement) << c->reason;
  }
}

TEST(ClcCollectiveTest, BadInput) {
  EXPECT_EQ(CombineDecisions({}).status().code(), Code::kInvalidArgument);
  RankDecision r{-1, Sample(Placement::kSsd)};
  EXPECT_EQ(CombineDecisions({r}).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cairn
