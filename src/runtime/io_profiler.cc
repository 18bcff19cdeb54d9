#include "runtime/io_profiler.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <latch>
#include <thread>

#include <fmt/format.h>

#include "env/cpufreq.h"
#include "env/process_info.h"
#include "env/rapl.h"
#include "runtime/catalog.h"

namespace cairn {

std::vector<int> ParallelismLevels(int max_parallelism) {
  std::vector<int> out;
  int p = std::max(1, max_parallelism);
  if (p <= 8) {
    for (int i = 1; i <= p; ++i) out.push_back(i);
  } else {
    for (int i = 1; i < p; i *= 2) out.push_back(i);
    out.push_back(p);
  }
  return out;
}

namespace {

std::string SizeText(uint64_t b) {
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

// --- the plan: what every rank measures ------------------------------------

// What the sweep measures, the same on every rank, and rank 0's node-wide
// controls (only rank 0 sets the frequency and reads RAPL, so that ranks
// never undo each other's cpufreq settings).
struct SweepPlan {
  Comm* comm = nullptr;
  bool rank0 = false;
  std::vector<std::unique_ptr<Tier>> tiers;
  int64_t tier_mask = 0;        // bit k: TierKind k is measured
  std::vector<uint64_t> blocks;  // ascending block sizes
  // Ranks on rank 0's node, and this rank's place among them (-1: on
  // another node). Two or more make the parallelism processes.
  int local_ranks = 0;
  int local_index = -1;
  bool processes = false;
  int hardware_threads = 1;
  int max_parallelism = 0;
  std::vector<int> levels;
  size_t frequency_count = 0;
  std::vector<uint32_t> frequencies;  // rank 0 only
  RaplMeter rapl;                     // rank 0 only
  std::unique_ptr<CpuFreqControl> cpufreq;  // rank 0 only

  // This rank's writers at parallelism p: the first p ranks of the node with
  // one each, or rank 0 with p threads.
  int Writers(int p) const {
    if (processes) return local_index >= 0 && local_index < p ? 1 : 0;
    return rank0 ? p : 0;
  }
  bool use_rapl() const { return rapl.available(); }
};

Status OpenTiers(Env* env, const Config& config, int node, SweepPlan* plan) {
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN(auto tier, OpenNodeTier(env, config, static_cast<TierKind>(k), node));
    if (!tier) continue;
    plan->tiers.push_back(std::move(tier));
    plan->tier_mask |= int64_t{1} << k;
  }
  if (plan->tiers.empty()) return Error(Code::kConfig, "no tier is enabled in the configuration");
  return Status::Ok();
}

Status FindNodeRanks(SweepPlan* plan) {
  Comm& comm = *plan->comm;
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> nodes, comm.Allgather(comm.node()));
  for (int r = 0; r < comm.size(); ++r) {
    if (nodes[static_cast<size_t>(r)] != nodes[0]) continue;
    if (r == comm.rank()) plan->local_index = plan->local_ranks;
    ++plan->local_ranks;
  }
  plan->processes = plan->local_ranks >= 2;
  return Status::Ok();
}

// Rank 0: the power source, the frequencies to sweep and P. kConfig when
// neither RAPL nor a power table gives the power.
Status OpenNodeControls(Env* env, const ProfilerOptions& options, SweepPlan* plan) {
  plan->rapl = RaplMeter::Open(env, options.sys_root);
  if (plan->processes) {
    plan->max_parallelism = options.max_parallelism > 0
                                ? std::min(options.max_parallelism, plan->local_ranks)
                                : plan->local_ranks;
  } else {
    plan->max_parallelism =
        options.max_parallelism > 0 ? options.max_parallelism : plan->hardware_threads;
  }
  if (!plan->rapl.available() && !options.power_table) {
    return Error(Code::kConfig,
                 "no power source: RAPL is not readable ({}); give a power table "
                 "(--power-table FILE.json, docs/model.md \"Measuring a profile\")",
                 plan->rapl.reason());
  }
  plan->cpufreq = CpuFreqControl::Open(env, options.sys_root, options.cpuinfo_path);
  plan->frequencies = plan->cpufreq->can_set()
                          ? plan->cpufreq->frequencies()
                          : std::vector<uint32_t>{plan->cpufreq->current_khz()};
  return Status::Ok();
}

// Every rank runs the same loops, of rank 0's sizes, over the same tiers.
Status AgreeOnSizes(SweepPlan* plan) {
  Comm& comm = *plan->comm;
  std::vector<int64_t> sizes{plan->rank0 ? static_cast<int64_t>(plan->frequencies.size()) : 0,
                             plan->rank0 ? plan->max_parallelism : 0,
                             plan->rank0 ? plan->tier_mask : 0};
  CAIRN_RETURN_IF_ERROR(comm.AllreduceMax(sizes));
  plan->frequency_count = static_cast<size_t>(sizes[0]);
  plan->max_parallelism = static_cast<int>(sizes[1]);
  plan->levels = ParallelismLevels(plan->max_parallelism);
  return comm.Agree(plan->tier_mask == sizes[2]
                        ? Status::Ok()
                        : Error(Code::kConfig, "this rank's configuration enables other tiers "
                                               "than rank 0's"));
}

// Collective. Checks the options, opens the tiers and agrees on the plan;
// an error on any rank is every rank's.
Result<SweepPlan> MakePlan(Env* env, const Config& config, const ProfilerOptions& options,
                           Comm* comm) {
  SweepPlan plan;
  plan.comm = comm;
  plan.rank0 = comm->rank() == 0;
  if (options.bytes == 0) return Error(Code::kInvalidArgument, "bytes per measurement must be > 0");
  plan.blocks = options.block_sizes;
  std::sort(plan.blocks.begin(), plan.blocks.end());
  plan.blocks.erase(std::unique(plan.blocks.begin(), plan.blocks.end()), plan.blocks.end());
  if (plan.blocks.empty() || plan.blocks.front() == 0) {
    return Error(Code::kInvalidArgument, "block sizes must be > 0");
  }
  CAIRN_RETURN_IF_ERROR(OpenTiers(env, config, options.node, &plan));
  CAIRN_RETURN_IF_ERROR(FindNodeRanks(&plan));
  plan.hardware_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  CAIRN_RETURN_IF_ERROR(
      comm->Agree(plan.rank0 ? OpenNodeControls(env, options, &plan) : Status::Ok()));
  CAIRN_RETURN_IF_ERROR(AgreeOnSizes(&plan));
  return plan;
}

// --- what the profile says about itself (rank 0) ----------------------------

// The table's idle and per-core watts for each swept frequency.
void ApplyPowerTable(const PowerTable& table, const SweepPlan& plan, ProfileResult* result) {
  IoProfile& prof = result->profile;
  for (uint32_t f : plan.frequencies) {
    bool exact = true;
    size_t row = table.RowFor(f, &exact);
    prof.idle_w.push_back(table.idle_w[row]);
    prof.core_busy_w.push_back(table.core_busy_w[row]);
    if (!exact) {
      result->notes.push_back(fmt::format("power table has no row for {} kHz: used {} kHz", f,
                                          table.frequencies_khz[row]));
    }
  }
}

std::string ParallelismNote(const ProfilerOptions& options, const SweepPlan& plan) {
  if (plan.processes) {
    return fmt::format(
        "parallelism is processes: 1..{} of the {} ranks mpirun put on this node each write, "
        "then read, their own file at once, started by a barrier; throughput is all bytes over "
        "the slowest rank's time, busy cores the writing ranks' CPU time over it; ranks not "
        "writing wait in MPI, which may keep a core busy polling",
        plan.max_parallelism, plan.local_ranks);
  }
  if (plan.comm->size() > 1) {
    return fmt::format(
        "parallelism is threads of rank 0: mpirun ran {} processes but only rank 0 on this node "
        "(process parallelism needs 2 or more ranks on the node)",
        plan.comm->size());
  }
  return "parallelism is threads of one process (run alone; process parallelism not measured: "
         "run it under mpirun with one rank per writer)";
}

std::string PowerNote(const ProfilerOptions& options, const SweepPlan& plan) {
  if (plan.use_rapl()) {
    std::string zones;
    for (const auto& z : plan.rapl.zone_names()) zones += (zones.empty() ? "" : "+") + z;
    return "power: measured with RAPL (" + zones +
           ": CPU packages and DRAM only, not the whole node)";
  }
  return fmt::format("power: NOT measured (RAPL unavailable: {}); from the user's power table {}",
                     plan.rapl.reason(), options.power_table_name);
}

// Notes that make the profile honest about what it is.
void DescribeSetup(const ProfilerOptions& options, const SweepPlan& plan, ProfileResult* result) {
  std::vector<std::string>& notes = result->notes;
  notes.push_back(ParallelismNote(options, plan));
  if (plan.processes && options.max_parallelism > plan.local_ranks) {
    notes.push_back(fmt::format(
        "--max-parallelism {} exceeds the {} ranks on this node: measured up to {}",
        options.max_parallelism, plan.local_ranks, plan.local_ranks));
  }
  if (plan.comm->nodes() > 1) {
    notes.push_back(fmt::format(
        "ranks on the other {} node(s) measured nothing; the profile is of rank 0's node",
        plan.comm->nodes() - 1));
  }
  const CpuFreqControl& cpufreq = *plan.cpufreq;
  if (cpufreq.can_set()) {
    notes.push_back(fmt::format("DVFS: swept {} frequencies through the {}",
                                plan.frequencies.size(), cpufreq.method_name()));
  } else {
    notes.push_back(fmt::format(
        "DVFS unavailable ({}); recorded the current frequency {} kHz{}", cpufreq.reason(),
        cpufreq.current_khz(),
        cpufreq.current_source().empty() ? " (unknown)" : " from " + cpufreq.current_source()));
  }
  notes.push_back(PowerNote(options, plan));
  std::string sizes;
  for (uint64_t b : plan.blocks) sizes += (sizes.empty() ? "" : ", ") + SizeText(b);
  notes.push_back(fmt::format("{} per measurement; one grid per block size: {}",
                              SizeText(options.bytes), sizes));
}

void DescribeTier(const Tier& tier, std::vector<std::string>* notes) {
  if (!tier.persists()) {
    notes->push_back(std::string(tier.name()) +
                     ": memory file system; reads come from RAM by nature");
    return;
  }
  const char* how = tier.config().direct_io ? "O_DIRECT (where the file system allows)"
                                            : "buffered (direct_io = false)";
  notes->push_back(std::string(tier.name()) + ": writes " + how +
                   " + fsync; page cache evicted before reads (fdatasync + POSIX_FADV_DONTNEED), "
                   "so reads come from the device except on a memory file system (tmpfs), which "
                   "keeps its pages");
}

// Rank 0's profile header: frequencies, cores, power source and table.
void StartProfile(const ProfilerOptions& options, const SweepPlan& plan, ProfileResult* result) {
  IoProfile& prof = result->profile;
  prof.frequencies_khz = plan.frequencies;
  prof.cores = plan.hardware_threads;
  prof.power_source = plan.use_rapl() ? PowerSource::kRapl : PowerSource::kTable;
  if (options.power_table) ApplyPowerTable(*options.power_table, plan, result);
  DescribeSetup(options, plan, result);
}

// The profile's grids of tier `name`, made on first use.
DeviceIoProfile& DeviceGrids(const ProfilerOptions& options, const SweepPlan& plan,
                             const std::string& name, IoProfile* prof) {
  for (auto& d : prof->devices) {
    if (d.name == name) return d;
  }
  DeviceIoProfile& dev = prof->devices.emplace_back();
  dev.name = name;
  dev.parallelism = plan.levels;
  dev.parallelism_kind = plan.processes ? ParallelismKind::kProcesses : ParallelismKind::kThreads;
  if (options.power_table) {
    auto it = options.power_table->device_active_w.find(dev.name);
    if (it != options.power_table->device_active_w.end()) {
      dev.active_w[0] = it->second[0];
      dev.active_w[1] = it->second[1];
    }
  }
  const size_t nf = prof->frequencies_khz.size();
  const std::vector<double> row(plan.levels.size(), 0);
  for (uint64_t block : plan.blocks) {
    IoBlockProfile& b = dev.blocks.emplace_back();
    b.block_size = block;
    for (IoOpProfile& o : b.ops) {
      o.throughput_bps.assign(nf, row);
      o.busy_cores.assign(nf, row);
      if (plan.use_rapl()) o.watts.assign(nf, row);
    }
  }
  return dev;
}

// --- measurement -------------------------------------------------------------

struct Measured {
  double seconds = 0;      // the slowest rank's
  double cpu_seconds = 0;  // every rank's together
  double joules = 0;       // rank 0's RAPL zones, over rapl_seconds
  double rapl_seconds = 0;
};

// One timed pass: `threads` threads of this rank (0: none) each run
// body(thread), the threads of every rank released together after a barrier.
// Thread creation is outside the timed span; the threads start through env,
// and one that cannot start fails the pass on every rank. Collective.
Result<Measured> TimedPass(Comm& comm, Env* env, int threads, Clock* clock, const RaplMeter& rapl,
                           const std::function<Status(int)>& body) {
  std::vector<Status> status(static_cast<size_t>(threads));
  std::latch ready(threads + 1);
  std::latch go(1);
  std::atomic<bool> cancelled{false};
  std::vector<std::unique_ptr<Thread>> pool;
  Status started;
  for (int t = 0; t < threads; ++t) {
    auto thread = env->StartThread(ThreadOptions{.name = "cairn-profile"}, [&, t] {
      ready.count_down();
      go.wait();
      if (!cancelled) status[static_cast<size_t>(t)] = body(t);
    });
    if (!thread.ok()) {
      // The threads that did start run nothing; the pass still takes part
      // in the collectives below so that every rank learns of the failure.
      started = thread.status().Annotate(fmt::format("profiler thread {} of {}", t + 1, threads));
      cancelled = true;
      ready.count_down(threads - t);
      break;
    }
    pool.push_back(std::move(thread).value());
  }
  ready.arrive_and_wait();
  Status barrier = comm.Barrier();
  if (!barrier.ok()) cancelled = true;
  std::vector<uint64_t> e0;
  double rapl_t0 = 0;
  if (rapl.available()) {
    auto r = rapl.Read();
    if (r.ok()) e0 = *r;
    rapl_t0 = clock->MonotonicSeconds();
  }
  const double cpu0 = ProcessCpuSeconds();
  const double t0 = clock->MonotonicSeconds();
  go.count_down();
  for (auto& th : pool) th->Join();
  const double seconds = threads > 0 ? clock->MonotonicSeconds() - t0 : 0;
  const double cpu = threads > 0 ? ProcessCpuSeconds() - cpu0 : 0;
  CAIRN_RETURN_IF_ERROR(barrier);
  Status mine = started;
  for (const Status& s : status) {
    if (mine.ok()) mine = s;
  }
  CAIRN_RETURN_IF_ERROR(comm.Agree(mine));
  std::vector<int64_t> slowest_ns{std::llround(seconds * 1e9)};
  CAIRN_RETURN_IF_ERROR(comm.AllreduceMax(slowest_ns));
  std::vector<double> cpu_total{cpu};
  CAIRN_RETURN_IF_ERROR(comm.AllreduceSum(cpu_total));
  Measured m;
  m.seconds = static_cast<double>(slowest_ns[0]) * 1e-9;
  m.cpu_seconds = cpu_total[0];
  if (!e0.empty()) {
    auto r = rapl.Read();
    if (r.ok()) {
      m.joules = rapl.JoulesBetween(e0, *r);
      m.rapl_seconds = clock->MonotonicSeconds() - rapl_t0;
    }
  }
  return m;
}

// Where one tier's sweep stands: the point being measured and its files.
struct Point {
  Tier* tier = nullptr;
  std::string scratch;  // this rank's scratch directory in the tier
  size_t frequency_index = 0;
  size_t level_index = 0;
  size_t block_index = 0;
  int writers = 0;           // this rank's
  uint64_t per_writer = 0;   // blocks each writer moves
  uint64_t bytes = 0;        // all writers together

  std::string File(int writer) const { return JoinPath(scratch, fmt::format("t{}", writer)); }
};

class Sweep {
 public:
  Sweep(Env* env, const ProfilerOptions& options, SweepPlan* plan, ProfileResult* result)
      : env_(env),
        options_(options),
        plan_(*plan),
        comm_(*plan->comm),
        clock_(options.clock ? options.clock : Clock::Real()),
        result_(result),
        pattern_(plan->blocks.back()) {
    for (size_t i = 0; i < pattern_.size(); ++i) pattern_[i] = static_cast<uint8_t>(i * 131 + 7);
    total_ = static_cast<int>(plan_.frequency_count * plan_.tiers.size() * plan_.levels.size() *
                              plan_.blocks.size());
  }

  // Every failure is agreed on before the next collective, so that all
  // ranks leave the loops at the same point.
  Status Run() {
    for (size_t fi = 0; fi < plan_.frequency_count; ++fi) {
      const bool set = plan_.rank0 && plan_.cpufreq->can_set();
      CAIRN_RETURN_IF_ERROR(
          comm_.Agree(set ? plan_.cpufreq->Set(plan_.frequencies[fi]) : Status::Ok()));
      for (auto& tier : plan_.tiers) CAIRN_RETURN_IF_ERROR(RunTier(*tier, fi));
    }
    return Status::Ok();
  }

  int total() const { return total_; }

 private:
  Status RunTier(Tier& tier, size_t fi) {
    if (plan_.rank0 && fi == 0) DescribeTier(tier, &result_->notes);
    // Per rank: ranks of one node may not share a pid namespace.
    Point point;
    point.tier = &tier;
    point.frequency_index = fi;
    point.scratch =
        JoinPath(tier.root(), fmt::format(".cairn-profile-{}-{}", ::getpid(), comm_.rank()));
    const bool writes = plan_.Writers(plan_.levels.back()) > 0;
    CAIRN_RETURN_IF_ERROR(comm_.Agree(writes ? env_->CreateDirs(point.scratch) : Status::Ok()));
    Status status;
    for (size_t pi = 0; pi < plan_.levels.size() && status.ok(); ++pi) {
      for (size_t bi = 0; bi < plan_.blocks.size() && status.ok(); ++bi) {
        point.level_index = pi;
        point.block_index = bi;
        status = Measure(point);
      }
    }
    if (writes) (void)env_->DeleteRecursive(point.scratch);
    return status;
  }

  // Writes, evicts and reads the files of one point; rank 0 records it.
  Status Measure(Point& point) {
    const int p = plan_.levels[point.level_index];
    const uint64_t block = plan_.blocks[point.block_index];
    if (plan_.rank0 && options_.progress) {
      options_.progress(done_, total_,
                        fmt::format("{} p={} {} @{} kHz", point.tier->name(), p, SizeText(block),
                                    plan_.frequencies[point.frequency_index]));
    }
    ++done_;
    point.writers = plan_.Writers(p);
    // Each writer moves a whole number of blocks, at least one.
    point.per_writer = std::max<uint64_t>(1, (options_.bytes / p + block - 1) / block);
    point.bytes = point.per_writer * block * static_cast<uint64_t>(p);
    CAIRN_ASSIGN_OR_RETURN(Measured wrote, WritePass(point, block));
    // A read of pages the write left in the page cache measures memory, not
    // the device. (The memory tier's pages are the file.)
    Status evicted;
    for (int t = 0; t < point.writers && point.tier->persists() && evicted.ok(); ++t) {
      evicted = env_->EvictFromCache(point.File(t));
    }
    CAIRN_RETURN_IF_ERROR(comm_.Agree(evicted));
    CAIRN_ASSIGN_OR_RETURN(Measured read, ReadPass(point, block));
    if (plan_.rank0) {
      Record(point, IoOp::kWrite, wrote);
      Record(point, IoOp::kRead, read);
    }
    return Status::Ok();
  }

  Result<Measured> WritePass(const Point& point, uint64_t block) {
    WriteOptions wo;
    wo.direct_io = point.tier->persists() && point.tier->config().direct_io;
    return TimedPass(comm_, env_, point.writers, clock_, plan_.rapl, [&](int t) -> Status {
      CAIRN_ASSIGN_OR_RETURN(auto f, env_->NewWritableFile(point.File(t), wo));
      for (uint64_t i = 0; i < point.per_writer; ++i) {
        CAIRN_RETURN_IF_ERROR(f->Append(pattern_.data(), block));
      }
      if (point.tier->persists()) CAIRN_RETURN_IF_ERROR(f->Sync());
      return f->Close();
    });
  }

  Result<Measured> ReadPass(const Point& point, uint64_t block) {
    std::atomic<uint64_t> sum{0};
    return TimedPass(comm_, env_, point.writers, clock_, plan_.rapl, [&](int t) -> Status {
      CAIRN_ASSIGN_OR_RETURN(auto f, env_->NewReadableFile(point.File(t)));
      std::vector<uint8_t> buf(block);
      uint64_t local = 0;
      for (uint64_t i = 0; i < point.per_writer; ++i) {
        CAIRN_RETURN_IF_ERROR(f->ReadAt(i * block, buf.data(), block));
        local += buf[i % block];  // touch the data
      }
      sum += local;
      return Status::Ok();
    });
  }

  // Rank 0: one sample and its place in the device's grids.
  void Record(const Point& point, IoOp op, const Measured& m) {
    ProfileSample s;
    s.device = point.tier->name();
    s.op = op;
    s.frequency_khz = plan_.frequencies[point.frequency_index];
    s.parallelism = plan_.levels[point.level_index];
    s.block_size = plan_.blocks[point.block_index];
    s.bytes = point.bytes;
    s.seconds = std::max(m.seconds, 1e-9);
    s.throughput_bps = static_cast<double>(s.bytes) / s.seconds;
    s.busy_cores =
        std::clamp(m.cpu_seconds / s.seconds, 0.0, static_cast<double>(plan_.hardware_threads));
    s.watts = plan_.use_rapl() ? m.joules / std::max(m.rapl_seconds, 1e-9) : 0;
    result_->samples.push_back(s);
    DeviceIoProfile& dev = DeviceGrids(options_, plan_, s.device, &result_->profile);
    IoOpProfile& o = dev.blocks[point.block_index].op(op);
    const size_t fi = point.frequency_index, pi = point.level_index;
    o.throughput_bps[fi][pi] = s.throughput_bps;
    o.busy_cores[fi][pi] = s.busy_cores;
    if (plan_.use_rapl()) o.watts[fi][pi] = s.watts;
  }

  Env* const env_;
  const ProfilerOptions& options_;
  const SweepPlan& plan_;
  Comm& comm_;
  Clock* const clock_;
  ProfileResult* const result_;
  std::vector<uint8_t> pattern_;  // the bytes every block holds
  int total_ = 0;
  int done_ = 0;
};

// Rank 0: host, date and every note in the description; then the check.
Status FinishProfile(ProfileResult* result) {
  IoProfile& prof = result->profile;
  std::time_t now = static_cast<std::time_t>(Clock::Real()->WallSeconds());
  char date[32] = "";
  struct tm tm_utc;
  if (::gmtime_r(&now, &tm_utc)) std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  prof.description = fmt::format("cairn profile on {}, {}", HostName(), date);
  for (const std::string& n : result->notes) prof.description += "; " + n;
  return ValidateIoProfile(prof);
}

}  // namespace

Result<ProfileResult> RunIoProfile(Env* env, const Config& config, const ProfilerOptions& options) {
  std::unique_ptr<Comm> alone;
  Comm* comm = options.comm;
  if (comm == nullptr) {
    alone = NewSingleComm();
    comm = alone.get();
  }
  CAIRN_ASSIGN_OR_RETURN(SweepPlan plan, MakePlan(env, config, options, comm));
  ProfileResult result;
  result.helper = !plan.rank0;
  if (plan.rank0) StartProfile(options, plan, &result);
  Sweep sweep(env, options, &plan, &result);
  Status failure = sweep.Run();
  Status finished = plan.rank0 ? plan.cpufreq->Restore() : Status::Ok();
  CAIRN_RETURN_IF_ERROR(failure);
  if (plan.rank0 && finished.ok()) {
    if (options.progress) options.progress(sweep.total(), sweep.total(), "done");
    finished = FinishProfile(&result);
  }
  CAIRN_RETURN_IF_ERROR(comm->Agree(finished));
  return result;
}

}  // namespace cairn
