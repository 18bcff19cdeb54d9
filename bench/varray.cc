// bench/varray: multi-version distributed arrays, log-structured against
// flat (paper §IV; docs/varray.md, docs/results.md).
//
//   mpirun -np P varray [--cases micro,inc,synthetic,pcg] [--reps N] [--json]
//
// Cases, each beside the flat array measured in the same run:
//   micro      latency of get and put by size on rank 0 against rank 1's
//              memory, for the paper's sub-cases of the RMA log (get-miss,
//              get-hit, put-first, put-ow-miss, put-ow-hit) and the message
//              protocol (needs P >= 2)
//   inc        version_inc after every rank filled --inc-mib MiB (Fig. 7),
//              against the flat array's copy in its best case (below)
//   synthetic  the Fig. 8 workload: per version 5 gets (then wait) and 5
//              puts of 128 bytes at APEX-Map locations, k in {0.0025,
//              0.025, 0.25}; time and memory of all versions kept
//   pcg        a Jacobi-preconditioned CG solver on a 2-D Laplacian that
//              versions x, r and p every iteration; also without versions
// Times are the slowest rank's; micro reports the best of --reps, inc the
// median of --reps alternating log/flat pairs (and the best), the others
// one run each. One JSON object per case and
// line with --json: case, impl, bytes, seconds, flat_seconds, ratio =
// flat_seconds / seconds (above 1: faster than flat), memory_bytes,
// flat_memory_bytes, and per case a few more fields.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_support.h"
#include "comm/mpi_comm.h"
#include "varray/varray.h"

namespace {

using cairn::VarrayKind;
using cairn::VersionedArray;
using cairn_bench::Json;

struct Options {
  std::string cases = "micro,inc,synthetic,pcg";
  int reps = 5;
  int ops = 200;
  uint64_t block = 128;
  double inc_mib = 1;
  double synthetic_mib = 4;
  uint64_t synthetic_block = 8192;
  int synthetic_versions = 100;
  int pcg_n = 512;
  int pcg_iterations = 100;
  bool json = false;
};

int Rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int Size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// A benchmark stops at the first failure, on every rank: a rank cannot
// measure a case the others left.
void Check(const cairn::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "varray bench: rank %d: %s: %s\n", Rank(), what, s.ToString().c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

std::unique_ptr<VersionedArray> Make(VarrayKind kind, uint64_t length, uint64_t block,
                                     uint64_t keep) {
  auto comm = cairn::NewMpiComm(MPI_COMM_WORLD, 0);
  Check(comm.status(), "communicator");
  cairn::VarrayOptions o;
  o.name = "bench";
  o.length = length;
  o.elem_size = 8;
  o.block_size = block;
  o.kind = kind;
  o.keep = keep;
  auto array = VersionedArray::Create(std::move(comm).value(), cairn::PosixEnv(), o);
  Check(array.status(), "create");
  return std::move(array).value();
}

double MaxOverRanks(double seconds) {
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}
uint64_t SumOverRanks(uint64_t bytes) {
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return bytes;
}

struct Row {
  std::string name, impl;
  uint64_t bytes = 0;
  double seconds = 0, flat_seconds = 0;
  uint64_t memory = 0, flat_memory = 0;
  Json extra = Json::object();
};

void Report(const Options& opt, const Row& row) {
  if (Rank() != 0) return;
  const double ratio = row.flat_seconds / row.seconds;
  if (opt.json) {
    Json j;
    j["case"] = row.name;
    j["impl"] = row.impl;
    j["ranks"] = Size();
    j["bytes"] = row.bytes;
    j["seconds"] = row.seconds;
    j["flat_seconds"] = row.flat_seconds;
    j["ratio"] = ratio;
    j["memory_bytes"] = row.memory;
    j["flat_memory_bytes"] = row.flat_memory;
    for (auto& [key, value] : row.extra.items()) j[key] = value;
    cairn_bench::PrintJsonLine(j);
    return;
  }
  std::printf("%-20s %-8s %9llu B  %11.3e s  flat %11.3e s  ratio %7.2f", row.name.c_str(),
              row.impl.c_str(), static_cast<unsigned long long>(row.bytes), row.seconds,
              row.flat_seconds, ratio);
  if (row.flat_memory > 0) {
    std::printf("  memory %.4f%% of flat", 100.0 * static_cast<double>(row.memory) /
                                              static_cast<double>(row.flat_memory));
  }
  std::printf("\n");
  std::fflush(stdout);
}

// ---- micro: the paper's Fig. 5 sub-cases ----

// Rank 0's seconds per operation for ops calls of op(i); the other ranks
// wait at the barrier. The same figure on every rank.
// The waiting ranks sleep between polls of a non-blocking barrier: a
// blocking one spins inside MPI and, with more threads than cores, starves
// the message protocol's server threads that rank 0 is waiting for.
double PerOp(int ops, const std::function<void(int)>& op) {
  MPI_Barrier(MPI_COMM_WORLD);
  double seconds = 0;
  MPI_Request done;
  if (Rank() == 0) {
    const double start = MPI_Wtime();
    for (int i = 0; i < ops; ++i) op(i);
    seconds = (MPI_Wtime() - start) / ops;
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    MPI_Wait(&done, MPI_STATUS_IGNORE);
  } else {
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    for (int flag = 0; !flag;) {
      MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
      if (!flag) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  MPI_Bcast(&seconds, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return seconds;
}

struct MicroTimes {
  double get_miss = 1e300, get_hit = 1e300, put_first = 1e300, put_ow_miss = 1e300,
         put_ow_hit = 1e300, flat_get = 1e300, flat_put = 1e300, msg_get = 1e300,
         msg_put = 1e300;
};

// One size, one repetition: every access lands on a block of its own in
// rank 1's partition, so each sub-case sees the state it names.
void MicroOnce(const Options& opt, uint64_t bytes, MicroTimes* t) {
  const uint64_t stride = ((std::max(bytes, opt.block) + opt.block - 1) / opt.block + 1) * opt.block;
  const uint64_t per_rank = opt.ops * stride / 8;
  const uint64_t length = per_rank * Size();
  const uint64_t count = bytes / 8;
  std::vector<uint64_t> buffer(count, 7);
  auto at = [&](int i) { return per_rank + i * stride / 8; };  // rank 1's partition
  auto put = [&](VersionedArray& a) {
    return [&a, &at, &buffer, count](int i) { Check(a.Put(at(i), count, buffer.data()), "put"); };
  };
  auto get = [&](VersionedArray& a) {
    return [&a, &at, &buffer, count](int i) {
      Check(a.Get(at(i), count, buffer.data()), "get");
      Check(a.Wait(), "wait");
    };
  };
  {
    auto log = Make(VarrayKind::kLogRma, length, opt.block, 4);
    Check(log->VersionInc(), "version_inc");
    t->put_first = std::min(t->put_first, PerOp(opt.ops, put(*log)));
    t->put_ow_hit = std::min(t->put_ow_hit, PerOp(opt.ops, put(*log)));
    t->get_hit = std::min(t->get_hit, PerOp(opt.ops, get(*log)));
    Check(log->VersionInc(), "version_inc");
    t->get_miss = std::min(t->get_miss, PerOp(opt.ops, get(*log)));
    // Rank 1 allocates the blocks in this version; rank 0's cache does not
    // know them yet.
    if (Rank() == 1) {
      for (int i = 0; i < opt.ops; ++i) Check(log->Put(at(i), count, buffer.data()), "put");
    }
    t->put_ow_miss = std::min(t->put_ow_miss, PerOp(opt.ops, put(*log)));
    Check(log->Close(), "close");
  }
  {
    auto flat = Make(VarrayKind::kFlat, length, opt.block, 1);
    // One pass first: rank 0 maps rank 1's pages on first touch, a cost
    // the log's overwrite cases do not pay either.
    (void)PerOp(opt.ops, put(*flat));
    t->flat_put = std::min(t->flat_put, PerOp(opt.ops, put(*flat)));
    t->flat_get = std::min(t->flat_get, PerOp(opt.ops, get(*flat)));
    Check(flat->Close(), "close");
  }
  {
    auto msg = Make(VarrayKind::kLogMessage, length, opt.block, 4);
    t->msg_put = std::min(t->msg_put, PerOp(opt.ops, put(*msg)));
    t->msg_get = std::min(t->msg_get, PerOp(opt.ops, get(*msg)));
    Check(msg->Close(), "close");
  }
}

void Micro(const Options& opt) {
  if (Size() < 2) {
    if (Rank() == 0) std::fprintf(stderr, "varray bench: micro needs 2 ranks or more\n");
    return;
  }
  for (uint64_t bytes : {8ull, 64ull, 512ull, 4096ull, 32768ull}) {
    MicroTimes t;
    for (int rep = 0; rep < opt.reps; ++rep) MicroOnce(opt, bytes, &t);
    const std::pair<const char*, double> gets[] = {{"get-miss", t.get_miss}, {"get-hit", t.get_hit}};
    const std::pair<const char*, double> puts[] = {
        {"put-first", t.put_first}, {"put-ow-miss", t.put_ow_miss}, {"put-ow-hit", t.put_ow_hit}};
    for (auto [name, s] : gets) Report(opt, {name, "log-rma", bytes, s, t.flat_get});
    for (auto [name, s] : puts) Report(opt, {name, "log-rma", bytes, s, t.flat_put});
    Report(opt, {"get", "log-msg", bytes, t.msg_get, t.flat_get});
    Report(opt, {"put", "log-msg", bytes, t.msg_put, t.flat_put});
  }
}

// ---- inc: Fig. 7 ----

// One version_inc after every rank filled its partition: the slowest
// rank's seconds.
double TimedVersionInc(VersionedArray& a, uint64_t per_rank, std::vector<uint64_t>& fill,
                       uint64_t value) {
  std::fill(fill.begin(), fill.end(), value);
  Check(a.Put(per_rank * Rank(), per_rank, fill.data()), "fill");
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  Check(a.VersionInc(), "version_inc");
  return MaxOverRanks(MPI_Wtime() - start);
}

// Both arrays live side by side and their repetitions alternate (which
// goes first too), so that both see the same machine. The log keeps every
// version: no cleaning inside the measured calls (the paper's log has
// none). The flat array keeps one, and two warm-up calls touch both slots
// of its ring, so that each measured call is the copy of the partition
// itself, not the kernel faulting fresh pages in: the flat array's best
// case. Its memory is reported for the versions the log keeps.
void Inc(const Options& opt) {
  const uint64_t per_rank = static_cast<uint64_t>(opt.inc_mib * (1 << 20)) / 8;
  auto log = Make(VarrayKind::kLogRma, per_rank * Size(), opt.block, opt.reps + 2);
  auto flat = Make(VarrayKind::kFlat, per_rank * Size(), opt.block, 1);
  std::vector<uint64_t> fill(per_rank);
  for (int warm = 0; warm < 2; ++warm) (void)TimedVersionInc(*flat, per_rank, fill, warm + 1);
  std::vector<double> log_seconds, flat_seconds;
  for (int rep = 0; rep < opt.reps; ++rep) {
    for (int turn = 0; turn < 2; ++turn) {
      if ((rep + turn) % 2 == 0) {
        log_seconds.push_back(TimedVersionInc(*log, per_rank, fill, rep + 1));
      } else {
        flat_seconds.push_back(TimedVersionInc(*flat, per_rank, fill, rep + 1));
      }
    }
  }
  const cairn::VarrayStats stats = log->stats();
  const uint64_t versions = static_cast<uint64_t>(stats.version - stats.oldest_in_memory + 1);
  Row row{"version_inc", "log-rma", per_rank * 8, cairn_bench::Median(log_seconds), cairn_bench::Median(flat_seconds),
          SumOverRanks(stats.memory_bytes), SumOverRanks(versions * per_rank * 8)};
  row.extra["best_seconds"] = *std::min_element(log_seconds.begin(), log_seconds.end());
  row.extra["flat_best_seconds"] = *std::min_element(flat_seconds.begin(), flat_seconds.end());
  row.extra["block_size"] = opt.block;
  Check(log->Close(), "close");
  Check(flat->Close(), "close");
  Report(opt, row);
}

// ---- synthetic: Fig. 8 ----

// APEX-Map location (paper §IV-C): C_i + s * L/2 * p^(1/k), clamped to the
// array, aligned to the 16-element (128-byte) access.
uint64_t ApexLocation(std::mt19937_64& rng, uint64_t length, double k) {
  std::uniform_real_distribution<double> p(0.0, 1.0);
  const double n = Size();
  const double center = length / n * Rank() + length / (2 * n);
  const double sign = rng() % 2 == 0 ? 1.0 : -1.0;
  double loc = center + sign * (length / 2.0) * std::pow(p(rng), 1.0 / k);
  loc = std::clamp(loc, 0.0, static_cast<double>(length - 16));
  return static_cast<uint64_t>(loc) / 16 * 16;
}

struct SyntheticFigures {
  double seconds = 0;
  uint64_t memory = 0;
};

SyntheticFigures SyntheticOf(const Options& opt, VarrayKind kind, double k) {
  const uint64_t per_rank = static_cast<uint64_t>(opt.synthetic_mib * (1 << 20)) / 8;
  const uint64_t length = per_rank * Size();
  auto a = Make(kind, length, opt.synthetic_block, opt.synthetic_versions + 1);
  std::mt19937_64 rng(4242 + Rank());
  std::vector<uint64_t> reads(5 * 16), write(16, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int v = 0; v < opt.synthetic_versions; ++v) {
    for (int i = 0; i < 5; ++i) {
      Check(a->Get(ApexLocation(rng, length, k), 16, reads.data() + 16 * i), "get");
    }
    Check(a->Wait(), "wait");
    for (int i = 0; i < 5; ++i) Check(a->Put(ApexLocation(rng, length, k), 16, write.data()), "put");
    Check(a->VersionInc(), "version_inc");
  }
  SyntheticFigures f{MaxOverRanks(MPI_Wtime() - start), SumOverRanks(a->stats().memory_bytes)};
  Check(a->Close(), "close");
  return f;
}

void Synthetic(const Options& opt) {
  for (double k : {0.0025, 0.025, 0.25}) {
    const SyntheticFigures log = SyntheticOf(opt, VarrayKind::kLogRma, k);
    const SyntheticFigures flat = SyntheticOf(opt, VarrayKind::kFlat, k);
    std::ostringstream name;
    name << "synthetic-k" << k;
    Row row{name.str(), "log-rma", 128, log.seconds, flat.seconds, log.memory, flat.memory};
    row.extra["k"] = k;
    row.extra["versions"] = opt.synthetic_versions;
    row.extra["ops_per_version"] = 10;
    row.extra["block_size"] = opt.synthetic_block;
    row.extra["array_bytes_per_rank"] = static_cast<uint64_t>(opt.synthetic_mib * (1 << 20));
    Report(opt, row);
  }
}

// ---- pcg: a solver that versions its vectors every iteration ----

// The 2-D 5-point Laplacian on an n x n grid, rows split over the ranks;
// Jacobi preconditioning (z = r / 4). Versions x, r and p through arrays
// of `kind` after every iteration, or none with kind unset.
struct PcgResult {
  double seconds = 0, residual = 0;
  uint64_t memory = 0;
};

class Poisson {
 public:
  explicit Poisson(int n) : n_(n), rows_(n / Size()) {}
  uint64_t local() const { return static_cast<uint64_t>(rows_) * n_; }
  // y = A x, exchanging one halo row with each neighbour.
  void Apply(const std::vector<double>& x, std::vector<double>& y) {
    std::vector<double> above(n_, 0.0), below(n_, 0.0);
    const int up = Rank() > 0 ? Rank() - 1 : MPI_PROC_NULL;
    const int down = Rank() + 1 < Size() ? Rank() + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(x.data(), n_, MPI_DOUBLE, up, 1, below.data(), n_, MPI_DOUBLE, down, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(x.data() + local() - n_, n_, MPI_DOUBLE, down, 2, above.data(), n_, MPI_DOUBLE,
                 up, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 0; r < rows_; ++r) {
      for (int c = 0; c < n_; ++c) {
        const uint64_t i = static_cast<uint64_t>(r) * n_ + c;
        const double north = r > 0 ? x[i - n_] : above[c];
        const double south = r + 1 < rows_ ? x[i + n_] : below[c];
        const double west = c > 0 ? x[i - 1] : 0.0, east = c + 1 < n_ ? x[i + 1] : 0.0;
        y[i] = 4 * x[i] - north - south - west - east;
      }
    }
  }

 private:
  int n_, rows_;
};

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

PcgResult Pcg(const Options& opt, std::optional<VarrayKind> kind) {
  Poisson a(opt.pcg_n);
  const uint64_t n = a.local();
  std::vector<std::unique_ptr<VersionedArray>> arrays;
  if (kind) {
    for (int i = 0; i < 3; ++i) {
      arrays.push_back(Make(*kind, n * Size(), 8192, opt.pcg_iterations + 1));
    }
  }
  std::vector<double> x(n, 0.0), r(n, 1.0), z(n), p(n), q(n);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (uint64_t i = 0; i < n; ++i) p[i] = z[i] = r[i] / 4;
  double rz = Dot(r, z);
  for (int it = 0; it < opt.pcg_iterations; ++it) {
    a.Apply(p, q);
    const double alpha = rz / Dot(p, q);
    for (uint64_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      z[i] = r[i] / 4;
    }
    const double rz_next = Dot(r, z);
    for (uint64_t i = 0; i < n; ++i) p[i] = z[i] + rz_next / rz * p[i];
    rz = rz_next;
    const std::vector<double>* vectors[] = {&x, &r, &p};
    for (size_t v = 0; v < arrays.size(); ++v) {
      Check(arrays[v]->Put(n * Rank(), n, vectors[v]->data()), "put");
      Check(arrays[v]->VersionInc(), "version_inc");
    }
  }
  PcgResult result{MaxOverRanks(MPI_Wtime() - start), std::sqrt(Dot(r, r)), 0};
  for (auto& array : arrays) {
    result.memory += SumOverRanks(array->stats().memory_bytes);
    Check(array->Close(), "close");
  }
  return result;
}

void PcgCase(const Options& opt) {
  if (opt.pcg_n % Size() != 0) {
    if (Rank() == 0) std::fprintf(stderr, "varray bench: --pcg-n must be a multiple of P\n");
    return;
  }
  const PcgResult none = Pcg(opt, std::nullopt);
  const PcgResult log = Pcg(opt, VarrayKind::kLogRma);
  const PcgResult flat = Pcg(opt, VarrayKind::kFlat);
  Row row{"pcg", "log-rma", static_cast<uint64_t>(opt.pcg_n) * opt.pcg_n / Size() * 8,
          log.seconds, flat.seconds, log.memory, flat.memory};
  row.extra["raw_seconds"] = none.seconds;
  row.extra["overhead_vs_raw"] = log.seconds / none.seconds - 1;
  row.extra["flat_overhead_vs_raw"] = flat.seconds / none.seconds - 1;
  row.extra["iterations"] = opt.pcg_iterations;
  row.extra["residual"] = log.residual;
  Report(opt, row);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Options opt;
  CLI::App app("Versioned arrays: log-structured against flat (paper §IV)");
  app.add_option("--cases", opt.cases, "comma-separated: micro, inc, synthetic, pcg");
  app.add_option("--reps", opt.reps, "repetitions of micro (best) and inc (median)")->check(CLI::Range(1, 1000));
  app.add_option("--ops", opt.ops, "operations per micro measurement")->check(CLI::Range(1, 100000));
  app.add_option("--block", opt.block, "block bytes of micro and inc (the paper: 128)");
  app.add_option("--inc-mib", opt.inc_mib, "MiB per rank for inc")->check(cairn_bench::FiniteRange(0.001, 4096));
  app.add_option("--synthetic-mib", opt.synthetic_mib, "array MiB per rank for synthetic")->check(cairn_bench::FiniteRange(0.01, 4096));
  app.add_option("--synthetic-block", opt.synthetic_block, "block bytes for synthetic");
  app.add_option("--synthetic-versions", opt.synthetic_versions, "versions of synthetic")->check(CLI::Range(1, 100000));
  app.add_option("--pcg-n", opt.pcg_n, "grid side of pcg")->check(CLI::Range(2, 1 << 16));
  app.add_option("--pcg-iterations", opt.pcg_iterations, "iterations of pcg")->check(CLI::Range(1, 100000));
  app.add_flag("--json", opt.json, "one JSON object per case and line");
  if (auto exit = cairn_bench::ParseCommandLine(app, argc, argv, Rank() == 0)) {
    MPI_Finalize();
    return *exit;
  }
  const auto wants = [&](const char* name) {
    return ("," + opt.cases + ",").find(std::string(",") + name + ",") != std::string::npos;
  };
  if (wants("micro")) Micro(opt);
  if (wants("inc")) Inc(opt);
  if (wants("synthetic")) Synthetic(opt);
  if (wants("pcg")) PcgCase(opt);
  MPI_Finalize();
  return 0;
}
