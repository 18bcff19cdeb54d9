// Checkpoint Location Controller (CLC): decides, just before each
// checkpoint, whether it goes to the memory tier, to the SSD tier, or is
// skipped — Algorithm 1 of Abeyratne et al., "Checkpointing Exascale Memory
// Systems with Existing Memory Technologies" (MEMSYS 2016), in
// ../shared/papers/hybrid-dram-ssd-clc-ecc.txt, plus the coordination the
// paper leaves out (§3.3.3): every rank gets the same answer for a version.
//
// Everything here is pure: no I/O, no clock. The caller gathers the inputs
// (SSD wear from storage/wear_ledger.h, checkpoint and compute time from
// policy/slowdown.h, sizes and capacities from its tiers) and applies the
// result. docs/clc.md describes the rules, the collective agreement and how
// the engine calls this.
//
// Algorithm 1 (one rank, DecidePlacement):
//   L_estimated, L_expected = lifetime estimation           Eq. (1), (2)
//   T_slowdown = performance estimation                     Eq. (3)
//   if L_estimated > L_expected:   loc = SSD;  if T_slowdown > bound: loc = RAM
//   else:                          loc = RAM
//   size_limit = TMPFS_SIZE / numMPIRanks
//   if loc == RAM and sizeof(D) > size_limit: skip
// with the switches `lifetime`, `slowdown` and `size` removing a test (the
// paper's LE, LE+PLE and LE+PLE+size variants), the fixed policies memory,
// ssd and ratio (every Nth checkpoint to SSD: the paper's "9:1" is N = 10),
// and forced checkpoints (every Nth, or flagged by the caller) that go to
// the SSD whatever the policy says.
//
// Thread-safety: pure functions over values; safe from any thread.
#ifndef CAIRN_POLICY_CLC_H_
#define CAIRN_POLICY_CLC_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "storage/wear_ledger.h"

namespace cairn {

// PlacementPolicy, ClcSettings and SsdEndurance are configuration
// (base/config.h).
// kInvalidArgument names the valid values.
Result<PlacementPolicy> ParsePlacementPolicy(const std::string& name);

enum class Placement : int { kMemory = 0, kSsd = 1, kSkip = 2 };
const char* PlacementName(Placement placement);  // "memory", "ssd", "skip"

// ClcInput::memory_capacity of a memory tier without a capacity.
inline constexpr uint64_t kNoMemoryLimit = UINT64_MAX;

// The lifetime inputs for one decision.
struct SsdWear {
  double rating_bytes = 14.6e15;             // PBW_rating
  double used_bytes = 0;                     // PBW_used
  double warranty_seconds = 5 * kSecondsPerYear;
  double bandwidth = 0;                      // B_SSD, bytes/s, node total
  // The span B_SSD was measured over, seconds (the ledger's span, at least
  // 1 s); 0: unknown, and then the lifetime test cannot look ahead.
  double span_seconds = 0;
};

// PBW_used = already written + the ledger's total; B_SSD as the reading
// chose it (WearReading::bandwidth), over the ledger's span.
SsdWear MakeSsdWear(const SsdEndurance& endurance, const WearReading& reading);

// The lifetime test looks ahead: it asks whether the SSD still lasts its
// warranty once the checkpoint being placed is on it, not whether it did
// before. The paper's test (on B_SSD as measured) lets the rate cross the
// cap and only reacts afterwards, so a run that writes to the SSD whenever
// the test passes ends just over the cap, i.e. just short of the warranty.
// kLifetimeMargin covers what the look-ahead cannot count exactly (the part
// file's metadata, time between the reading and the end of the run):
// the projected rate is raised by it. docs/clc.md derives the guarantee.
inline constexpr double kLifetimeMargin = 0.02;

// The wear once `added_bytes` more are on the device, written within the
// span: PBW_used + added, and B_SSD + added / span raised by
// kLifetimeMargin. With an unknown span the wear is returned unchanged (the
// paper's test). REQUIRES: added_bytes >= 0.
SsdWear ProjectWear(const SsdWear& wear, double added_bytes);

struct LifetimeEstimate {
  double expected_seconds = 0;   // Eq. (1)
  double estimated_seconds = 0;  // Eq. (2)
};

// Eq. (1): L_expected = (PBW_rating - PBW_used) x warranty / PBW_rating.
// Eq. (2): L_estimated = (PBW_rating - PBW_used) / B_SSD.
// A device written beyond its rating has no life left: both are 0. A device
// with life left that is not being written (B_SSD = 0) has an infinite
// L_estimated. REQUIRES: rating_bytes > 0, bandwidth >= 0.
LifetimeEstimate EstimateLifetime(const SsdWear& wear);

// Eq. (3): T_slowdown = T_chk / (T_compute + T_chk); 0 before any time has
// been measured.
double SlowdownFraction(double checkpoint_seconds, double compute_seconds);

// What one rank knows just before a checkpoint.
struct ClcInput {
  // The paper's i: 1 for the first checkpoint call of this run, counting
  // skipped ones. Forced and ratio checkpoints are the multiples of N.
  int64_t checkpoint_number = 1;
  bool force_ssd = false;          // the caller asked for a durable copy
  uint64_t checkpoint_bytes = 0;   // sizeof(D): this rank's bytes
  // TMPFS_SIZE: bytes of the node's memory tier this version may use, or
  // kNoMemoryLimit. docs/clc.md says what the engine passes (the tier's free
  // room before the write).
  uint64_t memory_capacity = kNoMemoryLimit;
  int ranks_on_node = 1;           // numMPIRanks; >= 1
  SsdWear wear;
  double checkpoint_seconds = 0;   // T_chk so far (SlowdownTracker)
  double compute_seconds = 0;      // T_compute so far
};

// Which rule of the controller settled the placement (or, for a skip, why
// memory was wanted).
enum class ClcRule : int {
  kForcedEvery = 0,   // force_ssd_every
  kForcedFlag = 1,    // ClcInput::force_ssd
  kFixedMemory = 2,   // policy memory
  kFixedSsd = 3,      // policy ssd
  kRatio = 4,         // policy ratio
  kLifetime = 5,      // L_estimated <= L_expected: the SSD would wear out early (line 10)
  kSlowdown = 6,      // T_slowdown > bound (line 7)
  kWithinLimits = 7,  // lifetime and slowdown allow the SSD (line 5)
};
inline constexpr int kClcRules = 8;
const char* ClcRuleName(ClcRule rule);

struct ClcDecision {
  Placement placement = Placement::kMemory;
  // loc after lines 2-11 (and the fixed policies): where the checkpoint
  // would go if it fits; kMemory or kSsd, never kSkip.
  Placement preferred = Placement::kMemory;
  ClcRule rule = ClcRule::kFixedMemory;
  bool forced = false;
  // Which tests were part of this decision (policy clc with the switch on).
  bool lifetime_checked = false;
  bool slowdown_checked = false;
  bool size_checked = false;
  // Their outcomes, computed whether or not they were checked.
  bool lifetime_ok = true;   // L_estimated > L_expected
  bool slowdown_ok = true;   // T_slowdown <= bound
  bool fits = true;          // checkpoint_bytes <= size_limit
  // The estimates behind them.
  double expected_lifetime_seconds = 0;
  double estimated_lifetime_seconds = 0;
  // B_SSD the lifetime test used: with this checkpoint written
  // (ProjectWear), and the lifetimes above at that rate.
  double bandwidth = 0;
  double measured_bandwidth = 0;  // B_SSD as read, before the look-ahead
  // Node bytes the look-ahead added: this rank's bytes x ranks on its node
  // (for ranks of unequal size, the largest rank's product over-counts the
  // node, and any rank failing the test speaks for the node: the safe side).
  double lookahead_bytes = 0;
  double slowdown = 0;       // T_slowdown
  double slowdown_bound = 0;
  int64_t checkpoint_number = 0;
  int64_t period = 0;        // N of the force/ratio rule that decided, else 0
  uint64_t checkpoint_bytes = 0;
  uint64_t memory_capacity = kNoMemoryLimit;
  // memory_capacity / ranks_on_node (kNoMemoryLimit when unlimited).
  uint64_t size_limit = kNoMemoryLimit;
  // One line for logs and `cairn status`: the placement, then why.
  std::string reason;
};

// Algorithm 1 for one rank. REQUIRES: settings.Validate().ok().
ClcDecision DecidePlacement(const ClcSettings& settings, const ClcInput& input);

// The `reason` line of a decision, from its fields (Decode uses it too).
std::string DescribeDecision(const ClcDecision& decision);

// ----------------------------------------------------------------------------
// One answer per version.
//
// The paper lets every rank decide alone and warns that this can leave
// checkpoints uncoordinated (§3.3.3): a version some ranks wrote to memory,
// some to the SSD and some skipped. Cairn's engine therefore gathers every
// rank's decision and applies CombineDecisions, the same pure function on
// the same inputs on every rank, so every rank gets the same placement:
//
//  1. Forced wins: if any rank's decision is forced, the version goes to the
//     SSD. (Forcing is by checkpoint number, the same on every rank; a
//     caller's flag should be too, and if it is not, the safe reading of
//     "some rank asked for a durable copy" is to make one.)
//  2. The SSD only by consensus: otherwise the version goes to the SSD only
//     if every rank preferred it (policy ssd, a ratio multiple, or both
//     CLC tests passed). The lifetime test is a property of a node's device
//     (all ranks of a node read one ledger; any of them seeing it wear too
//     fast speaks for the node), and a version cannot go to the SSD on one
//     node and to memory on another, so one node whose SSD would wear out
//     early keeps the version in memory everywhere rather than wearing that
//     node's SSD beyond its warranty. The slowdown test is per rank, and a
//     coordinated checkpoint is as slow as its slowest rank: one rank over
//     the bound is the application over the bound.
//  3. Otherwise memory, sized per node: with the size test on, the version
//     is skipped by every rank if on any node the ranks' checkpoints
//     together exceed that node's memory capacity; a version in memory on
//     some nodes only is not recoverable and would cost time for nothing,
//     and the SSD was ruled out by step 2. Summing a node's ranks (rather
//     than Algorithm 1's per-rank share) lets a node whose ranks differ in
//     size use its memory fully; for equal sizes the two agree.
// A skipped version costs a longer rollback; force_ssd_every bounds it.

struct RankDecision {
  int node = 0;  // the rank's (virtual) node, 0..nodes-1
  ClcDecision decision;
};

inline constexpr int kClcWireWords = 14;
using ClcWire = std::array<int64_t, kClcWireWords>;

// A decision as int64 words for an Allgather (word w of every rank, for w in
// 0..kClcWireWords-1). Doubles travel bit for bit; the reason is rebuilt.
ClcWire EncodeDecision(const RankDecision& decision);
// kCorrupt when the words are not an encoded decision of this version.
Result<RankDecision> DecodeDecision(const ClcWire& wire);
// After one Allgather per word: gathered[w][r] is word w of rank r. Decodes
// every rank's decision (index = rank). kInvalidArgument when the lists
// differ in length or are empty; kCorrupt names the rank whose words do not
// decode.
Result<std::vector<RankDecision>> DecodeGathered(
    const std::array<std::vector<int64_t>, kClcWireWords>& gathered);

struct CollectiveDecision {
  Placement placement = Placement::kMemory;
  // The rule that settled it: forced, consensus for the SSD (the ranks'
  // common rule), or the first of kLifetime, kSlowdown, kRatio, kFixedMemory
  // found among the ranks that wanted memory.
  ClcRule rule = ClcRule::kFixedMemory;
  bool skipped_for_size = false;       // placement == kSkip
  int ranks = 0;
  int nodes = 0;
  int ranks_forced = 0;
  int ranks_preferring_ssd = 0;
  std::vector<int> nodes_wearing;      // some rank saw L_estimated <= L_expected
  std::vector<int> ranks_over_bound;   // T_slowdown > bound
  std::vector<int> nodes_not_fitting;  // sum of checkpoint bytes > memory capacity
  double max_slowdown = 0;
  // The node whose SSD has the least estimated life, and its estimates.
  int worst_node = -1;
  double worst_expected_lifetime_seconds = 0;
  double worst_estimated_lifetime_seconds = 0;
  std::string reason;
};

// Combines the decisions of all ranks (index = rank) by the rule above.
// kInvalidArgument for an empty list or a negative node.
Result<CollectiveDecision> CombineDecisions(const std::vector<RankDecision>& ranks);

}  // namespace cairn

#endif  // CAIRN_POLICY_CLC_H_
