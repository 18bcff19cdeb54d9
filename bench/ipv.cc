// ipv: persisting every iteration on persistent memory (the paper's Fig. 6
// and Fig. 12; docs/pmem.md, docs/results.md). Three kernels — a 3D
// 7-point stencil, a CG solver and an MG-like smoother whose update is not
// uniform (boundaries never written) — run with each way of persisting
// their target arrays at the end of every iteration:
//   native        no persistence (the baseline, measured in the same run)
//   copy-clflush  memcpy into a persistent slot, then clflush line by line
//   copy-parflush memcpy, then clwb/clflushopt over --threads threads
//   copy-nt       non-temporal (streaming) copy, then one fence
//   ipv           in-place versioning: flush the working version, flip
//   ipv-async     in-place versioning with the flush on a helper thread,
//                 proactive: each plane (stencil, MG) or block (CG) is
//                 handed on as soon as its last write of the iteration is
//                 done (MG, in copy mode: copied by the helper)
//   ipv-noflush   (diagnostic) the two versions alternate, never flushed
// The methods run in rounds (each round runs every method once) so that a
// change of the machine's load hits them alike. The JSON line has the
// median seconds, the ratio to native's median, the median of the per-round
// ratios (paired_ratio), the best of each, and the main thread's CPU time
// against native's (cpu_ratio: what the application thread itself paid).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_support.h"
#include "env/pmem_map.h"
#include "pmem/async_flusher.h"
#include "pmem/flush.h"
#include "pmem/flush_pool.h"
#include "pmem/in_place_array.h"

namespace {

using cairn::pmem::FlushOps;
using cairn_bench::Json;

// The target arrays of one kernel as the kernel sees them: Old(k) is read
// before the update, New(k) is written (and read after the update: the
// post-update version switch). Natively an array updated in place has
// Old(k) == New(k).
class Persistence {
 public:
  virtual ~Persistence() = default;
  virtual const double* Old(int k) = 0;
  virtual double* New(int k) = 0;
  // The iteration's last write to elements [first, first + n) of array k
  // is done (kernels report each plane or block as it finishes).
  virtual void DoneWriting(int k, size_t first, size_t n) {}
  // The persistence establishment point at the end of an iteration.
  virtual void EndIteration() = 0;
  // What the method decided (the IPV mode per array), for the report.
  virtual std::string Mode() const { return ""; }
};

// DRAM arrays; two_buffers: the kernel's own code keeps an old and a new
// buffer and swaps them (the stencil), else it updates in place.
class NativeArrays : public Persistence {
 public:
  NativeArrays(int arrays, size_t n, bool two_buffers) : two_(two_buffers) {
    for (int k = 0; k < arrays; ++k) {
      a_.emplace_back(n, 0.0);
      if (two_) b_.emplace_back(n, 0.0);
    }
  }
  const double* Old(int k) override { return a_[k].data(); }
  double* New(int k) override { return two_ ? b_[k].data() : a_[k].data(); }
  void EndIteration() override {
    if (two_) std::swap(a_, b_);
  }

 protected:
  bool two_;
  std::vector<std::vector<double>> a_, b_;
};

enum class CopyMethod { kClflush, kParallelFlush, kNonTemporal };

// Native arrays plus, at the end of each iteration, a copy of every target
// array into one of two slots of a persistent file, persisted as `method`
// says, and an 8-byte record naming the slot (the checkpoint's commit).
class CopyCheckpoint : public NativeArrays {
 public:
  CopyCheckpoint(int arrays, size_t n, bool two_buffers, CopyMethod method,
                 std::unique_ptr<cairn::PmemMap> map, cairn::pmem::FlushPool* pool)
      : NativeArrays(arrays, n, two_buffers), method_(method), map_(std::move(map)),
        pool_(pool), bytes_(n * sizeof(double)) {}
  void EndIteration() override {
    NativeArrays::EndIteration();
    uint8_t* slot = map_->data() + cairn::pmem::kCacheLine + (iteration_ % 2) * a_.size() * bytes_;
    for (size_t k = 0; k < a_.size(); ++k) Persist(slot + k * bytes_, Old(static_cast<int>(k)));
    std::memcpy(map_->data(), &iteration_, sizeof(iteration_));
    cairn::pmem::Persist(map_->data(), sizeof(iteration_));
    ++iteration_;
  }

 private:
  void Persist(uint8_t* dst, const double* src) {
    const FlushOps& best = cairn::pmem::Ops();
    switch (method_) {
      case CopyMethod::kClflush: {
        static const FlushOps clflush =
            cairn::pmem::OpsFor(cairn::pmem::FlushKind::kClflush, best.copy);
        std::memcpy(dst, src, bytes_);
        clflush.flush_lines(dst, bytes_);
        clflush.drain();
        break;
      }
      case CopyMethod::kParallelFlush:
        std::memcpy(dst, src, bytes_);
        pool_->Persist(dst, bytes_);
        break;
      case CopyMethod::kNonTemporal:
        best.copy_nt(dst, src, bytes_);
        best.drain();
        break;
    }
  }
  CopyMethod method_;
  std::unique_ptr<cairn::PmemMap> map_;
  cairn::pmem::FlushPool* pool_;
  size_t bytes_;
  uint64_t iteration_ = 0;
};

// In-place versioned arrays (one file each), flushed at the commit or, with
// a flusher, from DoneWriting on.
class InPlaceVersioning : public Persistence {
 public:
  InPlaceVersioning(std::vector<std::unique_ptr<cairn::pmem::InPlaceArray>> arrays)
      : arrays_(std::move(arrays)) {}
  const double* Old(int k) override {
    return static_cast<const double*>(arrays_[k]->Consistent());
  }
  double* New(int k) override { return static_cast<double*>(arrays_[k]->Working()); }
  void DoneWriting(int k, size_t first, size_t n) override {
    (void)arrays_[k]->DoneWriting(first, n);
  }
  void EndIteration() override {
    for (auto& a : arrays_) {
      auto s = a->Commit();
      if (!s.ok()) {
        std::fprintf(stderr, "ipv: %s\n", s.ToString().c_str());
        std::exit(1);
      }
    }
  }
  std::string Mode() const override {
    std::string modes;
    for (auto& a : arrays_) modes += std::string(modes.empty() ? "" : ",") + PersistModeName(a->mode());
    return modes;
  }

 private:
  std::vector<std::unique_ptr<cairn::pmem::InPlaceArray>> arrays_;
};

// The paper's "IPV without cache flushing" bar: the two versions of each
// array alternate in the mapped file as in-place versioning's do, but
// nothing is flushed and no record is written. Not a persistence method: it
// separates the cost of working on two versions in the file from the cost
// of flushing them (docs/results.md). Uniform kernels only.
class DualVersionsNoFlush : public Persistence {
 public:
  DualVersionsNoFlush(int arrays, size_t n, std::unique_ptr<cairn::PmemMap> map)
      : arrays_(arrays), n_(n), map_(std::move(map)) {}
  const double* Old(int k) override { return Version(k, 1 - working_); }
  double* New(int k) override { return Version(k, working_); }
  void EndIteration() override { working_ = 1 - working_; }

 private:
  double* Version(int k, int which) {
    return reinterpret_cast<double*>(map_->data()) + (2 * k + which) * n_;
  }
  int arrays_;
  size_t n_;
  std::unique_ptr<cairn::PmemMap> map_;
  int working_ = 0;
};

// ---- kernels -------------------------------------------------------------

struct Kernel {
  const char* name;
  int arrays;             // target arrays
  bool two_buffers;       // native code keeps old and new buffers
  bool uniform;           // every element written every iteration
};
constexpr Kernel kKernels[] = {
    {"stencil", 1, true, true},
    {"cg", 3, false, true},
    {"mg", 1, false, false},
};

// n = side^3 points.
struct Grid {
  size_t side;
  size_t n() const { return side * side * side; }
};

void Init(Persistence& p, const Kernel& k, const Grid& g) {
  for (int a = 0; a < k.arrays; ++a) {
    double* u = p.New(a);
    for (size_t i = 0; i < g.n(); ++i) u[i] = std::sin(0.001 * static_cast<double>(i + a));
    p.DoneWriting(a, 0, g.n());
  }
  p.EndIteration();
}

// 7-point Jacobi sweep; the boundary is copied so every element is written.
void StencilIteration(Persistence& p, const Grid& g) {
  const double* u = p.Old(0);
  double* v = p.New(0);
  const size_t s = g.side, plane = s * s;
  for (size_t z = 0; z < s; ++z) {
    for (size_t y = 0; y < s; ++y) {
      size_t row = z * plane + y * s;
      bool edge = z == 0 || y == 0 || z == s - 1 || y == s - 1;
      if (edge) {
        std::memcpy(v + row, u + row, s * sizeof(double));
        continue;
      }
      v[row] = u[row];
      for (size_t x = 1; x + 1 < s; ++x) {
        size_t i = row + x;
        v[i] = (u[i] + u[i - 1] + u[i + 1] + u[i - s] + u[i + s] + u[i - plane] + u[i + plane]) /
               7.0;
      }
      v[row + s - 1] = u[row + s - 1];
    }
    p.DoneWriting(0, z * plane, plane);
  }
  p.EndIteration();
}

// q = A p for the 7-point Laplacian with zero outside the grid.
void Laplacian(const double* p, double* q, const Grid& g) {
  const size_t s = g.side, plane = s * s, n = g.n();
  for (size_t i = 0; i < n; ++i) {
    double sum = 6.0 * p[i];
    size_t x = i % s, y = (i / s) % s, z = i / plane;
    if (x > 0) sum -= p[i - 1];
    if (x + 1 < s) sum -= p[i + 1];
    if (y > 0) sum -= p[i - s];
    if (y + 1 < s) sum -= p[i + s];
    if (z > 0) sum -= p[i - plane];
    if (z + 1 < s) sum -= p[i + plane];
    q[i] = sum;
  }
}

// Calls body(begin, end) over [0, n) in blocks of kBlockElements and
// reports each block of array k done as it finishes (an application's
// blocked loop; the blocks are what proactive flushing hands on).
constexpr size_t kBlockElements = 1 << 16;  // 512 KiB of doubles
template <typename Body>
void ForBlocks(Persistence& ps, int k, size_t n, Body body) {
  for (size_t begin = 0; begin < n; begin += kBlockElements) {
    const size_t end = std::min(n, begin + kBlockElements);
    body(begin, end);
    ps.DoneWriting(k, begin, end - begin);
  }
}

// One CG step over x (0), r (1), p (2); q is scratch. The code is the
// in-place-versioned form: reads before an array's update use Old, after
// it New (p's update reads the updated r).
void CgIteration(Persistence& ps, const Grid& g, std::vector<double>& q) {
  const size_t n = g.n();
  const double* p_old = ps.Old(2);
  Laplacian(p_old, q.data(), g);
  double rr = 0, pq = 0;
  const double* r_old = ps.Old(1);
  for (size_t i = 0; i < n; ++i) {
    rr += r_old[i] * r_old[i];
    pq += p_old[i] * q[i];
  }
  const double alpha = pq != 0 ? rr / pq : 0;
  const double* x_old = ps.Old(0);
  double* x = ps.New(0);
  ForBlocks(ps, 0, n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) x[i] = x_old[i] + alpha * p_old[i];
  });
  double* r = ps.New(1);
  double rr_new = 0;
  ForBlocks(ps, 1, n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      r[i] = r_old[i] - alpha * q[i];
      rr_new += r[i] * r[i];
    }
  });
  const double beta = rr != 0 ? rr_new / rr : 0;
  double* p = ps.New(2);
  ForBlocks(ps, 2, n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) p[i] = r[i] + beta * p_old[i];
  });
  ps.EndIteration();
}

// Red-black Gauss-Seidel sweeps on the interior planes only, plus a
// correction on every other plane (a coarse-grid step): elements on the
// outer planes are never written, and which are written varies by loop.
// The second colour's sweep and the correction run plane by plane, in the
// same order of updates as sweeping everything first: plane z - 1 is final
// once plane z is swept (which reads it) and z - 1 corrected, and it is
// reported done then.
void MgIteration(Persistence& ps, const Grid& g) {
  double* u = ps.New(0);  // in place: MG persists by copying (non-uniform)
  const size_t s = g.side, plane = s * s, n = g.n();
  auto sweep = [&](size_t begin, size_t end, size_t color) {
    for (size_t i = begin + (begin + plane + color) % 2; i < end; i += 2) {
      u[i] = 0.5 * u[i] + (u[i - 1] + u[i + 1] + u[i - s] + u[i + s] + u[i - plane] +
                           u[i + plane]) / 12.0;
    }
  };
  auto finish_plane = [&](size_t z) {  // correct plane z, report it done
    if (z >= 2 && z + 2 < s && z % 2 == 0) {
      for (size_t i = z * plane; i < (z + 1) * plane; ++i) u[i] += 1e-6;
    }
    ps.DoneWriting(0, z * plane, plane);
  };
  sweep(plane, n - plane, 0);
  for (size_t z = 0; z < s; ++z) {
    if (z >= 1 && z + 1 < s) sweep(z * plane, (z + 1) * plane, 1);
    if (z >= 1) finish_plane(z - 1);
  }
  finish_plane(s - 1);
  ps.EndIteration();
}

// q: CG's scratch vector, of g.n() elements for CG.
void RunIterations(Persistence& p, const Kernel& k, const Grid& g, int iterations,
                   std::vector<double>& q) {
  for (int it = 0; it < iterations; ++it) {
    if (std::strcmp(k.name, "stencil") == 0) StencilIteration(p, g);
    else if (std::strcmp(k.name, "cg") == 0) CgIteration(p, g, q);
    else MgIteration(p, g);
  }
}

// ---- methods -------------------------------------------------------------

const char* const kMethods[] = {"native", "copy-clflush", "copy-parflush", "copy-nt",
                                "ipv",    "ipv-async",    "ipv-noflush"};

struct Setup {
  std::string dir;
  cairn::pmem::FlushPool* pool;
  cairn::pmem::AsyncFlusher* flusher;
};

std::unique_ptr<Persistence> Make(const std::string& method, const Kernel& k, const Grid& g,
                                  const Setup& s) {
  const size_t bytes = g.n() * sizeof(double);
  if (method == "native") return std::make_unique<NativeArrays>(k.arrays, g.n(), k.two_buffers);
  if (method.rfind("copy-", 0) == 0) {
    CopyMethod m = method == "copy-clflush"    ? CopyMethod::kClflush
                   : method == "copy-parflush" ? CopyMethod::kParallelFlush
                                               : CopyMethod::kNonTemporal;
    std::string path = s.dir + "/" + k.name + "." + method;
    const uint64_t size = cairn::pmem::kCacheLine + 2 * k.arrays * bytes;
    auto map = cairn::PmemMap::Create(path, size);
    // Faulted in ahead, as the pmem tier's slots and the in-place arrays are.
    if (!map.ok() || !(*map)->Prefault(0, size).ok()) return nullptr;
    return std::make_unique<CopyCheckpoint>(k.arrays, g.n(), k.two_buffers, m,
                                            std::move(map).value(), s.pool);
  }
  if (method == "ipv-noflush") {
    const uint64_t size = 2 * k.arrays * bytes;
    auto map = cairn::PmemMap::Create(s.dir + "/" + k.name + "." + method, size);
    if (!map.ok() || !(*map)->Prefault(0, size).ok()) return nullptr;
    return std::make_unique<DualVersionsNoFlush>(k.arrays, g.n(), std::move(map).value());
  }
  std::vector<std::unique_ptr<cairn::pmem::InPlaceArray>> arrays;
  for (int a = 0; a < k.arrays; ++a) {
    std::string path = s.dir + "/" + k.name + std::to_string(a) + "." + method;
    std::filesystem::remove(path);
    cairn::pmem::InPlaceArrayOptions options;
    options.pattern = k.uniform ? cairn::pmem::UpdatePattern::kUniform
                                : cairn::pmem::UpdatePattern::kAuto;
    options.flusher = method == "ipv-async" ? s.flusher : nullptr;
    auto array = cairn::pmem::InPlaceArray::Open(path, g.n(), sizeof(double), options);
    if (!array.ok()) return nullptr;
    arrays.push_back(std::move(array).value());
  }
  return std::make_unique<InPlaceVersioning>(std::move(arrays));
}

double ThreadCpuSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The runs of one method on one kernel.
struct Runs {
  std::string method;
  // The method's arrays and files, made once and used by all its rounds.
  std::unique_ptr<Persistence> arrays;
  std::vector<double> seconds;      // wall clock, per run
  std::vector<double> cpu_seconds;  // the main thread's CPU time, per run
  std::vector<double> ratios;       // seconds / native's seconds of the same round
  std::string mode;
};

// One run: initialise (untimed), then time the iterations.
void RunOnce(const Kernel& k, const Grid& g, int iterations, std::vector<double>& scratch,
             Runs* runs) {
  Persistence* p = runs->arrays.get();
  Init(*p, k, g);
  const double cpu_start = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  RunIterations(*p, k, g, iterations, scratch);
  runs->seconds.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  runs->cpu_seconds.push_back(ThreadCpuSeconds() - cpu_start);
  runs->mode = p->Mode();
}

Json Report(const Kernel& k, const Grid& g, int iterations, const Runs& r, const Runs& native) {
  const double median = cairn_bench::Median(r.seconds), native_median = cairn_bench::Median(native.seconds);
  const double best = *std::min_element(r.seconds.begin(), r.seconds.end());
  const double native_best = *std::min_element(native.seconds.begin(), native.seconds.end());
  Json line;
  line["kernel"] = k.name;
  line["method"] = r.method;
  line["iterations"] = iterations;
  line["bytes"] = g.n() * sizeof(double) * k.arrays;
  line["seconds"] = median;
  line["native_seconds"] = native_median;
  line["ratio"] = median / native_median;
  line["paired_ratio"] = cairn_bench::Median(r.ratios);
  line["best_seconds"] = best;
  line["best_ratio"] = best / native_best;
  line["cpu_seconds"] = cairn_bench::Median(r.cpu_seconds);
  line["cpu_ratio"] = cairn_bench::Median(r.cpu_seconds) / cairn_bench::Median(native.cpu_seconds);
  line["reps"] = static_cast<int>(r.seconds.size());
  if (!r.mode.empty()) line["mode"] = r.mode;
  return line;
}

// Every method of one kernel, in rounds: each round runs every method once,
// so that a change in the machine's load hits all methods alike (the
// machine these figures come from is shared).
bool MeasureKernel(const Kernel& k, const Grid& g, const Setup& setup, int iterations, int reps,
                   bool json) {
  std::vector<Runs> runs;
  // Each method's arrays and files are made once and serve all its rounds,
  // as an application's do. Made and freed per run, they measured what the
  // run before had freed on this VM: native CG took 0.72 s on memory made
  // afresh and 0.48 s on reused memory (docs/results.md).
  for (const char* method : kMethods) {
    if (!k.uniform && std::strcmp(method, "ipv-noflush") == 0) continue;
    Runs r;
    r.method = method;
    r.arrays = Make(method, k, g, setup);
    if (!r.arrays) {
      std::fprintf(stderr, "ipv: cannot set up %s under %s\n", method, setup.dir.c_str());
      return false;
    }
    runs.push_back(std::move(r));
  }
  std::vector<double> scratch(k.arrays == 3 ? g.n() : 0);
  for (int round = 0; round < reps; ++round) {
    for (Runs& r : runs) {
      RunOnce(k, g, iterations, scratch, &r);
      r.ratios.push_back(r.seconds.back() / runs[0].seconds.back());
    }
  }
  for (const Runs& r : runs) {
    Json line = Report(k, g, iterations, r, runs[0]);
    if (json) {
      cairn_bench::PrintJsonLine(line);
    } else {
      std::printf("%-8s %-14s %8.4f s  x%.3f native (paired x%.3f, best x%.3f, "
                  "main cpu x%.3f) %s\n",
                  k.name, r.method.c_str(), line["seconds"].get<double>(),
                  line["ratio"].get<double>(), line["paired_ratio"].get<double>(),
                  line["best_ratio"].get<double>(), line["cpu_ratio"].get<double>(),
                  r.mode.c_str());
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ipv: persisting every iteration (in-place versioning vs checkpoint copies)"};
  double mib = 64;
  int iterations = 20, reps = 3, threads = 0;
  bool json = false;
  std::string parent = "/dev/shm";
  std::vector<std::string> kernels{"stencil", "cg", "mg"};
  app.add_option("--mib", mib, "MiB per target array")->check(cairn_bench::FiniteRange(1, 65536));
  app.add_option("--iterations", iterations, "iterations per run")->check(CLI::Range(1, 100000));
  app.add_option("--reps", reps, "rounds (each runs every method once; medians reported)")
      ->check(CLI::Range(1, 100));
  app.add_option("--threads", threads,
                 "threads of copy-parflush and of large async flushes (0: the library's default, "
                 "this process's CPUs less one)")
      ->check(CLI::Range(0, 64));
  app.add_option("--dir", parent,
                 "directory standing in for persistent memory (the run's files go into a "
                 "directory of their own in it, removed when the run ends, killed or not)")
      ->capture_default_str();
  app.add_option("--kernels", kernels, "stencil, cg, mg")->delimiter(',');
  app.add_flag("--json", json, "one JSON object per case on stdout");
  if (auto exit = cairn_bench::ParseCommandLine(app, argc, argv)) return *exit;

  cairn_bench::RemovedAtExit removed_at_exit;
  const std::string dir = parent + "/cairn-ipv-bench-" + std::to_string(::getpid());
  removed_at_exit.Add(dir);
  std::filesystem::create_directories(dir);
  if (threads == 0) threads = cairn::pmem::DefaultLargeThreads();
  auto pool = cairn::pmem::FlushPool::Start(cairn::PosixEnv(), threads);
  cairn::pmem::AsyncFlushOptions flush_options;
  flush_options.large_threads = threads;
  auto flusher = cairn::pmem::AsyncFlusher::Start(cairn::PosixEnv(), flush_options);
  if (!pool.ok() || !flusher.ok()) return 1;
  Setup setup{dir, pool->get(), flusher->get()};
  const FlushOps& ops = cairn::pmem::Ops();
  std::fprintf(stderr, "ipv: flush %s, copy %s, %.0f MiB per array, %d iterations, %d reps\n",
               cairn::pmem::FlushKindName(ops.flush), cairn::pmem::CopyKindName(ops.copy), mib,
               iterations, reps);
  for (const Kernel& k : kKernels) {
    if (std::find(kernels.begin(), kernels.end(), k.name) == kernels.end()) continue;
    Grid g{static_cast<size_t>(std::cbrt(mib * 1048576.0 / sizeof(double)))};
    if (!MeasureKernel(k, g, setup, iterations, reps, json)) return 1;
  }
  std::filesystem::remove_all(dir);
  return 0;
}
