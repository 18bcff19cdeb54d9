// clc_micro — the microbenchmark of the CLC paper (Abeyratne et al., MEMSYS
// 2016, §5.1; Figures 1 and 8-11), driven by Cairn's own Checkpoint Location
// Controller (src/policy/clc.h), wear ledger (src/storage/wear_ledger.h) and
// slowdown tracker (src/policy/slowdown.h).
//
//   clc_micro [--model] [--json] [--sizes 100,200,...] [--policies a,b,...]
//             [--iterations N] [--compute S] [--ranks-per-node N]
//             [--ssd-mbps R] [--pbw P] [--warranty-years Y]
//             [--memory-capacity-gib C] [--memory-gbps G] [--bound B] [--ratio N]
//             [--window S]
//   (--help describes every option)
//
// The benchmark (paper §5.1): every rank computes for 5 s, then writes a
// checkpoint of S MB, 100 times; 8 ranks per node; S from 100 to 1000 MB.
// Before each checkpoint the controller picks memory, SSD or skip. Reported
// per (policy, S): the slowdown against the same run without checkpoints,
// the fraction of checkpoints per tier and skipped, the average interval
// between written checkpoints, and the SSD lifetime projected from the
// bytes the run wrote to the SSD and its runtime (the paper's Figure 9).
//
// Modes. --model (the default, and the only one in this file so far)
// replaces the devices by the model below and time by a simulated clock, so
// the paper's 100 x (5 s + checkpoint) runs replay in milliseconds. A --real
// mode, on this machine's tiers through the runtime, is a second function
// beside RunModel with the same Scenario/Outcome types; see Run().
//
// Device model (documented in docs/clc.md, with the paper's figures):
//  - SSD: one per node, 250 MB/s sequential write with fsync (the rate the
//    paper measured on its Intel DC S3700, §5.3), shared by the node's ranks,
//    so an SSD checkpoint takes ranks x S / 250 MB/s. Endurance 14.6 PBW,
//    warranty 5 years (§3.3.1).
//  - Memory tier: memcpy speed measured in this run for the checkpoint size
//    (one thread, median of 3 after a warm-up copy), shared by the node's
//    ranks the same way: a memory checkpoint takes ranks x S / memcpy rate.
//    Capacity 4 GiB per node (the paper's tmpfs: "4GB out of a 24GB
//    system", §3.1.1), so Algorithm 1's size limit is 512 MiB per rank.
//  - A skipped checkpoint costs nothing. The controller's own cost (a ledger
//    read per rank) is not simulated time.
// All nodes of the paper's 8-node run behave alike in this model, so one node
// is simulated; its 8 ranks still each decide, and the decisions go through
// Encode/Decode/CombineDecisions as in the engine.
// MB is 10^6 bytes (the paper's sizes and rates); PBW 10^15 bytes.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "env/env.h"
#include "policy/clc.h"
#include "policy/slowdown.h"
#include "storage/wear_ledger.h"

namespace cairn {
namespace {

constexpr double kMB = 1e6;

// ---------------------------------------------------------------- options --

struct Options {
  bool json = false;
  std::vector<int> sizes_mb = {100, 200, 300, 400, 500, 600, 700, 800, 900, 1000};
  std::vector<std::string> policies = {"always-memory", "always-ssd",  "9:1",
                                       "clc-le",        "clc-le+ple", "clc-le+ple+size"};
  int iterations = 100;
  double compute_seconds = 5;
  int ranks_per_node = 8;
  double ssd_mbps = 250;
  double pbw = 14.6;
  double warranty_years = 5;
  double memory_capacity_gib = 4;
  double memory_gbps = 0;  // 0: measure memcpy
  double bound = 0.10;
  int64_t ratio = 10;
  double window = 0;       // B_SSD window, s; 0: since the run started (the paper)
};

void Usage(FILE* out) {
  std::fprintf(
      out,
      "usage: clc_micro [--model] [--json] [options]\n"
      "  --model               device model and simulated clock (the default)\n"
      "  --json                one JSON object per (policy, size) and line, not a table\n"
      "  --sizes LIST          MB per rank (default 100,200,...,1000)\n"
      "  --policies LIST       of always-memory, always-ssd, 9:1, clc-le, clc-le+ple,\n"
      "                        clc-le+ple+size (default: all)\n"
      "  --iterations N        compute + checkpoint iterations (default 100)\n"
      "  --compute S           seconds of compute per iteration (default 5)\n"
      "  --ranks-per-node N    ranks sharing one SSD and one memory tier (default 8)\n"
      "  --ssd-mbps R          SSD sequential write with fsync, MB/s (default 250)\n"
      "  --pbw P               SSD endurance, petabytes written (default 14.6)\n"
      "  --warranty-years Y    SSD warranty (default 5)\n"
      "  --memory-capacity-gib C  memory tier per node (default 4: 512 MiB per rank)\n"
      "  --memory-gbps G       memory tier speed, GB/s; default: memcpy measured now\n"
      "  --bound B             slowdown bound of the PLE test (default 0.10)\n"
      "  --ratio N             N of the 9:1 policy: every Nth checkpoint to SSD (default 10)\n"
      "  --window S            B_SSD over the last S seconds (default 0: since the start)\n");
}

bool ParseDouble(const char* text, double* out) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// Returns 0 to go on, 1 to exit with success (--help), 2 on a usage error.
int ParseOptions(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = nullptr;
    auto value = [&]() -> bool {
      if (i + 1 >= argc) {
        *error = a + " needs a value";
        return false;
      }
      v = argv[++i];
      return true;
    };
    auto number = [&](double* out, double min, double max) -> bool {
      if (!value()) return false;
      if (!ParseDouble(v, out) || *out < min || *out > max) {
        *error = fmt::format("{} {}: not a number in [{}, {}]", a, v, min, max);
        return false;
      }
      return true;
    };
    double d = 0;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--model") continue;
    if (a == "--json") {
      o->json = true;
    } else if (a == "--sizes") {
      if (!value()) return 2;
      o->sizes_mb.clear();
      for (const auto& s : SplitComma(v)) {
        double mb = 0;
        if (!ParseDouble(s.c_str(), &mb) || mb < 1 || mb > 1e6 || mb != std::floor(mb)) {
          *error = "--sizes: '" + s + "' is not a whole number of MB in [1, 1000000]";
          return 2;
        }
        o->sizes_mb.push_back(static_cast<int>(mb));
      }
    } else if (a == "--policies") {
      if (!value()) return 2;
      o->policies = SplitComma(v);
    } else if (a == "--iterations") {
      if (!number(&d, 1, 1e6)) return 2;
      o->iterations = static_cast<int>(d);
    } else if (a == "--compute") {
      if (!number(&o->compute_seconds, 1e-3, 1e6)) return 2;
    } else if (a == "--ranks-per-node") {
      if (!number(&d, 1, 4096)) return 2;
      o->ranks_per_node = static_cast<int>(d);
    } else if (a == "--ssd-mbps") {
      if (!number(&o->ssd_mbps, 1e-3, 1e7)) return 2;
    } else if (a == "--pbw") {
      if (!number(&o->pbw, 1e-6, 1e6)) return 2;
    } else if (a == "--warranty-years") {
      if (!number(&o->warranty_years, 1e-3, 100)) return 2;
    } else if (a == "--memory-capacity-gib") {
      if (!number(&o->memory_capacity_gib, 0, 1e6)) return 2;
    } else if (a == "--memory-gbps") {
      if (!number(&o->memory_gbps, 1e-3, 1e4)) return 2;
    } else if (a == "--bound") {
      if (!number(&o->bound, 1e-6, 0.999999)) return 2;
    } else if (a == "--ratio") {
      if (!number(&d, 1, 1e9)) return 2;
      o->ratio = static_cast<int64_t>(d);
    } else if (a == "--window") {
      if (!number(&o->window, 0, 1e10)) return 2;
    } else {
      *error = "unknown option " + a;
      return 2;
    }
  }
  return 0;
}

// ----------------------------------------------------------- the scenario --

struct PolicyCase {
  std::string name;
  ClcSettings settings;
};

std::optional<PolicyCase> MakePolicy(const std::string& name, const Options& o) {
  ClcSettings s;
  s.slowdown_bound = o.bound;
  s.ratio = o.ratio;
  if (name == "always-memory") {
    s.policy = PlacementPolicy::kMemory;
  } else if (name == "always-ssd") {
    s.policy = PlacementPolicy::kSsd;
  } else if (name == "9:1") {
    s.policy = PlacementPolicy::kRatio;
  } else if (name == "clc-le") {
    s.lifetime = true;
    s.slowdown = false;
    s.size = false;
  } else if (name == "clc-le+ple") {
    s.lifetime = true;
    s.slowdown = true;
    s.size = false;
  } else if (name == "clc-le+ple+size") {
    s.lifetime = s.slowdown = s.size = true;
  } else {
    return std::nullopt;
  }
  return PolicyCase{name, s};
}

// What one run of the benchmark is, independent of how it is executed.
struct Scenario {
  int iterations;
  double compute_seconds;
  int ranks_per_node;
  uint64_t bytes_per_rank;
  uint64_t memory_capacity;  // per node
  SsdEndurance endurance;
  double window;
};

// The devices of --model.
struct DeviceModel {
  double ssd_bytes_per_second;
  double memory_bytes_per_second;  // for this checkpoint size
};

struct Outcome {
  std::string mode;
  std::string policy;
  int mb_per_rank = 0;
  double runtime_seconds = 0;
  double baseline_seconds = 0;  // the same run without checkpoints
  double slowdown = 0;          // runtime / baseline - 1
  int ssd = 0, memory = 0, skipped = 0;
  double avg_interval_seconds = 0;  // NaN: nothing written
  double lifetime_years = 0;        // inf: nothing written to the SSD
  double ssd_bytes_per_node = 0;
  double memory_gbps = 0;
};

// One node of the paper's run: ranks_per_node ranks, each with its own
// slowdown tracker and wear-ledger writer over one shared (in-memory)
// ledger directory, a simulated clock advanced by the device model.
Result<Outcome> RunModel(const Scenario& sc, const DeviceModel& dev, const PolicyCase& policy) {
  // Wall seconds of a plausible date: the ledger stores wall time.
  FakeClock clock(1.8e9);
  const double start = clock.WallSeconds();
  auto env = NewMemEnv();
  const std::string dir = WearLedgerDir("/model/ssd", DeviceNumber{8, 0});
  const int ranks = sc.ranks_per_node;
  std::vector<std::unique_ptr<WearLedger>> ledgers;
  std::vector<SlowdownTracker> trackers;
  for (int r = 0; r < ranks; ++r) {
    WearLedgerOptions lo;
    lo.dir = dir;
    lo.writer = "r" + std::to_string(r);
    CAIRN_ASSIGN_OR_RETURN(auto ledger, WearLedger::Open(env.get(), lo, start));
    ledgers.push_back(std::move(ledger));
    trackers.emplace_back(&clock);
  }
  const double bytes_node = static_cast<double>(sc.bytes_per_rank) * ranks;
  const double t_ssd = bytes_node / dev.ssd_bytes_per_second;
  const double t_memory = bytes_node / dev.memory_bytes_per_second;

  Outcome out;
  out.mode = "model";
  out.policy = policy.name;
  out.mb_per_rank = static_cast<int>(static_cast<double>(sc.bytes_per_rank) / kMB);
  double last_written = start;
  for (int i = 1; i <= sc.iterations; ++i) {
    clock.Advance(sc.compute_seconds);
    std::vector<RankDecision> gathered;
    for (int r = 0; r < ranks; ++r) {
      trackers[r].EnterCheckpoint();
      CAIRN_ASSIGN_OR_RETURN(WearReading reading,
                             ledgers[r]->Read(clock.WallSeconds(), sc.window, start));
      ClcInput in;
      in.checkpoint_number = i;
      in.checkpoint_bytes = sc.bytes_per_rank;
      in.memory_capacity = sc.memory_capacity;
      in.ranks_on_node = ranks;
      in.wear = MakeSsdWear(sc.endurance, reading);
      in.checkpoint_seconds = trackers[r].checkpoint_seconds();
      in.compute_seconds = trackers[r].compute_seconds();
      ClcDecision d = DecidePlacement(policy.settings, in);
      // Through the wire, as after the engine's Allgather.
      CAIRN_ASSIGN_OR_RETURN(RankDecision back, DecodeDecision(EncodeDecision({0, d})));
      gathered.push_back(back);
    }
    CAIRN_ASSIGN_OR_RETURN(CollectiveDecision c, CombineDecisions(gathered));
    switch (c.placement) {
      case Placement::kSsd:
        clock.Advance(t_ssd);
        for (int r = 0; r < ranks; ++r) {
          CAIRN_RETURN_IF_ERROR(ledgers[r]->Record(sc.bytes_per_rank, clock.WallSeconds()));
        }
        ++out.ssd;
        last_written = clock.WallSeconds();
        break;
      case Placement::kMemory:
        clock.Advance(t_memory);
        ++out.memory;
        last_written = clock.WallSeconds();
        break;
      case Placement::kSkip:
        ++out.skipped;
        break;
    }
    for (auto& t : trackers) t.LeaveCheckpoint();
  }
  out.runtime_seconds = clock.WallSeconds() - start;
  out.baseline_seconds = sc.iterations * sc.compute_seconds;
  out.slowdown = out.runtime_seconds / out.baseline_seconds - 1;
  int written = out.ssd + out.memory;
  out.avg_interval_seconds = written > 0 ? (last_written - start) / written : std::nan("");
  out.ssd_bytes_per_node = bytes_node * out.ssd;
  // Figure 9: the rating over the rate this run wrote to the SSD at.
  out.lifetime_years = out.ssd > 0 ? sc.endurance.rating_bytes /
                                         (out.ssd_bytes_per_node / out.runtime_seconds) /
                                         kSecondsPerYear
                                   : std::numeric_limits<double>::infinity();
  out.memory_gbps = dev.memory_bytes_per_second / 1e9;
  return out;
}

// ------------------------------------------------------- memcpy baseline --

// memcpy of `bytes` between two buffers already faulted in: one warm-up
// copy, then the median of three. Bytes per second.
double MeasureMemcpy(char* dst, const char* src, uint64_t bytes) {
  std::memcpy(dst, src, bytes);
  std::vector<double> secs;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst, src, bytes);
    auto t1 = std::chrono::steady_clock::now();
    // Keep the copy observable so that it is not optimized away.
    volatile char sink = dst[bytes / 2 + static_cast<uint64_t>(rep)];
    (void)sink;
    secs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  return static_cast<double>(bytes) / std::max(secs[1], 1e-9);
}

// ----------------------------------------------------------------- output --

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no infinity
  return fmt::format("{:.6g}", v);
}

void PrintJson(const Outcome& o) {
  std::printf(
      "{\"mode\":\"%s\",\"policy\":\"%s\",\"mb_per_rank\":%d,\"slowdown\":%s,"
      "\"ssd_fraction\":%s,\"memory_fraction\":%s,\"skipped_fraction\":%s,"
      "\"avg_interval_s\":%s,\"lifetime_years\":%s,\"runtime_s\":%s,\"baseline_s\":%s,"
      "\"ssd_checkpoints\":%d,\"memory_checkpoints\":%d,\"skipped_checkpoints\":%d,"
      "\"memory_gbps\":%s}\n",
      o.mode.c_str(), o.policy.c_str(), o.mb_per_rank, JsonNumber(o.slowdown).c_str(),
      JsonNumber(static_cast<double>(o.ssd) / (o.ssd + o.memory + o.skipped)).c_str(),
      JsonNumber(static_cast<double>(o.memory) / (o.ssd + o.memory + o.skipped)).c_str(),
      JsonNumber(static_cast<double>(o.skipped) / (o.ssd + o.memory + o.skipped)).c_str(),
      JsonNumber(o.avg_interval_seconds).c_str(), JsonNumber(o.lifetime_years).c_str(),
      JsonNumber(o.runtime_seconds).c_str(), JsonNumber(o.baseline_seconds).c_str(), o.ssd,
      o.memory, o.skipped, JsonNumber(o.memory_gbps).c_str());
}

std::string Cell(double v, const char* format) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return "inf";
  return fmt::format(fmt::runtime(format), v);
}

void PrintTable(const Options& opt, const std::vector<Outcome>& all) {
  std::printf("clc_micro --model: %d ranks/node, %d iterations of %.3g s compute + checkpoint; "
              "SSD %.4g MB/s, %.4g PBW, %.3g-year warranty; memory tier %.4g GiB/node; "
              "bound %.3g; 9:1 = every %" PRId64 "th to SSD\n",
              opt.ranks_per_node, opt.iterations, opt.compute_seconds, opt.ssd_mbps, opt.pbw,
              opt.warranty_years, opt.memory_capacity_gib, opt.bound, opt.ratio);
  std::printf("slowdown: runtime / (iterations x compute) - 1; runtime x = 1 + slowdown\n\n");
  std::printf("%-16s %6s %9s %8s %6s %6s %6s %10s %9s %8s\n", "policy", "MB", "slowdown",
              "runtime", "ssd", "memory", "skip", "interval", "lifetime", "mem GB/s");
  std::string current;
  double sum_slowdown = 0, sum_life = 0, sum_ssd = 0, sum_memory = 0, sum_skip = 0;
  int n = 0, n_life = 0;
  auto summary = [&]() {
    if (n == 0) return;
    std::printf("%-16s %6s %8.1f%% %7.2fx %5.0f%% %5.0f%% %5.0f%% %10s %9s  (mean over sizes)\n\n",
                current.c_str(), "mean", 100 * sum_slowdown / n, 1 + sum_slowdown / n,
                100 * sum_ssd / n, 100 * sum_memory / n, 100 * sum_skip / n, "",
                n_life == n ? fmt::format("{:.2f} y", sum_life / n).c_str() : "inf");
  };
  for (const auto& o : all) {
    if (o.policy != current) {
      summary();
      current = o.policy;
      sum_slowdown = sum_life = sum_ssd = sum_memory = sum_skip = 0;
      n = n_life = 0;
    }
    double total = o.ssd + o.memory + o.skipped;
    std::printf("%-16s %6d %8.1f%% %7.2fx %5.0f%% %5.0f%% %5.0f%% %9ss %7s y %8.2f\n",
                o.policy.c_str(), o.mb_per_rank, 100 * o.slowdown, 1 + o.slowdown,
                100 * o.ssd / total, 100 * o.memory / total, 100 * o.skipped / total,
                Cell(o.avg_interval_seconds, "{:.1f}").c_str(), Cell(o.lifetime_years, "{:.2f}").c_str(),
                o.memory_gbps);
    sum_slowdown += o.slowdown;
    sum_ssd += o.ssd / total;
    sum_memory += o.memory / total;
    sum_skip += o.skipped / total;
    ++n;
    if (std::isfinite(o.lifetime_years)) {
      sum_life += o.lifetime_years;
      ++n_life;
    }
  }
  summary();
}

// ------------------------------------------------------------------- main --

// The model mode: measure memcpy once per size, then run every policy on
// the model. (A real mode would run the same scenarios through the runtime
// and fill the same Outcome.)
int RunModelMode(const Options& opt, const std::vector<PolicyCase>& policies) {
  std::map<int, double> memory_rate;  // MB per rank -> bytes/s
  if (opt.memory_gbps > 0) {
    for (int mb : opt.sizes_mb) memory_rate[mb] = opt.memory_gbps * 1e9;
  } else {
    uint64_t largest = static_cast<uint64_t>(*std::max_element(opt.sizes_mb.begin(), opt.sizes_mb.end())) *
                       static_cast<uint64_t>(kMB);
    std::unique_ptr<char[]> src(new (std::nothrow) char[largest]);
    std::unique_ptr<char[]> dst(new (std::nothrow) char[largest]);
    if (!src || !dst) {
      std::fprintf(stderr, "clc_micro: cannot allocate 2 x %" PRIu64 " bytes for the memcpy baseline "
                           "(use --memory-gbps)\n", largest);
      return 1;
    }
    for (uint64_t i = 0; i < largest; ++i) src[i] = static_cast<char>(i * 131 + 7);
    std::memset(dst.get(), 0, largest);  // fault the pages in before timing
    for (int mb : opt.sizes_mb) {
      memory_rate[mb] = MeasureMemcpy(dst.get(), src.get(), static_cast<uint64_t>(mb) * static_cast<uint64_t>(kMB));
    }
  }

  std::vector<Outcome> all;
  for (const auto& p : policies) {
    for (int mb : opt.sizes_mb) {
      Scenario sc;
      sc.iterations = opt.iterations;
      sc.compute_seconds = opt.compute_seconds;
      sc.ranks_per_node = opt.ranks_per_node;
      sc.bytes_per_rank = static_cast<uint64_t>(mb) * static_cast<uint64_t>(kMB);
      sc.memory_capacity = static_cast<uint64_t>(opt.memory_capacity_gib * (1ull << 30));
      sc.endurance.rating_bytes = opt.pbw * 1e15;
      sc.endurance.warranty_seconds = opt.warranty_years * kSecondsPerYear;
      sc.window = opt.window;
      DeviceModel dev{opt.ssd_mbps * kMB, memory_rate[mb]};
      auto out = RunModel(sc, dev, p);
      if (!out.ok()) {
        std::fprintf(stderr, "clc_micro: %s at %d MB: %s\n", p.name.c_str(), mb,
                     out.status().ToString().c_str());
        return 1;
      }
      if (opt.json) PrintJson(*out);
      all.push_back(*out);
    }
  }
  if (!opt.json) PrintTable(opt, all);
  return 0;
}

int Run(int argc, char** argv) {
  Options opt;
  std::string error;
  int parsed = ParseOptions(argc, argv, &opt, &error);
  if (parsed != 0) {
    if (parsed == 2) std::fprintf(stderr, "clc_micro: %s\n", error.c_str());
    Usage(parsed == 1 ? stdout : stderr);
    return parsed == 1 ? 0 : 2;
  }
  std::vector<PolicyCase> policies;
  for (const auto& name : opt.policies) {
    auto p = MakePolicy(name, opt);
    if (!p) {
      std::fprintf(stderr, "clc_micro: unknown policy '%s'\n", name.c_str());
      Usage(stderr);
      return 2;
    }
    Status s = p->settings.Validate();
    if (!s.ok()) {
      std::fprintf(stderr, "clc_micro: %s\n", s.ToString().c_str());
      return 2;
    }
    policies.push_back(*p);
  }
  return RunModelMode(opt, policies);
}

}  // namespace
}  // namespace cairn

int main(int argc, char** argv) { return cairn::Run(argc, argv); }
