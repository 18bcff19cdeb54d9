#include "policy/clc.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace cairn {
namespace {

constexpr int64_t kWireMagic = 0x434C43;  // "CLC"
constexpr int64_t kWireVersion = 2;  // 2: the look-ahead's words 12, 13
constexpr int kWireFlagBits = 7;

std::string Years(double seconds) {
  if (std::isinf(seconds)) return "infinite";
  return fmt::format("{:.2f} y", seconds / kSecondsPerYear);
}

std::string Percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

// Decimal units, as SSD ratings and the paper use them.
std::string Bytes(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.2f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

std::string BytesPerSecond(double rate) { return Bytes(rate) + "/s"; }

// "0, 3, 7" (at most 8 shown).
std::string List(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < 8; ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 8) out += fmt::format(" and {} more", v.size() - 8);
  return out;
}

std::string LifetimeClause(const ClcDecision& d) {
  std::string clause =
      fmt::format("L_estimated {} {} L_expected {} at B_SSD {}", Years(d.estimated_lifetime_seconds),
                  d.lifetime_ok ? ">" : "<=", Years(d.expected_lifetime_seconds),
                  BytesPerSecond(d.bandwidth));
  if (d.bandwidth != d.measured_bandwidth) {
    clause += fmt::format(" with this checkpoint's {} (measured {})", Bytes(d.lookahead_bytes),
                          BytesPerSecond(d.measured_bandwidth));
  }
  return clause;
}

std::string SlowdownClause(const ClcDecision& d) {
  return fmt::format("slowdown {} {} bound {}", Percent(d.slowdown), d.slowdown_ok ? "<=" : ">",
                     Percent(d.slowdown_bound));
}

int64_t Bits(double v) { return std::bit_cast<int64_t>(v); }
double Double(int64_t v) { return std::bit_cast<double>(v); }

}  // namespace

Result<PlacementPolicy> ParsePlacementPolicy(const std::string& name) {
  for (auto p : {PlacementPolicy::kClc, PlacementPolicy::kMemory, PlacementPolicy::kSsd,
                 PlacementPolicy::kRatio}) {
    if (name == PlacementPolicyName(p)) return p;
  }
  return Error(Code::kInvalidArgument,
               "placement policy '{}' is not one of \"clc\", \"memory\", \"ssd\", \"ratio\"", name);
}

const char* PlacementName(Placement placement) {
  switch (placement) {
    case Placement::kMemory: return "memory";
    case Placement::kSsd: return "ssd";
    case Placement::kSkip: return "skip";
  }
  return "?";
}

const char* ClcRuleName(ClcRule rule) {
  switch (rule) {
    case ClcRule::kForcedEvery: return "forced-every";
    case ClcRule::kForcedFlag: return "forced-flag";
    case ClcRule::kFixedMemory: return "policy-memory";
    case ClcRule::kFixedSsd: return "policy-ssd";
    case ClcRule::kRatio: return "ratio";
    case ClcRule::kLifetime: return "lifetime";
    case ClcRule::kSlowdown: return "slowdown";
    case ClcRule::kWithinLimits: return "within-limits";
  }
  return "?";
}

SsdWear MakeSsdWear(const SsdEndurance& endurance, const WearReading& reading) {
  SsdWear wear;
  wear.rating_bytes = endurance.rating_bytes;
  wear.warranty_seconds = endurance.warranty_seconds;
  wear.used_bytes = endurance.already_written_bytes + static_cast<double>(reading.ledger_bytes);
  wear.bandwidth = reading.bandwidth;
  // WearLedgerSnapshot::Bandwidth counts a span as at least 1 s; so does
  // the look-ahead, so that both divide by the same time.
  wear.span_seconds = std::max(reading.time - reading.span_start, 1.0);
  return wear;
}

SsdWear ProjectWear(const SsdWear& wear, double added_bytes) {
  if (!(wear.span_seconds > 0)) return wear;
  SsdWear after = wear;
  after.used_bytes += added_bytes;
  after.bandwidth = (wear.bandwidth + added_bytes / wear.span_seconds) * (1 + kLifetimeMargin);
  return after;
}

LifetimeEstimate EstimateLifetime(const SsdWear& wear) {
  LifetimeEstimate e;
  double remaining = wear.rating_bytes - wear.used_bytes;
  if (!(remaining > 0) || !(wear.rating_bytes > 0)) return e;  // worn out: no life left
  e.expected_seconds = remaining * wear.warranty_seconds / wear.rating_bytes;
  e.estimated_seconds =
      wear.bandwidth > 0 ? remaining / wear.bandwidth : std::numeric_limits<double>::infinity();
  return e;
}

double SlowdownFraction(double checkpoint_seconds, double compute_seconds) {
  double total = checkpoint_seconds + compute_seconds;
  return total > 0 ? checkpoint_seconds / total : 0.0;
}

ClcDecision DecidePlacement(const ClcSettings& settings, const ClcInput& input) {
  ClcDecision d;
  d.checkpoint_number = input.checkpoint_number;
  d.checkpoint_bytes = input.checkpoint_bytes;
  d.memory_capacity = input.memory_capacity;
  d.slowdown_bound = settings.slowdown_bound;
  d.measured_bandwidth = input.wear.bandwidth;

  // Lines 2-3: both estimates, computed whatever the switches say so that
  // every decision reports them. The lifetime is that of the device with
  // this checkpoint on it (kLifetimeMargin says why).
  const int ranks = std::max(input.ranks_on_node, 1);
  d.lookahead_bytes = static_cast<double>(input.checkpoint_bytes) * ranks;
  const SsdWear after = ProjectWear(input.wear, d.lookahead_bytes);
  d.bandwidth = after.bandwidth;
  LifetimeEstimate life = EstimateLifetime(after);
  d.expected_lifetime_seconds = life.expected_seconds;
  d.estimated_lifetime_seconds = life.estimated_seconds;
  d.lifetime_ok = life.estimated_seconds > life.expected_seconds;
  d.slowdown = SlowdownFraction(input.checkpoint_seconds, input.compute_seconds);
  d.slowdown_ok = !(d.slowdown > settings.slowdown_bound);
  // Line 12. Integer division: bytes <= floor(C / n) exactly when
  // bytes <= C / n, so no rounding question arises.
  d.size_limit = input.memory_capacity == kNoMemoryLimit
                     ? kNoMemoryLimit
                     : input.memory_capacity / static_cast<uint64_t>(ranks);
  d.fits = input.checkpoint_bytes <= d.size_limit;

  const bool clc = settings.policy == PlacementPolicy::kClc;
  d.lifetime_checked = clc && settings.lifetime;
  d.slowdown_checked = clc && settings.slowdown;
  d.size_checked = clc && settings.size;

  if (settings.force_ssd_every > 0 && input.checkpoint_number % settings.force_ssd_every == 0) {
    d.forced = true;
    d.rule = ClcRule::kForcedEvery;
    d.period = settings.force_ssd_every;
  } else if (input.force_ssd) {
    d.forced = true;
    d.rule = ClcRule::kForcedFlag;
  }

  if (d.forced) {
    d.preferred = Placement::kSsd;
  } else {
    switch (settings.policy) {
      case PlacementPolicy::kMemory:
        d.preferred = Placement::kMemory;
        d.rule = ClcRule::kFixedMemory;
        break;
      case PlacementPolicy::kSsd:
        d.preferred = Placement::kSsd;
        d.rule = ClcRule::kFixedSsd;
        break;
      case PlacementPolicy::kRatio:
        d.preferred = input.checkpoint_number % settings.ratio == 0 ? Placement::kSsd
                                                                    : Placement::kMemory;
        d.rule = ClcRule::kRatio;
        d.period = settings.ratio;
        break;
      case PlacementPolicy::kClc:
        if (!d.lifetime_checked || d.lifetime_ok) {  // line 4
          d.preferred = Placement::kSsd;             // line 5
          d.rule = ClcRule::kWithinLimits;
          if (d.slowdown_checked && !d.slowdown_ok) {  // line 6
            d.preferred = Placement::kMemory;          // line 7
            d.rule = ClcRule::kSlowdown;
          }
        } else {
          d.preferred = Placement::kMemory;  // line 10
          d.rule = ClcRule::kLifetime;
        }
        break;
    }
  }
  d.placement = d.preferred;
  // Lines 13-14. A forced checkpoint never reaches here with kMemory.
  if (d.size_checked && d.preferred == Placement::kMemory && !d.fits) d.placement = Placement::kSkip;
  d.reason = DescribeDecision(d);
  return d;
}

std::string DescribeDecision(const ClcDecision& d) {
  std::string why;
  switch (d.rule) {
    case ClcRule::kForcedEvery:
      why = fmt::format("forced: checkpoint {} is a multiple of force_ssd_every = {}",
                        d.checkpoint_number, d.period);
      break;
    case ClcRule::kForcedFlag:
      why = "forced by the caller";
      break;
    case ClcRule::kFixedMemory:
      why = "policy memory";
      break;
    case ClcRule::kFixedSsd:
      why = "policy ssd";
      break;
    case ClcRule::kRatio:
      why = fmt::format("policy ratio: checkpoint {} is {}a multiple of {}", d.checkpoint_number,
                        d.preferred == Placement::kSsd ? "" : "not ", d.period);
      break;
    case ClcRule::kLifetime:
      why = "the SSD would wear out before its time: " + LifetimeClause(d);
      break;
    case ClcRule::kSlowdown:
      why = (d.lifetime_checked ? LifetimeClause(d) + ", but " : std::string()) + SlowdownClause(d);
      break;
    case ClcRule::kWithinLimits:
      if (d.lifetime_checked && d.slowdown_checked) {
        why = LifetimeClause(d) + " and " + SlowdownClause(d);
      } else if (d.lifetime_checked) {
        why = LifetimeClause(d) + " (slowdown not checked)";
      } else if (d.slowdown_checked) {
        why = SlowdownClause(d) + " (lifetime not checked)";
      } else {
        why = "neither lifetime nor slowdown checked";
      }
      break;
  }
  if (d.placement == Placement::kSkip) {
    return fmt::format("skip: memory wanted ({}) but {} > memory share {} ({} / node ranks)", why,
                       Bytes(static_cast<double>(d.checkpoint_bytes)),
                       Bytes(static_cast<double>(d.size_limit)),
                       Bytes(static_cast<double>(d.memory_capacity)));
  }
  return std::string(PlacementName(d.placement)) + ": " + why;
}

// ------------------------------------------------------------------- wire --

ClcWire EncodeDecision(const RankDecision& r) {
  const ClcDecision& d = r.decision;
  int64_t flags = (d.forced ? 1 : 0) | (d.lifetime_checked ? 2 : 0) | (d.slowdown_checked ? 4 : 0) |
                  (d.size_checked ? 8 : 0) | (d.lifetime_ok ? 16 : 0) | (d.slowdown_ok ? 32 : 0) |
                  (d.fits ? 64 : 0);
  ClcWire w{};
  w[0] = (kWireMagic << 40) | (kWireVersion << 32) | static_cast<int64_t>(d.placement) |
         (static_cast<int64_t>(d.preferred) << 2) | (static_cast<int64_t>(d.rule) << 4) |
         (flags << 8);
  w[1] = r.node;
  w[2] = d.checkpoint_number;
  w[3] = d.period;
  w[4] = std::bit_cast<int64_t>(d.checkpoint_bytes);
  w[5] = std::bit_cast<int64_t>(d.memory_capacity);
  w[6] = std::bit_cast<int64_t>(d.size_limit);
  w[7] = Bits(d.slowdown);
  w[8] = Bits(d.slowdown_bound);
  w[9] = Bits(d.expected_lifetime_seconds);
  w[10] = Bits(d.estimated_lifetime_seconds);
  w[11] = Bits(d.bandwidth);
  w[12] = Bits(d.measured_bandwidth);
  w[13] = Bits(d.lookahead_bytes);
  return w;
}

Result<RankDecision> DecodeDecision(const ClcWire& w) {
  auto bad = [](const std::string& what) {
    return Status(Code::kCorrupt, "encoded placement decision: " + what);
  };
  if ((w[0] >> 40) != kWireMagic || ((w[0] >> 32) & 0xff) != kWireVersion) {
    return bad(fmt::format("header {:#x} is not a version-{} decision", w[0], kWireVersion));
  }
  int64_t placement = w[0] & 3, preferred = (w[0] >> 2) & 3, rule = (w[0] >> 4) & 15;
  int64_t flags = (w[0] >> 8) & ((1 << kWireFlagBits) - 1);
  if ((w[0] & 0xffffffff) >> (8 + kWireFlagBits) != 0) return bad("unknown flag bits");
  if (placement > 2 || preferred > 1 || rule >= kClcRules) {
    return bad(fmt::format("placement {}, preferred {}, rule {} out of range", placement, preferred, rule));
  }
  if (placement == static_cast<int64_t>(Placement::kSkip) && preferred != 0) {
    return bad("a skip must come from a preference for memory");
  }
  if (w[1] < 0 || w[1] > std::numeric_limits<int>::max()) return bad("node out of range");
  RankDecision r;
  r.node = static_cast<int>(w[1]);
  ClcDecision& d = r.decision;
  d.placement = static_cast<Placement>(placement);
  d.preferred = static_cast<Placement>(preferred);
  d.rule = static_cast<ClcRule>(rule);
  d.forced = flags & 1;
  d.lifetime_checked = flags & 2;
  d.slowdown_checked = flags & 4;
  d.size_checked = flags & 8;
  d.lifetime_ok = flags & 16;
  d.slowdown_ok = flags & 32;
  d.fits = flags & 64;
  d.checkpoint_number = w[2];
  d.period = w[3];
  d.checkpoint_bytes = std::bit_cast<uint64_t>(w[4]);
  d.memory_capacity = std::bit_cast<uint64_t>(w[5]);
  d.size_limit = std::bit_cast<uint64_t>(w[6]);
  d.slowdown = Double(w[7]);
  d.slowdown_bound = Double(w[8]);
  d.expected_lifetime_seconds = Double(w[9]);
  d.estimated_lifetime_seconds = Double(w[10]);
  d.bandwidth = Double(w[11]);
  d.measured_bandwidth = Double(w[12]);
  d.lookahead_bytes = Double(w[13]);
  if (!(d.slowdown >= 0 && d.slowdown <= 1) || !(d.slowdown_bound >= 0 && d.slowdown_bound <= 1) ||
      !(d.expected_lifetime_seconds >= 0) || !(d.estimated_lifetime_seconds >= 0) ||
      !(d.bandwidth >= 0) || !(d.measured_bandwidth >= 0) || !(d.lookahead_bytes >= 0) ||
      std::isinf(d.expected_lifetime_seconds)) {
    return bad("an estimate is negative, NaN or out of range");
  }
  d.reason = DescribeDecision(d);
  return r;
}

Result<std::vector<RankDecision>> DecodeGathered(
    const std::array<std::vector<int64_t>, kClcWireWords>& gathered) {
  const size_t ranks = gathered[0].size();
  if (ranks == 0) return Error(Code::kInvalidArgument, "no gathered placement decisions");
  for (const auto& word : gathered) {
    if (word.size() != ranks) {
      return Error(Code::kInvalidArgument, "gathered decision words differ in length ({} and {})",
                   ranks, word.size());
    }
  }
  std::vector<RankDecision> out;
  out.reserve(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    ClcWire w;
    for (int i = 0; i < kClcWireWords; ++i) w[static_cast<size_t>(i)] = gathered[static_cast<size_t>(i)][r];
    auto d = DecodeDecision(w);
    if (!d.ok()) return d.status().Annotate(fmt::format("rank {}", r));
    out.push_back(std::move(*d));
  }
  return out;
}

// -------------------------------------------------------------- collective --

Result<CollectiveDecision> CombineDecisions(const std::vector<RankDecision>& ranks) {
  if (ranks.empty()) return Error(Code::kInvalidArgument, "no placement decisions to combine");
  struct Node {
    uint64_t bytes = 0;
    uint64_t capacity = kNoMemoryLimit;  // the smallest any of its ranks reported
    bool wearing = false;
    bool seen = false;  // expected/estimated hold the node's worst rank
    double expected = 0;
    double estimated = 0;
  };
  std::map<int, Node> nodes;
  CollectiveDecision c;
  c.ranks = static_cast<int>(ranks.size());
  bool size_checked = false;
  const ClcDecision* first_forced = nullptr;
  // The memory rule to report, by priority: the lifetime rule is the
  // controller's first test, the slowdown rule its second.
  const ClcRule kMemoryRules[] = {ClcRule::kLifetime, ClcRule::kSlowdown, ClcRule::kRatio,
                                  ClcRule::kFixedMemory};
  int memory_rule = static_cast<int>(std::size(kMemoryRules));
  for (size_t i = 0; i < ranks.size(); ++i) {
    const ClcDecision& d = ranks[i].decision;
    if (ranks[i].node < 0) {
      return Error(Code::kInvalidArgument, "rank {} reports node {}", i, ranks[i].node);
    }
    Node& n = nodes[ranks[i].node];
    if (n.bytes > std::numeric_limits<uint64_t>::max() - d.checkpoint_bytes) {
      n.bytes = std::numeric_limits<uint64_t>::max();
    } else {
      n.bytes += d.checkpoint_bytes;
    }
    n.capacity = std::min(n.capacity, d.memory_capacity);
    if (d.lifetime_checked && !d.lifetime_ok) n.wearing = true;
    if (!n.seen || d.estimated_lifetime_seconds < n.estimated) {
      n.seen = true;
      n.estimated = d.estimated_lifetime_seconds;
      n.expected = d.expected_lifetime_seconds;
    }
    if (d.forced) {
      ++c.ranks_forced;
      if (!first_forced) first_forced = &d;
    }
    if (d.preferred == Placement::kSsd) {
      ++c.ranks_preferring_ssd;
    } else {
      for (int k = 0; k < memory_rule; ++k) {
        if (d.rule == kMemoryRules[k]) memory_rule = k;
      }
    }
    if (d.slowdown_checked && !d.slowdown_ok) c.ranks_over_bound.push_back(static_cast<int>(i));
    c.max_slowdown = std::max(c.max_slowdown, d.slowdown);
    size_checked = size_checked || d.size_checked;
  }
  c.nodes = static_cast<int>(nodes.size());
  for (const auto& [id, n] : nodes) {
    if (n.wearing) c.nodes_wearing.push_back(id);
    if (c.worst_node < 0 || n.estimated < c.worst_estimated_lifetime_seconds) {
      c.worst_node = id;
      c.worst_estimated_lifetime_seconds = n.estimated;
      c.worst_expected_lifetime_seconds = n.expected;
    }
    if (size_checked && n.bytes > n.capacity) c.nodes_not_fitting.push_back(id);
  }

  const ClcDecision& first = ranks.front().decision;
  if (first_forced) {
    c.placement = Placement::kSsd;
    c.rule = first_forced->rule;
    c.reason = fmt::format("ssd: forced on {} of {} ranks ({})", c.ranks_forced, c.ranks,
                           first_forced->rule == ClcRule::kForcedEvery
                               ? fmt::format("checkpoint {} is a multiple of force_ssd_every = {}",
                                             first_forced->checkpoint_number, first_forced->period)
                               : std::string("forced by the caller"));
    return c;
  }
  if (c.ranks_preferring_ssd == c.ranks) {
    c.placement = Placement::kSsd;
    c.rule = first.rule;
    c.reason = fmt::format("ssd: all {} ranks on {} nodes prefer the SSD (rank 0: {})", c.ranks,
                           c.nodes, first.reason.substr(first.reason.find(": ") + 2));
    return c;
  }
  c.rule = memory_rule < static_cast<int>(std::size(kMemoryRules)) ? kMemoryRules[memory_rule]
                                                                    : ClcRule::kFixedMemory;
  std::string why;
  switch (c.rule) {
    case ClcRule::kLifetime:
      why = fmt::format("the SSD of node(s) {} would wear out before its time (worst: node {}, "
                        "L_estimated {} <= L_expected {})",
                        List(c.nodes_wearing), c.worst_node, Years(c.worst_estimated_lifetime_seconds),
                        Years(c.worst_expected_lifetime_seconds));
      break;
    case ClcRule::kSlowdown:
      why = fmt::format("slowdown over the bound on rank(s) {} (max {} > {})", List(c.ranks_over_bound),
                        Percent(c.max_slowdown), Percent(first.slowdown_bound));
      break;
    case ClcRule::kRatio:
      why = fmt::format("policy ratio: checkpoint {} is not a multiple of {}", first.checkpoint_number,
                        first.period);
      break;
    default:
      why = "policy memory";
      break;
  }
  if (c.ranks_preferring_ssd > 0) {
    why += fmt::format("; {} of {} ranks preferred the SSD", c.ranks_preferring_ssd, c.ranks);
  }
  if (!c.nodes_not_fitting.empty()) {
    const Node& n = nodes[c.nodes_not_fitting.front()];
    c.placement = Placement::kSkip;
    c.skipped_for_size = true;
    c.reason = fmt::format("skip: memory wanted ({}) but node(s) {} cannot hold the version "
                           "(node {}: {} > capacity {})",
                           why, List(c.nodes_not_fitting), c.nodes_not_fitting.front(),
                           Bytes(static_cast<double>(n.bytes)),
                           Bytes(static_cast<double>(n.capacity)));
    return c;
  }
  c.placement = Placement::kMemory;
  c.reason = "memory: " + why;
  return c;
}

}  // namespace cairn
