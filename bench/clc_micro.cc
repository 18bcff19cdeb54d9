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
//   mpirun -np R clc_micro --real [--json] [--mb 16,32,...] [--policies a,b,...]
//             [--iterations N] [--compute-s S] [--ranks-per-node N] [--dir D]
//             [--shm-dir D] [--tbw T | --pbw P] [--lifetime-years Y]
//             [--warranty-years Y] [--memory-capacity-gib C] [--bound B]
//             [--ratio N] [--window S] [--keep-data] [--verbose]
//   (--help describes every option)
//
// The benchmark (paper §5.1): every rank computes for 5 s, then writes a
// checkpoint of S MB, 100 times; 8 ranks per node; S from 100 to 1000 MB.
// Before each checkpoint the controller picks memory, SSD or skip. Reported
// per (policy, S): the slowdown against the same run without checkpoints,
// the fraction of checkpoints per tier and skipped, the average interval
// between written checkpoints, the SSD lifetime projected from the bytes
// the run wrote to the SSD and its runtime (the paper's Figure 9), and the
// mean rollback distance after a failure at a random time, with the node's
// memory lost (SSD copies only, §3.4) and intact (MeanRollback).
//
// Modes. Both fill the same Outcome from the same Scenario and PolicyCase,
// and print it the same way (PrintJson, PrintTable); "mode" says which.
//  --model (the default) replaces the devices by the model below and time
//    by a simulated clock, so the paper's 100 x (5 s + checkpoint) runs
//    replay in milliseconds (RunModel).
//  --real runs the benchmark as the MPI program it is in the paper, through
//    the public C API (cairn_init, cairn_checkpoint, cairn_last_checkpoint,
//    cairn_finalize) on this machine's tiers: memory under /dev/shm, ssd
//    under --dir, pfs off (RunReal). Sizes and times are scaled down to
//    finish in minutes; see "Real mode" below and docs/clc.md.
//
// Device model of --model (documented in docs/clc.md, with the paper's figures):
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
//
// Real mode (--real), what is scaled and why (docs/clc.md has the figures):
//  - Compute: a busy loop of fixed work (ComputePhase, registers only),
//    calibrated once at start, with every rank running, to last --compute-s
//    (default 0.5 s, the paper's 5 s / 10). Fixed work rather than a fixed
//    time, so that CPU taken by checkpointing shows up as slowdown.
//  - Sizes: --mb (default 16,32,48,64 MB per rank: the paper's largest
//    size, 1000 MB, / 15.6, in 4 equal steps where the paper has 10).
//  - Iterations: --iterations (default 20; the paper's 100).
//  - Baseline: per size, the same ranks run the same compute phases and
//    touch the same buffer, with an MPI_Barrier where the collective
//    checkpoint call would be, without checkpointing, just before and just
//    after that size's cases (interpolated for each case).
//    slowdown = runtime / baseline - 1; slowdown_own, against the case's
//    own compute phases, resists the load of other jobs (ApplyBaseline).
//  - Cases: each (policy, size) runs between its own cairn_init and
//    cairn_finalize, with a configuration file written for it and fresh
//    directories, so no case inherits another's wear ledger, slowdown
//    tracker or stored versions. retention.keep = 1 (the paper overwrites
//    one checkpoint file per rank); the pfs tier is off.
//    always-memory: policy memory with tiers.ssd.every = 1000000, so that
//    no version is drained to the SSD (policy memory otherwise drains every
//    version to the ssd tier below it) in runs of fewer than 10^6 calls;
//    CaseConfig says why rather than tiers.ssd.enabled = false.
//    always-ssd: policy ssd. 9:1: policy ratio, ratio = --ratio. clc-le,
//    clc-le+ple, clc-le+ple+size: policy clc with the switches of
//    docs/clc.md.
//  - Memory capacity: unlimited (0) except for clc-le+ple+size, as in the
//    paper (§2: "both ramdisk and the SSD had unlimited checkpoint
//    storage"; §6.1.3 limits the ramdisk). That case scales the paper's
//    limit of 512 MiB per rank for sizes up to 1000 MB: a per-rank limit of
//    0.537 x the largest --mb, times the node's ranks, times keep + 1 = 2
//    because the engine compares a version with the tier's free room and
//    the previous version is still there while the next one is written.
//  - Endurance: the lifetime test compares rates (L_estimated > L_expected
//    iff B_SSD < rating / warranty), so what has to be scaled is the
//    rating against this machine's write rate, not time. By default
//    (neither --tbw nor --pbw given) a short probe times an always-SSD checkpoint of each size
//    before the cases run, predicts each size's always-SSD write rate
//    b = node bytes / (compute phase + SSD checkpoint), and sets the rating
//    so that the mean over sizes of rating / b is --lifetime-years (default
//    3 y, the paper's always-SSD result, Fig. 9a) with the paper's 5-year
//    warranty. Then the LE cap stands to the always-SSD rate as in the
//    paper (the mean over sizes of cap / rate is 3/5), and clc-le's
//    lifetime is comparable to the paper's 6.3 y. --tbw T or --pbw P fix the rating instead.
//  - Fractions, seconds and bytes come from cairn_last_checkpoint after
//    every call; all ranks must agree on every placement (checked).
//    Lifetime = rating / (the busiest node's SSD bytes / runtime).
//
// MB is 10^6 bytes (the paper's sizes and rates); PBW 10^15 bytes, TBW 10^12.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

// Only the C bindings of MPI are used.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "base/clock.h"
#include "bench_mpi.h"
#include "bench_support.h"
#include "cairn/cairn.h"
#include "env/env.h"
#include "policy/clc.h"
#include "policy/clc_rollback.h"
#include "policy/slowdown.h"
#include "storage/wear_ledger.h"

extern char** environ;

namespace cairn {
namespace {

constexpr double kMB = 1e6;

// The paper's per-rank memory limit (4 GiB tmpfs / 8 ranks = 512 MiB) over
// its largest checkpoint (1000 MB): --real scales the limit by this.
constexpr double kPaperLimitOverLargest = 512.0 * (1 << 20) / (1000 * kMB);

// ---------------------------------------------------------------- options --

struct Options {
  bool real = false;
  bool json = false;
  // 0 / empty / negative: the mode's default (ApplyModeDefaults).
  std::vector<int> sizes_mb;
  std::vector<std::string> policies = {"always-memory", "always-ssd",  "9:1",
                                       "clc-le",        "clc-le+ple", "clc-le+ple+size"};
  int iterations = 0;
  double compute_seconds = 0;
  int ranks_per_node = -1;
  double ssd_mbps = 250;
  double pbw = 0;                    // 0: model 14.6; real: auto
  double warranty_years = 5;
  double memory_capacity_gib = -1;   // model: per node (4); real: the +size case's (auto)
  double memory_gbps = 0;  // 0: measure memcpy
  double bound = 0.10;
  int64_t ratio = 10;
  double window = 0;       // B_SSD window, s; 0: since the run started (the paper)
  // --real only.
  std::string dir = "/tmp/cairn-clc-micro";
  std::string shm_dir = "/dev/shm";
  double lifetime_years = 3;  // target of the auto rating: the paper's always-SSD mean
  bool keep_data = false;
  bool verbose = false;
};

// Adds the options of both modes; *tbw receives --tbw (converted to PBW by
// the caller). Returns the options that belong to one mode only.
struct ModeOnlyOptions {
  std::vector<CLI::Option*> model, real;
};

ModeOnlyOptions AddOptions(CLI::App& app, Options* o, double* tbw) {
  using cairn_bench::FiniteRange;
  ModeOnlyOptions only;
  CLI::Option* model =
      app.add_flag("--model")->description("device model and simulated clock (the default)");
  app.add_flag("--real", o->real,
               "the benchmark on this machine's tiers through the C API (an MPI program)")
      ->excludes(model);
  app.add_flag("--json", o->json, "one JSON object per (policy, size) and line, not a table");
  app.add_option("--sizes,--mb", o->sizes_mb,
                 "MB per rank (model: 100,200,...,1000; real: 16,32,48,64)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000000));
  app.add_option("--policies", o->policies,
                 "of always-memory, always-ssd, 9:1, clc-le, clc-le+ple, clc-le+ple+size "
                 "(default: all)")
      ->delimiter(',');
  app.add_option("--iterations", o->iterations, "compute + checkpoint iterations (model 100, real 20)")
      ->check(CLI::Range(1, 999999));
  app.add_option("--compute,--compute-s", o->compute_seconds,
                 "seconds of compute per iteration (model 5, real 0.5)")
      ->check(FiniteRange(1e-3, 1e6));
  app.add_option("--ranks-per-node", o->ranks_per_node,
                 "model: ranks sharing one SSD and one memory tier (8); real: "
                 "topology.ranks_per_node (0: real nodes, the default)")
      ->check(CLI::Range(0, 4096));
  CLI::Option* pbw = app.add_option("--pbw", o->pbw,
                                    "SSD endurance, PB written (model: 14.6; real: calibrated "
                                    "by a probe, see --lifetime-years)")
                         ->check(FiniteRange(1e-6, 1e6));
  app.add_option("--tbw", *tbw, "SSD endurance, TB written (instead of --pbw)")
      ->check(FiniteRange(1e-3, 1e9))
      ->excludes(pbw);
  app.add_option("--warranty-years", o->warranty_years, "SSD warranty")
      ->capture_default_str()
      ->check(FiniteRange(1e-3, 100));
  app.add_option("--memory-capacity-gib", o->memory_capacity_gib,
                 "memory tier per node (model: 4, i.e. 512 MiB per rank; real: of the "
                 "clc-le+ple+size case, default scaled to --mb)")
      ->check(FiniteRange(0, 1e6));
  app.add_option("--bound", o->bound, "slowdown bound of the PLE test")
      ->capture_default_str()
      ->check(FiniteRange(1e-6, 0.999999));
  app.add_option("--ratio", o->ratio, "N of the 9:1 policy: every Nth checkpoint to SSD")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000000000}));
  app.add_option("--window", o->window, "B_SSD over the last S seconds (0: since the start)")
      ->capture_default_str()
      ->check(FiniteRange(0, 1e10));
  only.model.push_back(app.add_option("--ssd-mbps", o->ssd_mbps,
                                      "model only: SSD sequential write with fsync, MB/s")
                           ->capture_default_str()
                           ->check(FiniteRange(1e-3, 1e7)));
  only.model.push_back(app.add_option("--memory-gbps", o->memory_gbps,
                                      "model only: memory tier speed, GB/s (default: memcpy "
                                      "measured now)")
                           ->check(FiniteRange(1e-3, 1e4)));
  only.real.push_back(app.add_option("--dir", o->dir,
                                     "real only: ssd tier and configs under D/run-<id>")
                          ->capture_default_str());
  only.real.push_back(app.add_option("--shm-dir", o->shm_dir,
                                     "real only: memory tier under "
                                     "D/cairn-clc-micro-<uid>-<id>")
                          ->capture_default_str());
  only.real.push_back(app.add_option("--lifetime-years", o->lifetime_years,
                                     "real only: the auto rating makes always-SSD project Y "
                                     "years on average")
                          ->capture_default_str()
                          ->check(FiniteRange(1e-3, 1e3)));
  only.real.push_back(app.add_flag("--keep-data", o->keep_data,
                                   "real only: keep each case's directories (wear ledger, "
                                   "placement history)"));
  only.real.push_back(
      app.add_flag("--verbose", o->verbose, "real only: print every placement decision to stderr"));
  return only;
}

// The first option given that belongs to the other mode, or "".
std::string OtherModeOption(const std::vector<CLI::Option*>& options) {
  for (const CLI::Option* opt : options) {
    if (opt->count() > 0) return opt->get_name();
  }
  return "";
}

// Returns nullopt to go on, else the exit status (0 after --help, 2 after
// a usage error). Only the speaker (rank 0) prints.
std::optional<int> ParseOptions(int argc, char** argv, bool speaker, Options* o) {
  CLI::App app{"clc_micro: the CLC paper's microbenchmark (MEMSYS 2016, section 5.1) through "
               "Cairn's Checkpoint Location Controller. --model replays it on a device model; "
               "mpirun -np R clc_micro --real runs it on this machine's tiers"};
  double tbw = 0;
  const ModeOnlyOptions only = AddOptions(app, o, &tbw);
  if (auto exit_code = cairn_bench::ParseCommandLine(app, argc, argv, speaker)) return exit_code;
  if (tbw > 0) o->pbw = tbw / 1000;
  const std::string wrong = OtherModeOption(o->real ? only.model : only.real);
  if (!wrong.empty()) {
    if (speaker) {
      std::fprintf(stderr, "clc_micro: %s is an option of %s\n", wrong.c_str(),
                   o->real ? "--model (--real measures the devices)" : "--real");
    }
    return 2;
  }
  return std::nullopt;
}

// Fills in what the user left to the mode.
void ApplyModeDefaults(Options* o) {
  if (o->sizes_mb.empty()) {
    o->sizes_mb = o->real ? std::vector<int>{16, 32, 48, 64}
                          : std::vector<int>{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000};
  }
  if (o->iterations == 0) o->iterations = o->real ? 20 : 100;
  if (o->compute_seconds == 0) o->compute_seconds = o->real ? 0.5 : 5;
  if (o->ranks_per_node < 0) o->ranks_per_node = o->real ? 0 : 8;
  if (!o->real && o->pbw == 0) o->pbw = 14.6;
  if (!o->real && o->memory_capacity_gib < 0) o->memory_capacity_gib = 4;
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
  s.bandwidth_window = o.window;
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
  uint64_t memory_capacity;  // per node; 0 (--real): unlimited
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
  int ranks_per_node = 0;
  double runtime_seconds = 0;
  double baseline_seconds = 0;  // the same run without checkpoints
  // Real: the change of the baseline across this size's cases (measured
  // before and after them), a gauge of the machine's load drift; model: 0.
  double baseline_drift = 0;
  double compute_seconds = 0;   // time in the compute phases of this run (real: max over ranks)
  double slowdown = 0;          // runtime / baseline - 1
  // runtime / (compute_seconds x baseline / baseline's compute time) - 1:
  // the slowdown against this run's own compute phases (real: see RunReal).
  double slowdown_own = 0;
  int ssd = 0, memory = 0, skipped = 0;
  double avg_interval_seconds = 0;  // NaN: nothing written
  // From the last written checkpoint (or the start) to the end of the run:
  // what a failure at the end would roll back. avg_interval_seconds does not
  // see a run that ends in a streak of skips; this does.
  double last_gap_seconds = 0;
  double lifetime_years = 0;        // inf: nothing written to the SSD
  double ssd_bytes_per_node = 0;
  double memory_gbps = 0;  // node bytes / s of a memory checkpoint (NaN: none)
  double ssd_gbps = 0;     // node bytes / s of an SSD checkpoint (NaN: none)
  double ssd_tbw = 0;      // the endurance rating used
  // Real: the write rate of the device that holds the ssd tier during the
  // run, all writers included, as /sys/block/<disk>/stat counts (NaN:
  // unknown). Model: the SSD bytes over the runtime.
  double device_write_mbps = 0;
  // The paper's recovery order (§3.4) at work: mean rollback distance after
  // a failure at a uniformly random time of the run (MeanRollback), when
  // the node's memory is lost (only SSD copies survive) and when it is not.
  RollbackDistance rollback_memory_lost;
  RollbackDistance rollback_intact;
};

// Fills the rollback distances of `out` from the run's checkpoint calls.
void SetRollback(const std::vector<CheckpointCall>& calls, double runtime, Outcome* out) {
  out->rollback_memory_lost = MeanRollback(calls, runtime, true);
  out->rollback_intact = MeanRollback(calls, runtime, false);
}

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
  out.ranks_per_node = ranks;
  double last_written = start;
  std::vector<CheckpointCall> calls;
  for (int i = 1; i <= sc.iterations; ++i) {
    clock.Advance(sc.compute_seconds);
    const double call_start = clock.WallSeconds() - start;
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
    calls.push_back({call_start, clock.WallSeconds() - start, c.placement});
    for (auto& t : trackers) t.LeaveCheckpoint();
  }
  out.runtime_seconds = clock.WallSeconds() - start;
  out.baseline_seconds = sc.iterations * sc.compute_seconds;
  out.compute_seconds = out.baseline_seconds;
  out.slowdown = out.runtime_seconds / out.baseline_seconds - 1;
  out.slowdown_own = out.slowdown;
  int written = out.ssd + out.memory;
  out.avg_interval_seconds = written > 0 ? (last_written - start) / written : std::nan("");
  out.last_gap_seconds = clock.WallSeconds() - last_written;
  out.ssd_bytes_per_node = bytes_node * out.ssd;
  // Figure 9: the rating over the rate this run wrote to the SSD at.
  out.lifetime_years = out.ssd > 0 ? sc.endurance.rating_bytes /
                                         (out.ssd_bytes_per_node / out.runtime_seconds) /
                                         kSecondsPerYear
                                   : std::numeric_limits<double>::infinity();
  out.memory_gbps = dev.memory_bytes_per_second / 1e9;
  out.ssd_gbps = dev.ssd_bytes_per_second / 1e9;
  out.ssd_tbw = sc.endurance.rating_bytes / 1e12;
  out.device_write_mbps = out.ssd_bytes_per_node / out.runtime_seconds / kMB;
  SetRollback(calls, out.runtime_seconds, &out);
  return out;
}

// ------------------------------------------------------------- real mode --

// The MPI world of --real: all ranks, and the ranks of this rank's node
// (the node as Cairn sees it: topology.ranks_per_node, or shared memory).
struct World {
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  int node_rank = 0;
  int node_size = 1;
};

// What RunReal needs besides the scenario and the policy.
struct RealSetup {
  const World* world = nullptr;
  std::string run_dir;          // <--dir>/run-<id>: one directory per case
  std::string shm_dir;          // <--shm-dir>/cairn-clc-micro-<uid>-<id>: memory tiers
  int topology_ranks_per_node = 0;
  char* buffer = nullptr;       // the protected region, at least bytes_per_rank
  uint64_t work = 0;            // rounds of ComputePhase per iteration
  bool keep_data = false;
  bool verbose = false;
};

// One compute phase: `rounds` steps of a dependent floating-point
// recurrence held in registers, so that it costs CPU time and no memory
// bandwidth (the paper's compute phase is an unnamed "algorithm which takes
// roughly 5 seconds"). The result must be used, or the loop is removed.
double ComputePhase(uint64_t rounds, double x) {
  double sum = 0;
  for (uint64_t i = 0; i < rounds; ++i) {
    x = x * 1.0000001 + 1e-7;  // stays in [1, 2)
    if (x >= 2) x -= 1;
    sum += x;
  }
  return sum;
}

volatile double g_sink = 0;

// The application updates its state: one byte in every page of the
// protected buffer changes each iteration (the rest keeps its pattern).
void TouchState(char* buffer, uint64_t bytes, int iteration) {
  for (uint64_t off = static_cast<uint64_t>(iteration) % 4096; off < bytes; off += 4096) {
    buffer[off] = static_cast<char>(buffer[off] + iteration);
  }
}

double MaxOverRanks(const World& w, double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, w.comm);
  return out;
}

bool AllTrue(const World& w, bool cond) {
  int in = cond ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, w.comm);
  return out == 1;
}

// Rounds of ComputePhase that take `seconds` on the slowest rank while every
// rank computes (on an oversubscribed node the ranks share its cores, and
// the phase is calibrated as they will run it). All ranks get one value.
uint64_t CalibrateWork(const World& w, double seconds) {
  uint64_t rounds = 1 << 16;
  double elapsed = 0;
  for (;;) {
    MPI_Barrier(w.comm);
    double t0 = MPI_Wtime();
    g_sink = g_sink + ComputePhase(rounds, 1.5);
    elapsed = MaxOverRanks(w, MPI_Wtime() - t0);
    if (elapsed >= std::min(0.1, seconds / 4) || rounds >= (uint64_t{1} << 40)) break;
    rounds *= 2;
  }
  auto scale = [](uint64_t r, double factor) {
    return static_cast<uint64_t>(std::max(1.0, std::round(static_cast<double>(r) * factor)));
  };
  uint64_t work = scale(rounds, seconds / elapsed);
  // One phase at full length, and one correction from it.
  MPI_Barrier(w.comm);
  double t0 = MPI_Wtime();
  g_sink = g_sink + ComputePhase(work, 1.5);
  elapsed = MaxOverRanks(w, MPI_Wtime() - t0);
  return scale(work, seconds / elapsed);
}

// The run without checkpoints, and the part of it spent in compute phases
// (both the maximum over ranks).
struct Baseline {
  double seconds = 0;
  double compute_seconds = 0;
};

// The same compute phases and state updates as RunReal, with a barrier
// where the (collective) checkpoint call would be.
Baseline MeasureBaseline(const World& w, const Scenario& sc, const RealSetup& setup) {
  double compute = 0;
  MPI_Barrier(w.comm);
  double t0 = MPI_Wtime();
  for (int i = 1; i <= sc.iterations; ++i) {
    double c0 = MPI_Wtime();
    g_sink = g_sink + ComputePhase(setup.work, 1.0 + 1e-3 * i);
    TouchState(setup.buffer, sc.bytes_per_rank, i);
    compute += MPI_Wtime() - c0;
    MPI_Barrier(w.comm);
  }
  Baseline b;
  b.seconds = MaxOverRanks(w, MPI_Wtime() - t0);
  b.compute_seconds = MaxOverRanks(w, compute);
  return b;
}

// Bytes written since boot to the disk that holds `path`: field 7 of
// /sys/dev/block/<major>:<minor>/stat (512-byte sectors; a partition has
// its own), the counter the engine's wear reading also uses. -1 when
// unknown (tmpfs, overlayfs, no sysfs).
double DeviceBytesWritten(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || major(st.st_dev) == 0) return -1;
  std::string stat_path =
      fmt::format("/sys/dev/block/{}:{}/stat", major(st.st_dev), minor(st.st_dev));
  FILE* f = std::fopen(stat_path.c_str(), "r");
  if (f == nullptr) return -1;
  unsigned long long v[7] = {};
  int n = std::fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                      &v[5], &v[6]);
  std::fclose(f);
  return n == 7 ? static_cast<double>(v[6]) * 512 : -1;
}

// The configuration of one case (docs/config.md): fresh directories, pfs
// off, keep 1, the policy's [placement] keys and the endurance.
std::string CaseConfig(const Scenario& sc, const PolicyCase& policy, const RealSetup& setup,
                       const std::string& case_dir, const std::string& shm_case_dir) {
  const ClcSettings& s = policy.settings;
  toml::table ssd{{"path", case_dir + "/ssd/{node}"},
                  {"endurance_tbw", sc.endurance.rating_bytes / 1e12},
                  {"warranty_years", sc.endurance.warranty_seconds / kSecondsPerYear}};
  if (s.policy == PlacementPolicy::kMemory) {
    // Policy memory drains every version to the enabled tiers below it.
    // Draining only every 10^6th call (the largest `every`) keeps the SSD
    // out of runs of fewer calls, as in the paper's "always ramdisk". The
    // ssd tier and its wear ledger stay, so this case pays the same per-call
    // controller costs (ledger and sysfs reads) as the other five and
    // differs from them in placement only; tiers.ssd.enabled = false would
    // drop those costs from this case alone.
    ssd.insert("every", 1000000);
  }
  toml::table placement{{"policy", PlacementPolicyName(s.policy)},
                        {"lifetime", s.lifetime},
                        {"slowdown", s.slowdown},
                        {"size", s.size},
                        {"slowdown_bound", s.slowdown_bound},
                        {"force_ssd_every", s.force_ssd_every},
                        {"ratio", s.ratio},
                        {"bandwidth_window", s.bandwidth_window}};
  toml::table tiers{
      {"memory", toml::table{{"path", shm_case_dir + "/{node}"},
                             {"capacity", std::to_string(sc.memory_capacity)}}},
      {"ssd", std::move(ssd)},
      {"pfs", toml::table{{"enabled", false}}}};
  return cairn_bench::TomlText(toml::table{
      {"general", toml::table{{"dir", case_dir}}},
      {"retention", toml::table{{"keep", 1}}},
      {"tiers", std::move(tiers)},
      {"placement", std::move(placement)},
      {"topology", toml::table{{"ranks_per_node", setup.topology_ranks_per_node}}}});
}

// Lets the file system settle (journal, discards of deleted files) so that
// one case does not pay for the one before.
void QuietDisk(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::syncfs(fd);
    ::close(fd);
  }
}

// A C API call that failed on this rank, as a Status naming the call and
// Cairn's message for it.
Status CairnError(const char* call, int rc) {
  return Error(Code::kInternal, "{} returned {}: {}", call, rc, cairn_error_message(rc));
}

// Per-rank tallies of one case.
struct Tally {
  int ssd = 0, memory = 0, skipped = 0, other = 0;
  double ssd_bytes = 0, memory_bytes = 0;
  double ssd_seconds = 0, memory_seconds = 0;
  double compute_seconds = 0;
  double last_written = 0;  // seconds since the start
};

// One case of the benchmark, on this machine: cairn_init with the case's
// configuration, iterations x (compute phase, cairn_checkpoint), then
// cairn_finalize. Collective over setup.world. The slowdowns are left to
// ApplyBaseline.
Result<Outcome> RunReal(const Scenario& sc, const RealSetup& setup, const PolicyCase& policy) {
  const World& w = *setup.world;
  const int mb = static_cast<int>(static_cast<double>(sc.bytes_per_rank) / kMB);
  std::string label = policy.name;
  std::replace(label.begin(), label.end(), ':', '-');
  std::replace(label.begin(), label.end(), '+', '_');
  label += "-" + std::to_string(mb) + "mb";
  const std::string case_dir = setup.run_dir + "/" + label;
  const std::string shm_case_dir = setup.shm_dir + "/" + label;
  const std::string config_path = case_dir + ".toml";

  std::string error;
  if (w.node_rank == 0) {
    std::error_code ec;
    std::filesystem::remove_all(case_dir, ec);
    std::filesystem::remove_all(shm_case_dir, ec);
    std::filesystem::create_directories(case_dir, ec);
    if (ec) error = "creating " + case_dir + ": " + ec.message();
    if (error.empty()) {
      std::string text = CaseConfig(sc, policy, setup, case_dir, shm_case_dir);
      FILE* f = std::fopen(config_path.c_str(), "w");
      if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
          std::fclose(f) != 0) {
        error = "writing " + config_path + ": " + std::strerror(errno);
      }
    }
  }
  if (!AllTrue(w, error.empty())) {
    return Error(Code::kIo, "{}", error.empty() ? "setup failed on another rank" : error);
  }

  int rc = cairn_init(w.comm, config_path.c_str());
  if (rc == CAIRN_SUCCESS) rc = cairn_protect(0, setup.buffer, sc.bytes_per_rank, 1);
  if (!AllTrue(w, rc == CAIRN_SUCCESS)) {
    Status s = rc != CAIRN_SUCCESS ? CairnError("cairn_init/cairn_protect", rc)
                                   : Error(Code::kInternal, "cairn_init failed on another rank");
    (void)cairn_finalize();
    return s;
  }

  Tally t;
  std::vector<CheckpointCall> calls;  // this rank's, seconds since t0
  Status failed;
  MPI_Barrier(w.comm);
  const double device0 = w.rank == 0 ? DeviceBytesWritten(setup.run_dir) : 0;
  const double t0 = MPI_Wtime();
  for (int i = 1; i <= sc.iterations; ++i) {
    double c0 = MPI_Wtime();
    g_sink = g_sink + ComputePhase(setup.work, 1.0 + 1e-3 * i);
    TouchState(setup.buffer, sc.bytes_per_rank, i);
    t.compute_seconds += MPI_Wtime() - c0;
    const double call_start = MPI_Wtime() - t0;
    rc = cairn_checkpoint("clc_micro", i);
    const double call_end = MPI_Wtime() - t0;
    cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
    if (rc == CAIRN_SUCCESS) rc = cairn_last_checkpoint(&info);
    if (!AllTrue(w, rc == CAIRN_SUCCESS)) {
      failed = rc != CAIRN_SUCCESS
                   ? CairnError("cairn_checkpoint", rc)
                   : Error(Code::kInternal, "cairn_checkpoint failed on another rank");
      break;
    }
    calls.push_back({call_start, call_end,
                     info.skipped                              ? Placement::kSkip
                     : std::strcmp(info.tier, "ssd") == 0 ? Placement::kSsd
                                                               : Placement::kMemory});
    if (info.skipped) {
      ++t.skipped;
    } else {
      t.last_written = MPI_Wtime() - t0;
      if (std::strcmp(info.tier, "memory") == 0) {
        ++t.memory;
        t.memory_bytes += static_cast<double>(info.bytes);
        t.memory_seconds += info.seconds;
      } else if (std::strcmp(info.tier, "ssd") == 0) {
        ++t.ssd;
        t.ssd_bytes += static_cast<double>(info.bytes);
        t.ssd_seconds += info.seconds;
      } else {
        ++t.other;
      }
    }
    if (setup.verbose && w.rank == 0) {
      std::fprintf(stderr, "clc_micro: %s %d MB #%d %s %s%s %.3f s: %s\n", policy.name.c_str(), mb,
                   info.number, info.skipped ? "skip" : info.tier, info.rule,
                   info.forced ? " (forced)" : "", info.seconds, info.reason);
    }
  }
  const double runtime = MaxOverRanks(w, MPI_Wtime() - t0);
  double device_mbps = std::nan("");
  if (w.rank == 0) {
    const double device1 = DeviceBytesWritten(setup.run_dir);
    if (device0 >= 0 && device1 >= device0) device_mbps = (device1 - device0) / runtime / kMB;
  }
  rc = cairn_finalize();
  if (!AllTrue(w, rc == CAIRN_SUCCESS) && failed.ok()) {
    failed = rc != CAIRN_SUCCESS ? CairnError("cairn_finalize", rc)
                                 : Error(Code::kInternal, "cairn_finalize failed on another rank");
  }
  if (!setup.keep_data && w.node_rank == 0) {
    std::error_code ec;
    std::filesystem::remove_all(case_dir, ec);
    std::filesystem::remove_all(shm_case_dir, ec);
    std::filesystem::remove(config_path, ec);
  }
  QuietDisk(setup.run_dir);
  MPI_Barrier(w.comm);
  CAIRN_RETURN_IF_ERROR(failed);

  // The decision is collective: every rank must count the same placements.
  int counts[4] = {t.ssd, t.memory, t.skipped, t.other};
  int low[4], high[4];
  MPI_Allreduce(counts, low, 4, MPI_INT, MPI_MIN, w.comm);
  MPI_Allreduce(counts, high, 4, MPI_INT, MPI_MAX, w.comm);
  if (!std::equal(low, low + 4, high)) {
    return Error(Code::kInternal,
                 "ranks disagree on placements: ssd {}..{}, memory {}..{}, skipped {}..{}", low[0],
                 high[0], low[1], high[1], low[2], high[2]);
  }
  if (t.other != 0) {
    return Error(Code::kInternal, "{} checkpoints went to a tier other than memory and ssd",
                 t.other);
  }
  // Bytes per node (sum over the node's ranks), then the busiest node.
  double local[2] = {t.ssd_bytes, t.memory_bytes}, node[2] = {0, 0}, busiest[2] = {0, 0};
  MPI_Allreduce(local, node, 2, MPI_DOUBLE, MPI_SUM, w.node);
  MPI_Allreduce(node, busiest, 2, MPI_DOUBLE, MPI_MAX, w.comm);
  // A checkpoint lasts as long as its slowest rank: node bytes over the
  // slowest rank's time in calls of that tier.
  const double ssd_seconds = MaxOverRanks(w, t.ssd_seconds);
  const double memory_seconds = MaxOverRanks(w, t.memory_seconds);
  const double compute_seconds = MaxOverRanks(w, t.compute_seconds);
  const double last_written = MaxOverRanks(w, t.last_written);

  Outcome out;
  out.mode = "real";
  out.policy = policy.name;
  out.mb_per_rank = mb;
  out.ranks_per_node = sc.ranks_per_node;
  out.runtime_seconds = runtime;
  out.compute_seconds = compute_seconds;
  out.device_write_mbps = device_mbps;  // rank 0's reading (one disk per run here)
  out.ssd = t.ssd;
  out.memory = t.memory;
  out.skipped = t.skipped;
  const int written = t.ssd + t.memory;
  out.avg_interval_seconds = written > 0 ? last_written / written : std::nan("");
  out.last_gap_seconds = runtime - last_written;
  out.ssd_bytes_per_node = busiest[0];
  out.lifetime_years = busiest[0] > 0 ? sc.endurance.rating_bytes / (busiest[0] / runtime) /
                                            kSecondsPerYear
                                      : std::numeric_limits<double>::infinity();
  out.memory_gbps = t.memory > 0 ? busiest[1] / memory_seconds / 1e9 : std::nan("");
  out.ssd_gbps = t.ssd > 0 ? busiest[0] / ssd_seconds / 1e9 : std::nan("");
  out.ssd_tbw = sc.endurance.rating_bytes / 1e12;
  // Every rank saw the same placements at nearly the same times; the one
  // that would lose the most speaks for the job.
  SetRollback(calls, runtime, &out);
  out.rollback_memory_lost.versions = MaxOverRanks(w, out.rollback_memory_lost.versions);
  out.rollback_memory_lost.seconds = MaxOverRanks(w, out.rollback_memory_lost.seconds);
  out.rollback_intact.versions = MaxOverRanks(w, out.rollback_intact.versions);
  out.rollback_intact.seconds = MaxOverRanks(w, out.rollback_intact.seconds);
  return out;
}

// Fills the slowdowns of a real outcome from the run without checkpoints.
// `slowdown` is runtime / baseline - 1, the paper's figure. On a machine
// that other jobs share, the baseline (taken around this size's cases, see
// RunRealMode) may still have run under another load than this case:
// `slowdown_own` compares the runtime with the case's own compute phases
// instead, scaled by the baseline's ratio of runtime to compute time (its
// barrier waits): runtime / (compute x baseline / baseline compute) - 1.
// It cannot see checkpointing slow the compute phases themselves (none is
// expected: ComputePhase uses registers only, and no policy here drains in
// the background), and docs/clc.md says how a shared CPU biases each.
void ApplyBaseline(const Baseline& baseline, Outcome* out) {
  out->baseline_seconds = baseline.seconds;
  out->slowdown = out->runtime_seconds / baseline.seconds - 1;
  const double no_checkpoints =
      out->compute_seconds * baseline.seconds / baseline.compute_seconds;
  out->slowdown_own = out->runtime_seconds / no_checkpoints - 1;
}

// The machine's load average (first three fields of /proc/loadavg), for the
// log: other jobs on the node change every timing of --real.
std::string LoadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "unknown";
  char buf[128] = {};
  std::string out = std::fgets(buf, sizeof buf, f) != nullptr ? buf : "unknown";
  std::fclose(f);
  size_t end = 0;
  for (int field = 0; field < 3 && end != std::string::npos; ++field) {
    end = out.find(' ', end == 0 ? 0 : end + 1);
  }
  return out.substr(0, end);
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

void PrintJson(const Outcome& o) {
  const double total = o.ssd + o.memory + o.skipped;
  cairn_bench::PrintJsonLine({
      {"mode", o.mode},
      {"policy", o.policy},
      {"mb_per_rank", o.mb_per_rank},
      {"slowdown", o.slowdown},
      {"ssd_fraction", o.ssd / total},
      {"memory_fraction", o.memory / total},
      {"skipped_fraction", o.skipped / total},
      {"avg_interval_s", o.avg_interval_seconds},
      {"last_gap_s", o.last_gap_seconds},
      {"lifetime_years", o.lifetime_years},
      {"runtime_s", o.runtime_seconds},
      {"baseline_s", o.baseline_seconds},
      {"ssd_checkpoints", o.ssd},
      {"memory_checkpoints", o.memory},
      {"skipped_checkpoints", o.skipped},
      {"memory_gbps", o.memory_gbps},
      {"ssd_gbps", o.ssd_gbps},
      {"ssd_tbw", o.ssd_tbw},
      {"compute_s", o.compute_seconds},
      {"slowdown_own", o.slowdown_own},
      {"baseline_drift", o.baseline_drift},
      {"device_write_mbps", o.device_write_mbps},
      {"ranks_per_node", o.ranks_per_node},
      {"rollback_versions", o.rollback_memory_lost.versions},
      {"rollback_s", o.rollback_memory_lost.seconds},
      {"rollback_versions_intact", o.rollback_intact.versions},
      {"rollback_s_intact", o.rollback_intact.seconds},
  });
}

std::string Cell(double v, const char* format) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return "inf";
  return fmt::format(fmt::runtime(format), v);
}

// header: what was run, one line (mode specific). Outcomes of one policy are
// consecutive in `all`.
void PrintTable(const std::string& header, const std::vector<Outcome>& all) {
  std::printf("%s\n", header.c_str());
  std::printf("slowdown: runtime / baseline - 1 (baseline: the same compute without "
              "checkpoints); runtime x = 1 + slowdown;\nown: against this run's own compute "
              "phases (RunReal); dev: write rate of the ssd tier's disk, all writers;\n"
              "rollback: mean over a failure at a random time, restored from the SSD after the "
              "node's memory is lost\n(versions behind, work lost), and with memory intact "
              "(work lost)\n\n");
  std::printf("%-16s %5s %9s %8s %8s %5s %6s %5s %9s %9s %8s %8s %8s %7s %8s %8s\n", "policy",
              "MB", "slowdown", "own", "runtime", "ssd", "memory", "skip", "interval",
              "lifetime", "mem GB/s", "ssd GB/s", "dev MB/s", "rb ver", "rb s", "rb s ok");
  std::string current;
  double sum_slowdown = 0, sum_own = 0, sum_life = 0, sum_ssd = 0, sum_memory = 0, sum_skip = 0;
  RollbackDistance sum_lost, sum_intact;
  int n = 0, n_life = 0;
  auto summary = [&]() {
    if (n == 0) return;
    std::printf("%-16s %5s %8.1f%% %7.1f%% %7.2fx %4.0f%% %5.0f%% %4.0f%% %9s %9s %8s %8s %8s "
                "%7.2f %7.1fs %7.1fs  (mean over sizes)\n\n",
                current.c_str(), "mean", 100 * sum_slowdown / n, 100 * sum_own / n,
                1 + sum_slowdown / n, 100 * sum_ssd / n, 100 * sum_memory / n, 100 * sum_skip / n,
                "", n_life == n ? fmt::format("{:.2f} y", sum_life / n).c_str() : "inf", "", "",
                "", sum_lost.versions / n, sum_lost.seconds / n, sum_intact.seconds / n);
  };
  for (const auto& o : all) {
    if (o.policy != current) {
      summary();
      current = o.policy;
      sum_slowdown = sum_own = sum_life = sum_ssd = sum_memory = sum_skip = 0;
      sum_lost = sum_intact = {};
      n = n_life = 0;
    }
    double total = o.ssd + o.memory + o.skipped;
    std::printf("%-16s %5d %8.1f%% %7.1f%% %7.2fx %4.0f%% %5.0f%% %4.0f%% %8ss %7s y %8s %8s %8s "
                "%7.2f %7.1fs %7.1fs\n",
                o.policy.c_str(), o.mb_per_rank, 100 * o.slowdown, 100 * o.slowdown_own,
                1 + o.slowdown, 100 * o.ssd / total, 100 * o.memory / total,
                100 * o.skipped / total, Cell(o.avg_interval_seconds, "{:.1f}").c_str(),
                Cell(o.lifetime_years, "{:.2f}").c_str(), Cell(o.memory_gbps, "{:.2f}").c_str(),
                Cell(o.ssd_gbps, "{:.2f}").c_str(), Cell(o.device_write_mbps, "{:.1f}").c_str(),
                o.rollback_memory_lost.versions, o.rollback_memory_lost.seconds,
                o.rollback_intact.seconds);
    sum_lost.versions += o.rollback_memory_lost.versions;
    sum_lost.seconds += o.rollback_memory_lost.seconds;
    sum_intact.seconds += o.rollback_intact.seconds;
    sum_slowdown += o.slowdown;
    sum_own += o.slowdown_own;
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
// the model.
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
  if (!opt.json) {
    PrintTable(fmt::format("clc_micro --model: {} ranks/node, {} iterations of {:.3g} s compute + "
                           "checkpoint; SSD {:.4g} MB/s, {:.4g} PBW, {:.3g}-year warranty; memory "
                           "tier {:.4g} GiB/node; bound {:.3g}; 9:1 = every {}th to SSD",
                           opt.ranks_per_node, opt.iterations, opt.compute_seconds, opt.ssd_mbps,
                           opt.pbw, opt.warranty_years, opt.memory_capacity_gib, opt.bound,
                           opt.ratio),
               all);
  }
  return 0;
}

// The auto rating of --real: a short always-SSD probe per size (a few
// checkpoints without compute) gives the SSD checkpoint time t_s; the
// always-SSD run would write b_s = node bytes / (compute + t_s); the rating
// R makes the mean over sizes of R / b_s equal --lifetime-years.
Result<double> ProbeRating(const Options& opt, const RealSetup& setup, const Scenario& base,
                           const PolicyCase& always_ssd) {
  const World& w = *setup.world;
  double sum_inverse_rate = 0;
  for (int mb : opt.sizes_mb) {
    Scenario sc = base;
    sc.iterations = 4;
    sc.bytes_per_rank = static_cast<uint64_t>(mb) * static_cast<uint64_t>(kMB);
    RealSetup probe = setup;
    probe.work = 0;
    probe.verbose = false;
    PolicyCase p = always_ssd;
    p.name = "probe";
    CAIRN_ASSIGN_OR_RETURN(Outcome o, RunReal(sc, probe, p));
    const double node_bytes = static_cast<double>(sc.bytes_per_rank) * base.ranks_per_node;
    const double t_ssd = node_bytes / (o.ssd_gbps * 1e9);
    const double rate = node_bytes / (opt.compute_seconds + t_ssd);
    sum_inverse_rate += 1 / rate;
    if (w.rank == 0) {
      std::fprintf(stderr,
                   "clc_micro: probe %d MB/rank: SSD checkpoint %.3f s (%.2f GB/s per node); "
                   "always-SSD would write %.1f MB/s\n",
                   mb, t_ssd, o.ssd_gbps, rate / kMB);
    }
  }
  const double mean_inverse = sum_inverse_rate / static_cast<double>(opt.sizes_mb.size());
  return opt.lifetime_years * kSecondsPerYear / mean_inverse;
}

int RunRealMode(const Options& opt, const std::vector<PolicyCase>& policies,
                cairn_bench::RemovedAtExit& removed_at_exit) {
  World w;
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  // The node as Cairn sees it (topology.ranks_per_node, else shared memory).
  if (opt.ranks_per_node > 0) {
    MPI_Comm_split(w.comm, w.rank / opt.ranks_per_node, w.rank, &w.node);
  } else {
    MPI_Comm_split_type(w.comm, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &w.node);
  }
  MPI_Comm_rank(w.node, &w.node_rank);
  MPI_Comm_size(w.node, &w.node_size);
  int ranks_per_node = 0;  // the largest node
  MPI_Allreduce(&w.node_size, &ranks_per_node, 1, MPI_INT, MPI_MAX, w.comm);
  auto finish = [&](int code) {
    MPI_Comm_free(&w.node);
    return code;
  };

  if (w.rank == 0) {
    // CAIRN_* variables override every case's configuration file.
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "CAIRN_", 6) == 0) {
        std::fprintf(stderr, "clc_micro: warning: %s overrides the configuration of every case\n",
                     *e);
      }
    }
  }

  const long long id = cairn_bench::SharedRunId(w.comm);
  RealSetup setup;
  setup.world = &w;
  setup.topology_ranks_per_node = opt.ranks_per_node;
  setup.keep_data = opt.keep_data;
  setup.verbose = opt.verbose;
  std::string error;
  {
    std::error_code ec;
    std::filesystem::create_directories(opt.dir, ec);
    auto dir = std::filesystem::absolute(opt.dir, ec);
    if (!ec) {
      setup.run_dir = (dir / ("run-" + std::to_string(id))).lexically_normal().string();
      setup.shm_dir = (std::filesystem::absolute(opt.shm_dir, ec) /
                       ("cairn-clc-micro-" + std::to_string(getuid()) + "-" + std::to_string(id)))
                          .lexically_normal()
                          .string();
    }
    if (!ec && w.node_rank == 0) {
      std::filesystem::create_directories(setup.run_dir, ec);
      if (!ec) std::filesystem::create_directories(setup.shm_dir, ec);
      if (!ec && !opt.keep_data) {
        removed_at_exit.Add(setup.run_dir);
        removed_at_exit.Add(setup.shm_dir);
      }
    }
    if (ec) error = "creating the run directories under " + opt.dir + ": " + ec.message();
  }
  const int largest_mb = *std::max_element(opt.sizes_mb.begin(), opt.sizes_mb.end());
  const uint64_t largest = static_cast<uint64_t>(largest_mb) * static_cast<uint64_t>(kMB);
  std::unique_ptr<char[]> buffer(new (std::nothrow) char[largest]);
  if (error.empty() && !buffer) error = fmt::format("cannot allocate {} bytes", largest);
  if (!AllTrue(w, error.empty())) {
    if (!error.empty()) std::fprintf(stderr, "clc_micro: rank %d: %s\n", w.rank, error.c_str());
    return finish(1);
  }
  // Data that differ between ranks and between bytes; faulted in now.
  for (uint64_t i = 0; i < largest; ++i) {
    buffer[i] = static_cast<char>((i * 2654435761u) >> 13 ^ static_cast<uint64_t>(w.rank) * 97);
  }
  setup.buffer = buffer.get();
  setup.work = CalibrateWork(w, opt.compute_seconds);

  Scenario base;
  base.iterations = opt.iterations;
  base.compute_seconds = opt.compute_seconds;
  base.ranks_per_node = ranks_per_node;
  base.memory_capacity = 0;  // unlimited, but for the +size case
  base.endurance.warranty_seconds = opt.warranty_years * kSecondsPerYear;
  base.window = opt.window;
  const PolicyCase always_ssd = *MakePolicy("always-ssd", opt);
  bool auto_rating = opt.pbw == 0;
  if (auto_rating) {
    auto rating = ProbeRating(opt, setup, base, always_ssd);
    if (!rating.ok()) {
      if (w.rank == 0) {
        std::fprintf(stderr, "clc_micro: probe: %s\n", rating.status().ToString().c_str());
      }
      return finish(1);
    }
    base.endurance.rating_bytes = *rating;
  } else {
    base.endurance.rating_bytes = opt.pbw * 1e15;
  }
  // The +size case: the paper's 512 MiB per rank for 100..1000 MB, scaled to
  // the largest size, per node, with room for the version still held.
  const double limit_per_rank = kPaperLimitOverLargest * static_cast<double>(largest);
  const uint64_t size_capacity =
      opt.memory_capacity_gib >= 0
          ? static_cast<uint64_t>(opt.memory_capacity_gib * (1ull << 30))
          : static_cast<uint64_t>(2 * ranks_per_node * limit_per_rank);
  const std::string header = fmt::format(
      "clc_micro --real: {} ranks, {} per node; {} iterations of {:.3g} s compute ({} rounds) + "
      "checkpoint; memory tier {}, ssd tier {}; SSD {:.6g} TBW{} and {:.3g}-year warranty "
      "(LE cap {:.1f} MB/s per node); clc-le+ple+size memory capacity {:.1f} MB/node; "
      "bound {:.3g}; "
      "9:1 = every {}th to SSD",
      w.size, ranks_per_node, opt.iterations, opt.compute_seconds, setup.work, setup.shm_dir,
      setup.run_dir, base.endurance.rating_bytes / 1e12,
      auto_rating ? fmt::format(" (auto: always-SSD {:.3g} y)", opt.lifetime_years) : "",
      opt.warranty_years, base.endurance.rating_bytes / base.endurance.warranty_seconds / kMB,
      static_cast<double>(size_capacity) / kMB, opt.bound, opt.ratio);
  if (w.rank == 0) {
    std::fprintf(stderr, "%s\nclc_micro: load average at start: %s\n", header.c_str(),
                 LoadAverage().c_str());
  }

  std::vector<Outcome> all;
  int status = 0;
  const int cases = static_cast<int>(opt.sizes_mb.size() * policies.size());
  int done = 0;
  for (int mb : opt.sizes_mb) {
    Scenario sc = base;
    sc.bytes_per_rank = static_cast<uint64_t>(mb) * static_cast<uint64_t>(kMB);
    // The baseline is measured before and after this size's cases; each case
    // is compared with the two interpolated at its place in the sequence,
    // which follows a load that drifts steadily.
    const Baseline before = MeasureBaseline(w, sc, setup);
    std::vector<Outcome> block;
    for (const auto& p : policies) {
      Scenario case_sc = sc;
      if (p.settings.policy == PlacementPolicy::kClc && p.settings.size) {
        case_sc.memory_capacity = size_capacity;
      }
      auto out = RunReal(case_sc, setup, p);
      ++done;
      if (!out.ok()) {
        if (w.rank == 0) {
          std::fprintf(stderr, "clc_micro: %s at %d MB: %s\n", p.name.c_str(), mb,
                       out.status().ToString().c_str());
        }
        status = 1;
        continue;
      }
      if (w.rank == 0) {
        std::fprintf(stderr,
                     "clc_micro: [%d/%d] %s %d MB: runtime %.2f s (compute %.2f s), "
                     "ssd/memory/skip %d/%d/%d, lifetime %s y, device %s MB/s\n",
                     done, cases, p.name.c_str(), mb, out->runtime_seconds, out->compute_seconds,
                     out->ssd, out->memory, out->skipped,
                     Cell(out->lifetime_years, "{:.2f}").c_str(),
                     Cell(out->device_write_mbps, "{:.1f}").c_str());
      }
      block.push_back(*out);
    }
    const Baseline after = MeasureBaseline(w, sc, setup);
    if (w.rank == 0) {
      std::fprintf(stderr,
                   "clc_micro: %d MB/rank: baseline %.2f s before, %.2f s after (compute %.2f, "
                   "%.2f s)\n",
                   mb, before.seconds, after.seconds, before.compute_seconds,
                   after.compute_seconds);
    }
    for (size_t k = 0; k < block.size(); ++k) {
      const double f = static_cast<double>(k + 1) / static_cast<double>(block.size() + 1);
      Baseline at;
      at.seconds = before.seconds + f * (after.seconds - before.seconds);
      at.compute_seconds =
          before.compute_seconds + f * (after.compute_seconds - before.compute_seconds);
      ApplyBaseline(at, &block[k]);
      block[k].baseline_drift = after.seconds / before.seconds - 1;
      if (w.rank == 0 && opt.json) PrintJson(block[k]);
    }
    all.insert(all.end(), block.begin(), block.end());
  }
  if (w.rank == 0) {
    std::fprintf(stderr, "clc_micro: load average at end: %s\n", LoadAverage().c_str());
  }
  if (w.node_rank == 0 && !opt.keep_data) {
    std::error_code ec;
    std::filesystem::remove_all(setup.run_dir, ec);
    std::filesystem::remove_all(setup.shm_dir, ec);
  }
  if (w.rank == 0 && !opt.json) {
    // By policy, as --model prints.
    std::stable_sort(all.begin(), all.end(), [&](const Outcome& a, const Outcome& b) {
      auto rank_of = [&](const std::string& name) {
        for (size_t i = 0; i < policies.size(); ++i) {
          if (policies[i].name == name) return i;
        }
        return policies.size();
      };
      return rank_of(a.policy) < rank_of(b.policy);
    });
    PrintTable(header, all);
  }
  return finish(status);
}

int Run(int argc, char** argv) {
  // Only the real mode is an MPI program; --model runs without mpirun.
  const bool real = std::any_of(argv + 1, argv + argc,
                                [](const char* a) { return std::strcmp(a, "--real") == 0; });
  int rank = 0;
  std::optional<cairn_bench::RemovedAtExit> removed_at_exit;
  if (real) {
    removed_at_exit.emplace();  // before MPI_Init: it forks
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  auto done = [&](int code) {
    if (real) MPI_Finalize();
    return code;
  };
  FILE* err = rank == 0 ? stderr : nullptr;  // one rank speaks for all
  Options opt;
  if (auto exit_code = ParseOptions(argc, argv, rank == 0, &opt)) return done(*exit_code);
  ApplyModeDefaults(&opt);
  std::vector<PolicyCase> policies;
  for (const auto& name : opt.policies) {
    auto p = MakePolicy(name, opt);
    Status s = p ? p->settings.Validate() : Status::Ok();
    if (!p || !s.ok()) {
      if (err) {
        std::fprintf(err, "clc_micro: %s\n",
                     p ? s.ToString().c_str()
                       : ("--policies: unknown policy '" + name + "' (see --help)").c_str());
      }
      return done(2);
    }
    policies.push_back(*p);
  }
  return done(real ? RunRealMode(opt, policies, *removed_at_exit) : RunModelMode(opt, policies));
}

}  // namespace
}  // namespace cairn

int main(int argc, char** argv) { return cairn::Run(argc, argv); }
