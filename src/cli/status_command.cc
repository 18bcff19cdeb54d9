// cairn status: per node, how much Cairn has written to the SSD (the wear
// ledger), how long the SSD lasts at the current rate against its warranty
// (Eq. 1, 2 of the CLC), and where the Checkpoint Location Controller put the
// checkpoints — memory, ssd or skipped — in the latest run and over all runs
// (the placement history, runtime/placement_history.h), with the slowdown it
// measured last. The rate, its source, the lifetimes and the verdicts are
// the ones the controller's last decision used, read from the history, not
// measured again here: status says what the controller saw. A verdict (the
// lifetime pace, the slowdown bound) is shown only where the decision's
// policy applied it. docs/clc.md "Status" describes every field.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/plot.h"
#include "cli/store_commands.h"
#include "env/device.h"
#include "base/json.h"
#include "policy/clc.h"
#include "runtime/catalog.h"
#include "storage/tier_path.h"
#include "runtime/placement_history.h"
#include "storage/wear_ledger.h"

namespace cairn {
namespace {

// Checkpoint calls of one run, or of all runs, by where they went.
struct Split {
  int runs = 0;
  int64_t calls = 0;
  int64_t memory = 0;
  int64_t ssd = 0;
  int64_t skip = 0;
  int64_t other = 0;  // a placement this version of cairn does not know

  void Add(const PlacementRecord& r) {
    ++calls;
    if (r.placement == "memory") {
      ++memory;
    } else if (r.placement == "ssd") {
      ++ssd;
    } else if (r.placement == "skip") {
      ++skip;
    } else {
      ++other;
    }
  }
};

// The B_SSD shown, with the lifetimes at that rate and the verdict on them.
struct RateView {
  double bps = 0;             // B_SSD, bytes/s; +inf when the engine had no reading
  std::string source;         // WearSourceName, "none", or "ledger" for the fallback
  double time = 0;            // the decision's wall time (or the ledger's last sample)
  std::string policy;         // the decision's (or, without one, the configured) policy
  LifetimeEstimate life;
  // L_estimated > L_expected, when the lifetime test decided placements;
  // nullopt when the policy did not apply it.
  std::optional<bool> pace_ok;
};

struct NodeStatus {
  std::string node;
  std::string root;        // the node's ssd tier directory
  std::string ledger_dir;
  WearLedgerSnapshot ledger;
  std::vector<PlacementRecord> history;
  std::vector<std::string> problems;
  bool failed = false;     // a ledger or history that exists could not be read

  SsdWear wear;            // PBW_used now, from the ledger
  RateView rate;

  Split latest;
  Split overall;
  const PlacementRecord* last() const { return history.empty() ? nullptr : &history.back(); }
  bool has_data() const { return !history.empty() || !ledger.writers.empty(); }
};

// Whether a record's decision applied each test. A record from before the
// policy was recorded (policy "") says both were, as status showed them then.
bool LifetimeTestApplied(const PlacementRecord& r) {
  return (r.policy.empty() || r.policy == "clc") && r.lifetime_checked;
}
bool SlowdownTestApplied(const PlacementRecord& r) {
  return (r.policy.empty() || r.policy == "clc") && r.slowdown_checked;
}

// What the controller used at its last decision on this node.
RateView RateFromRecord(const PlacementRecord& r) {
  RateView v;
  v.bps = r.bandwidth;
  v.source = r.wear_source;
  v.time = r.time;
  v.policy = r.policy;
  v.life.expected_seconds = r.expected_lifetime_seconds;
  v.life.estimated_seconds = r.estimated_lifetime_seconds;
  if (LifetimeTestApplied(r)) v.pace_ok = v.life.estimated_seconds > v.life.expected_seconds;
  return v;
}

// Without a history no decision was made: B_SSD from the ledger over its
// life (or the configured window before its last sample), as the
// controller would measure it, and the verdict only if the configured
// policy applies the lifetime test.
RateView RateFromLedger(const WearLedgerSnapshot& ledger, const Config& config) {
  RateView v;
  v.source = "ledger";
  v.policy = PlacementPolicyName(config.placement.policy);
  for (const WearWriterState& w : ledger.writers) {
    if (!w.series.empty()) v.time = std::max(v.time, w.series.back().time);
  }
  WearReading reading;
  reading.ledger_bytes = ledger.bytes;
  if (v.time > 0) reading.bandwidth = ledger.Bandwidth(v.time, config.placement.bandwidth_window, 0);
  v.bps = reading.bandwidth;
  v.life = EstimateLifetime(MakeSsdWear(config.ssd_endurance(), reading));
  if (config.placement.policy == PlacementPolicy::kClc && config.placement.lifetime) {
    v.pace_ok = v.life.estimated_seconds > v.life.expected_seconds;
  }
  return v;
}

// The latest run's and all runs' splits. One run's records are contiguous:
// its node's first rank appends them.
void CountPlacements(NodeStatus& n) {
  const PlacementRecord* last = n.last();
  if (last == nullptr) return;
  double previous_start = std::nan("");
  for (const PlacementRecord& r : n.history) {
    if (r.run_start != previous_start) ++n.overall.runs;
    previous_start = r.run_start;
    n.overall.Add(r);
    if (r.run_start == last->run_start) n.latest.Add(r);
  }
  n.latest.runs = 1;
}

std::string Utc(double seconds) {
  time_t t = static_cast<time_t>(seconds);
  struct tm tm;
  char text[32] = "?";
  if (::gmtime_r(&t, &tm) != nullptr) std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%SZ", &tm);
  return text;
}

std::string Years(double seconds) {
  if (std::isinf(seconds)) return "infinite";
  return fmt::format("{:.2f} y", seconds / kSecondsPerYear);
}

std::string Percent(int64_t part, int64_t whole) {
  return whole == 0 ? "-" : fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) /
                                                       static_cast<double>(whole));
}

std::string Rate(double bps) {
  return std::isfinite(bps) ? fmt::format("{:.2f} MB/s", bps / 1e6) : std::string("unknown");
}

// JSON has no infinity: null.
Json FiniteOrNull(double d) { return std::isfinite(d) ? Json(d) : Json(); }

// Reads one node's ledger and history and derives the figures.
NodeStatus ReadNode(Env* env, const Config& config, const NodeTier& nt) {
  NodeStatus n;
  n.node = nt.node;
  n.root = nt.tier->root();
  // The engine's choice of ledger directory: the device of the tier root,
  // or dev-unknown when it cannot be determined.
  auto device = DeviceOf(n.root);
  n.ledger_dir = WearLedgerDir(n.root, device.ok() ? std::optional(*device) : std::nullopt);
  auto ledger = ReadWearLedger(env, n.ledger_dir);
  if (ledger.ok()) {
    n.ledger = std::move(ledger).value();
    n.problems.insert(n.problems.end(), n.ledger.problems.begin(), n.ledger.problems.end());
  } else {
    n.failed = true;
    n.problems.push_back("wear ledger: " + ledger.status().ToString());
  }
  auto history = ReadPlacementHistory(env, n.root);
  if (history.ok()) {
    n.history = std::move(history).value();
  } else if (history.status().code() != Code::kNotFound) {
    n.failed = true;
    n.problems.push_back("placement history: " + history.status().ToString());
  }
  CountPlacements(n);
  WearReading now;
  now.ledger_bytes = n.ledger.bytes;
  n.wear = MakeSsdWear(config.ssd_endurance(), now);
  n.rate = n.last() ? RateFromRecord(*n.last()) : RateFromLedger(n.ledger, config);
  return n;
}

Json SplitJson(const Split& s) {
  Json v = Json::object();
  v["runs"] = s.runs;
  v["checkpoints"] = s.calls;
  v["memory"] = s.memory;
  v["ssd"] = s.ssd;
  v["skip"] = s.skip;
  if (s.other > 0) v["other"] = s.other;
  return v;
}

Json NodeJson(const NodeStatus& n) {
  Json v = Json::object();
  v["node"] = n.node;
  v["ssd_root"] = n.root;
  v["ledger_dir"] = n.ledger_dir;
  v["ledger_bytes"] = n.ledger.bytes;
  v["ssd_bytes_used"] = n.wear.used_bytes;
  v["ssd_rating_bytes"] = n.wear.rating_bytes;
  v["warranty_s"] = n.wear.warranty_seconds;
  v["rate_bps"] = FiniteOrNull(n.rate.bps);  // null: the engine had no reading
  v["wear_source"] = n.rate.source;
  v["rate_time"] = n.rate.time;
  v["expected_lifetime_s"] = n.rate.life.expected_seconds;
  // null: an SSD that is not being written.
  v["estimated_lifetime_s"] = FiniteOrNull(n.rate.life.estimated_seconds);
  // null: the policy did not apply the lifetime test.
  v["wearing_too_fast"] = n.rate.pace_ok ? Json(!*n.rate.pace_ok) : Json();
  const PlacementRecord* last = n.last();
  v["policy"] = last && !last->policy.empty() ? Json(last->policy) : Json();
  v["latest_run_start"] = last ? Json(last->run_start) : Json();
  v["latest_run"] = SplitJson(n.latest);
  v["overall"] = SplitJson(n.overall);
  v["slowdown"] = last ? Json(last->slowdown) : Json();
  v["slowdown_bound"] = last && SlowdownTestApplied(*last) ? Json(last->slowdown_bound) : Json();
  v["last_rule"] = last ? Json(last->rule) : Json();
  Json problems = Json::array();
  for (const std::string& p : n.problems) problems.emplace_back(p);
  v["problems"] = std::move(problems);
  return v;
}

// "ok" / "too fast", or why there is no verdict.
std::string PaceText(const NodeStatus& n) {
  if (n.rate.pace_ok) return *n.rate.pace_ok ? "ok" : "too fast";
  const std::string& policy = n.rate.policy;
  return policy.empty() || policy == "clc" ? "- (test off)" : "- (policy " + policy + ")";
}

void PrintText(const std::vector<NodeStatus>& nodes, const Config& config) {
  const SsdEndurance e = config.ssd_endurance();
  std::printf(
      "SSD endurance %s PBW, warranty %s, written before Cairn %s; rate, lifetimes and pace as "
      "the controller's last decision saw them (placement history; without one, the ledger's)\n\n",
      fmt::format("{:g}", e.rating_bytes / 1e15).c_str(), Years(e.warranty_seconds).c_str(),
      HumanBytes(static_cast<uint64_t>(e.already_written_bytes)).c_str());
  Table wear({"NODE", "WRITTEN BY CAIRN", "RATED LIFE USED", "RATE", "LIFETIME AT RATE",
              "EXPECTED", "PACE", "RATE FROM"});
  Table placement({"NODE", "RUN", "CALLS", "MEMORY", "SSD", "SKIPPED", "SLOWDOWN", "BOUND",
                   "LAST RULE"});
  for (const NodeStatus& n : nodes) {
    const PlacementRecord* last = n.last();
    wear.Add({n.node, HumanBytes(n.ledger.bytes),
              fmt::format("{:.3g} %", 100 * n.wear.used_bytes / n.wear.rating_bytes),
              Rate(n.rate.bps), Years(n.rate.life.estimated_seconds),
              Years(n.rate.life.expected_seconds), PaceText(n), n.rate.source});
    auto row = [&](const std::string& runs, const Split& s, bool with_last) {
      const bool bound = with_last && last && SlowdownTestApplied(*last);
      placement.Add({n.node, runs, std::to_string(s.calls), Percent(s.memory, s.calls),
                     Percent(s.ssd, s.calls), Percent(s.skip, s.calls),
                     with_last && last ? fmt::format("{:.1f} %", 100 * last->slowdown) : "",
                     bound ? fmt::format("{:g} %", 100 * last->slowdown_bound)
                           : with_last && last ? "-" : "",
                     with_last && last ? last->rule : ""});
    };
    if (last) {
      row("latest, " + Utc(last->run_start), n.latest, true);
      row(fmt::format("all {} run{}", n.overall.runs, n.overall.runs == 1 ? "" : "s"), n.overall,
          false);
    }
  }
  std::puts("SSD wear");
  wear.Print();
  std::puts("\nCheckpoint placement");
  if (placement.empty()) {
    std::puts("no placement history yet (written by runs with the ssd tier enabled)");
  } else {
    placement.Print();
  }
  for (const NodeStatus& n : nodes) {
    for (const std::string& p : n.problems) {
      std::printf("note: node %s: %s\n", n.node.c_str(), p.c_str());
    }
  }
}

// The data of the figure (scripts/cairn_plot.py, kind "status").
Json PlotData(const std::vector<NodeStatus>& nodes, const Config& config) {
  Json out = Json::array();
  for (const NodeStatus& n : nodes) {
    Json time = Json::array(), run_start = Json::array(), expected = Json::array(),
         estimated = Json::array(), placement = Json::array(), ledger_time = Json::array(),
         ledger_bytes = Json::array();
    for (const PlacementRecord& r : n.history) {
      time.emplace_back(r.time);
      run_start.emplace_back(r.run_start);
      expected.emplace_back(r.expected_lifetime_seconds / kSecondsPerYear);
      if (std::isfinite(r.estimated_lifetime_seconds)) {
        estimated.emplace_back(r.estimated_lifetime_seconds / kSecondsPerYear);
      } else {
        estimated.emplace_back();  // null: not being written, infinite
      }
      placement.emplace_back(r.placement);
    }
    // A writer's count is exactly 0 before its first sample.
    std::vector<WearSample> series = n.ledger.Series();
    if (!series.empty() && n.ledger.created > 0 && n.ledger.created < series.front().time) {
      series.insert(series.begin(), WearSample{n.ledger.created, 0});
    }
    for (const WearSample& s : series) {
      ledger_time.emplace_back(s.time);
      ledger_bytes.emplace_back(s.bytes);
    }
    Json v = Json::object();
    v["node"] = n.node;
    v["time"] = std::move(time);
    v["run_start"] = std::move(run_start);
    v["expected_years"] = std::move(expected);
    v["estimated_years"] = std::move(estimated);
    v["placement"] = std::move(placement);
    v["ledger_time"] = std::move(ledger_time);
    v["ledger_bytes"] = std::move(ledger_bytes);
    out.push_back(std::move(v));
  }
  Json data = Json::object();
  data["kind"] = "status";
  data["title"] = fmt::format("cairn status: {} (SSD tier, {} node{})", config.dir, nodes.size(),
                              nodes.size() == 1 ? "" : "s");
  data["warranty_years"] = config.ssd_endurance().warranty_seconds / kSecondsPerYear;
  data["nodes"] = std::move(out);
  return data;
}

}  // namespace

int RunStatus(const std::string& config_path, bool json, const std::string& plot) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "cairn status: %s\n", config.status().ToString().c_str());
    return 2;
  }
  if (!config->tier(TierKind::kSsd).enabled) {
    std::fprintf(stderr, "cairn status: the ssd tier is disabled in the configuration: no SSD "
                         "wear or placement history to show\n");
    return 0;
  }
  Env* env = PosixEnv();
  auto node_tiers = OpenAllNodeTiers(env, *config, TierKind::kSsd);
  if (!node_tiers.ok()) {
    std::fprintf(stderr, "cairn status: %s\n", node_tiers.status().ToString().c_str());
    return 1;
  }
  std::vector<NodeStatus> nodes;
  bool failed = false;
  for (const NodeTier& nt : *node_tiers) {
    NodeStatus n = ReadNode(env, *config, nt);
    failed = failed || n.failed;
    if (n.has_data() || n.failed) nodes.push_back(std::move(n));
  }
  if (nodes.empty()) {
    const std::string& pattern = config->tier(TierKind::kSsd).path;
    auto where = ExpandTierPath(env, pattern, config->dir, "*");
    std::fprintf(stderr, "cairn status: nothing recorded yet under %s: no wear ledger or "
                         "placement history on any node's ssd tier\n",
                 (where.ok() ? *where : pattern).c_str());
    return plot.empty() ? 0 : 1;
  }
  if (json) {
    for (const NodeStatus& n : nodes) std::puts(NodeJson(n).dump().c_str());
  } else {
    PrintText(nodes, *config);
  }
  std::fflush(stdout);
  if (!plot.empty()) {
    Status drawn = DrawPlot(PlotData(nodes, *config), plot);
    if (!drawn.ok()) {
      std::fprintf(stderr, "cairn status: --plot %s: %s\n", plot.c_str(), drawn.ToString().c_str());
      return 1;
    }
    if (!json) std::printf("wrote %s\n", plot.c_str());
  }
  return failed ? 1 : 0;
}

}  // namespace cairn
