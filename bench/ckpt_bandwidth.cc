// ckpt_bandwidth — end-to-end bandwidth of cairn_checkpoint and cairn_restart
// on the memory and ssd tiers, each next to raw baselines measured in the same
// run, on the same file system, with the same bytes.
//
//   mpirun -np R ckpt_bandwidth [--mib S] [--reps N] [--dir D] [--json] [--samples]
//                               [--tiers memory,ssd] [--seed X] [--warm] [--keep-data]
//                               [--ranks-per-node N] [--trace] [--no-prime] [--busy N]
//   (--help describes every option)
//
// Cases (one JSON object per line with --json, a table otherwise):
//   memory checkpoint  cairn_checkpoint, tier = memory only
//                      raw:    write() of the bytes into a fresh file on /dev/shm
//                      memcpy: memcpy into already-mapped, already-faulted /dev/shm
//                              pages (the physical limit)
//   memory restart     cairn_restart from the memory tier
//                      raw:    read() of the raw file on /dev/shm
//                      memcpy: fresh mmap of that file + memcpy (the physical limit)
//   memory first-checkpoint
//                      the first cairn_checkpoint of a fresh instance (init,
//                      protect, fill the data, wait for the slot reservation,
//                      which is reported apart), with no earlier version of
//                      its name, as in a job's first run; same baselines as
//                      checkpoint, and
//                      memcpy_fresh: memcpy into a fresh /dev/shm file, mapped
//                              and faulted in just before (as the slots are)
//   ssd checkpoint     cairn_checkpoint, tier = ssd only (persisted), under --dir
//                      raw:    write() + fsync() of a fresh file in --dir
//                      direct: O_DIRECT write() + fdatasync() of a fresh file
//                      direct_overwrite: O_DIRECT overwrite of a preallocated file
//                              + fdatasync (the device's limit)
//   ssd restart        cairn_restart from the ssd tier, page cache evicted first
//                      raw:    read() of the raw file (cache evicted first)
//                      direct: O_DIRECT read() of the same file
//
// Method. Every timing is collective: MPI_Barrier, time the operation on each
// rank, MPI_Barrier; the figure of one repetition is the maximum over ranks.
// One warm-up repetition is discarded, then --reps repetitions are made and the
// median is reported (with min and max). Within a repetition the operations of
// a case run one after the other over the same bytes, in an order that rotates
// from one repetition to the next so that no method always runs first.
// The data are random (splitmix64, seed printed), different on every rank and
// regenerated for every version, so neither compression nor deduplication nor
// "unchanged since the last version" can shrink them. cairn's version advances
// with every repetition; raw baselines write a fresh file per repetition and
// delete, outside the timed region, the files older than the last two (as
// cairn's [retention] keep = 2 does). Restart is measured in a fresh Cairn
// instance (cairn_finalize + cairn_init, as a restarted job would see it); it
// first times cairn_restart_test, then cairn_restart of the newest version.
// Every restored buffer (cairn's and the baselines') is checked bit for bit.
// Disk steps start after syncfs() of --dir, so that no step pays for the
// journal commit of the one before; every step starts with a pool of recently
// freed pages (PrimeFreePages explains why); the ssd restart steps start with
// the files evicted from the page cache (posix_fadvise DONTNEED, checked with
// mincore: "resident_fraction" in the output).
//
// GB/s figures are aggregate over ranks: ranks * bytes_per_rank / seconds / 1e9.
//
// --busy N starts N spinning threads on each node (in its first rank) before
// the first case and stops them after the last: Cairn and the baselines alike
// run with cores taken, as an application's ranks run next to other work
// (`-np 1 --busy 1` on 2 cores: the other core is busy).

#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Only the C bindings of MPI are used.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "bench_mpi.h"
#include "bench_support.h"
#include "cairn/cairn.h"

namespace {

// ---------------------------------------------------------------- options --

struct Options {
  uint64_t mib = 256;
  int reps = 5;
  std::string dir = "./bench-data";
  bool json = false;
  bool do_memory = true;
  bool do_ssd = true;
  uint64_t seed = 0x5eed0c41a5ULL;
  bool warm = false;       // ssd restart without evicting the page cache
  bool keep_data = false;  // leave the run directories behind
  int ranks_per_node = -1; // -1: Cairn's default; else [topology] ranks_per_node
  bool samples = false;    // JSON: every repetition's seconds, not only the median
  bool trace = false;      // stderr: every timed step on every rank, with CPU time
  bool prime = true;       // hand every timed step a pool of recently freed pages
  int busy = 0;            // spinning threads per node during every case
  bool ecc = false;        // memory checkpoints with tiers.memory.ecc none, normal, strong
  int ecc_rounds = 3;      // --ecc: rounds of the five modes, one after the other
};

// Parses the command line into *o. Returns nullopt to go on, else the exit
// status (0 after --help, 2 after a usage error, printed by rank 0 only).
std::optional<int> ParseOptions(int argc, char** argv, Options* o, bool speaker) {
  CLI::App app{"ckpt_bandwidth: cairn_checkpoint and cairn_restart on the memory and ssd "
               "tiers against raw baselines of the same bytes (run under mpirun)"};
  app.add_option("--mib", o->mib, "MiB of random data per rank")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--reps", o->reps, "timed repetitions after one warm-up; the median is reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--dir", o->dir,
                 "directory for the ssd tier and the disk baselines; a run-* subdirectory is "
                 "made and removed")
      ->check([](const std::string& v) { return v.empty() ? "must not be empty" : ""; })
      ->capture_default_str();
  app.add_flag("--json", o->json, "one JSON object per case and line instead of a table");
  std::vector<std::string> tiers;
  app.add_option("--tiers", tiers, "memory, ssd or memory,ssd (default both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"memory", "ssd"}));
  app.add_option("--seed", o->seed, "seed of the random data (printed in the output)")
      ->capture_default_str();
  app.add_flag("--warm", o->warm, "ssd restart without evicting the page cache first");
  app.add_flag("--keep-data", o->keep_data, "keep the checkpoint and baseline files");
  app.add_option("--ranks-per-node", o->ranks_per_node,
                 "sets Cairn's [topology] ranks_per_node (default: real nodes); 1 gives every "
                 "rank a tier directory of its own")
      ->check(CLI::Range(0, 1 << 20));
  app.add_flag("--samples", o->samples, "with --json, also print every repetition's seconds");
  app.add_flag("--trace", o->trace,
               "print every timed step of every rank to stderr: wall and CPU seconds, context "
               "switches, page faults");
  bool no_prime = false;
  app.add_flag("--no-prime", no_prime,
               "do not touch and free bytes + 64 MiB of memory before each timed step "
               "(PrimeFreePages in the source says why)");
  app.add_option("--busy", o->busy,
                 "spinning threads per node during every case, Cairn's and the baselines' "
                 "(cores taken by other work)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_flag("--ecc", o->ecc,
               "also time memory-tier checkpoints with tiers.memory.ecc = none, normal and "
               "strong, and normal and strong with ecc_sync, each in its own instance (fields "
               "ecc, ecc_sync, ratio_to_none and ecc_window_seconds)");
  app.add_option("--ecc-rounds", o->ecc_rounds,
                 "--ecc: rounds of the modes one after the other; ratio_to_none is the median "
                 "of each round's ratio to that round's ecc = none")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  if (auto exit = cairn_bench::ParseCommandLine(app, argc, argv, speaker)) return exit;
  o->prime = !no_prime;
  if (!tiers.empty()) {
    o->do_memory = std::count(tiers.begin(), tiers.end(), "memory") > 0;
    o->do_ssd = std::count(tiers.begin(), tiers.end(), "ssd") > 0;
  }
  return std::nullopt;
}

// ------------------------------------------------------------ busy cores --

// Threads that keep cores busy until destroyed: integer work on a private
// counter, no memory traffic, so that they take CPU time from the measured
// steps (the scheduler shares the cores) without taking memory bandwidth.
class BusyCores {
 public:
  explicit BusyCores(int threads) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        uint64_t x = 1;
        while (!stop_.load(std::memory_order_relaxed)) {
          for (int k = 0; k < 4096; ++k) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        }
        sink_.fetch_add(x, std::memory_order_relaxed);
      });
    }
  }
  ~BusyCores() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sink_{0};  // keeps the spinning from being optimized away
  std::vector<std::thread> threads_;
};

// ------------------------------------------------------------------ data --

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t DataSeed(uint64_t seed, int rank, int version) {
  uint64_t s = seed ^ (static_cast<uint64_t>(rank) << 40) ^
               (static_cast<uint64_t>(version) * 0xd1b54a32d192ed03ULL);
  return SplitMix64(&s);
}

// The bytes of `version` on `rank`: incompressible, different per rank and
// per version (bytes is a multiple of 8: whole MiB).
void FillRandom(void* buf, size_t bytes, uint64_t seed, int rank, int version) {
  uint64_t state = DataSeed(seed, rank, version);
  auto* w = static_cast<uint64_t*>(buf);
  for (size_t i = 0; i < bytes / 8; ++i) w[i] = SplitMix64(&state);
}

// Index of the first 8-byte word that differs from FillRandom's, or -1.
long long FirstMismatch(const void* buf, size_t bytes, uint64_t seed, int rank, int version) {
  uint64_t state = DataSeed(seed, rank, version);
  const auto* w = static_cast<const uint64_t*>(buf);
  for (size_t i = 0; i < bytes / 8; ++i) {
    if (w[i] != SplitMix64(&state)) return static_cast<long long>(i);
  }
  return -1;
}

// Page-aligned (hence O_DIRECT-aligned) anonymous memory, faulted in.
struct Buffer {
  void* p = nullptr;
  size_t n = 0;
  explicit Buffer(size_t bytes) : n(bytes) {
    p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      p = nullptr;
      return;
    }
    std::memset(p, 0, n);
  }
  ~Buffer() {
    if (p != nullptr) munmap(p, n);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// ------------------------------------------------------------ file system --

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

bool MakeDirs(const std::string& path, std::string* error) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) {
      *error = Errno("mkdir " + cur);
      return false;
    }
  }
  return true;
}

void RemoveFile(const std::string& path) { unlink(path.c_str()); }

// Writes all of buf with as few write() calls as the kernel allows.
bool WriteAll(int fd, const void* buf, size_t n, std::string* error, const std::string& path) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      *error = Errno("write " + path);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* buf, size_t n, std::string* error, const std::string& path) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      *error = Errno("read " + path);
      return false;
    }
    if (r == 0) {
      *error = "read " + path + ": file is short";
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

enum class Sync { kNone, kFsync, kFdatasync };

// What a user does by hand: a fresh file, one write() of the buffer, then
// optionally the sync that makes it durable. `direct` opens with O_DIRECT.
bool WriteFreshFile(const std::string& path, const void* buf, size_t n, bool direct, Sync sync,
                    std::string* error) {
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | (direct ? O_DIRECT : 0);
  int fd = open(path.c_str(), flags, 0600);
  if (fd < 0) {
    *error = Errno("open " + path);
    return false;
  }
  bool ok = WriteAll(fd, buf, n, error, path);
  if (ok && sync == Sync::kFsync && fsync(fd) != 0) ok = (*error = Errno("fsync " + path), false);
  if (ok && sync == Sync::kFdatasync && fdatasync(fd) != 0) {
    ok = (*error = Errno("fdatasync " + path), false);
  }
  if (close(fd) != 0 && ok) ok = (*error = Errno("close " + path), false);
  return ok;
}

// O_DIRECT overwrite in place of an existing, fully written file.
bool OverwriteDirect(const std::string& path, const void* buf, size_t n, std::string* error) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_DIRECT);
  if (fd < 0) {
    *error = Errno("open " + path);
    return false;
  }
  bool ok = WriteAll(fd, buf, n, error, path);
  if (ok && fdatasync(fd) != 0) ok = (*error = Errno("fdatasync " + path), false);
  close(fd);
  return ok;
}

bool ReadFile(const std::string& path, void* buf, size_t n, bool direct, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    *error = Errno("open " + path);
    return false;
  }
  bool ok = ReadAll(fd, buf, n, error, path);
  close(fd);
  return ok;
}

// Fresh mapping of the file, one memcpy out of it, unmap.
bool MmapCopy(const std::string& path, void* buf, size_t n, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = Errno("open " + path);
    return false;
  }
  void* m = mmap(nullptr, n, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    *error = Errno("mmap " + path);
    return false;
  }
  std::memcpy(buf, m, n);
  munmap(m, n);
  return true;
}

// A file of n bytes on /dev/shm, mapped and faulted in once: the destination
// of the memcpy baseline ("memcpy into already-mapped, already-faulted pages").
struct ShmMap {
  void* p = nullptr;
  size_t n = 0;
  bool Open(const std::string& path, size_t bytes, std::string* error) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return (*error = Errno("open " + path), false);
    if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      *error = Errno("ftruncate " + path);
      close(fd);
      return false;
    }
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return (*error = Errno("mmap " + path), false);
    p = m;
    n = bytes;
    std::memset(p, 0, n);
    return true;
  }
  ~ShmMap() {
    if (p != nullptr) munmap(p, n);
  }
};

// ------------------------------------------------------------ free pages --

// Touches and frees `bytes` of anonymous memory, so that the kernel's free
// lists hold that many recently used pages when the next step starts.
//
// Why: every method that writes a fresh file (raw write() to /dev/shm or to
// the page cache, and any tier that creates a new file per version) needs
// fresh pages. On a virtual machine with free page reporting (virtio-balloon
// VIRTIO_BALLOON_F_REPORTING, as on the reference machine), pages that stayed
// free for about 2 s are handed back to the host and cost a host page fault
// on next touch: writing 256 MiB into a fresh tmpfs file then takes 0.8-2.5 s
// instead of 0.15 s, and which method pays depends on the order of the steps
// and of the frees (LIFO free lists), not on the method. Priming gives every
// timed step, Cairn's and the baselines' alike, the same start: what a bare-
// metal node has anyway. It favours methods that allocate fresh pages; a
// method that reuses its memory gains nothing from it.
void PrimeFreePages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p != MAP_FAILED) munmap(p, bytes);
}

// ------------------------------------------------------------ page cache --

uint64_t g_resident = 0;  // nftw callbacks take no closure
uint64_t g_total = 0;

int EvictOne(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type != FTW_F || !S_ISREG(st->st_mode)) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  fdatasync(fd);  // DONTNEED drops clean pages only
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  return 0;
}

int CountResidentOne(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size == 0) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t len = static_cast<size_t>(st->st_size);
  void* m = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return 0;
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((len + page - 1) / page);
  if (mincore(m, len, vec.data()) == 0) {
    for (unsigned char c : vec) g_resident += (c & 1) ? page : 0;
    g_total += vec.size() * page;
  }
  munmap(m, len);
  return 0;
}

// Evicts every file under dir from the page cache; returns the fraction of
// their bytes still resident afterwards (pages mapped or dirty stay).
double EvictTree(const std::string& dir) {
  nftw(dir.c_str(), EvictOne, 32, FTW_PHYS);
  g_resident = g_total = 0;
  nftw(dir.c_str(), CountResidentOne, 32, FTW_PHYS);
  return g_total == 0 ? 0.0 : static_cast<double>(g_resident) / static_cast<double>(g_total);
}

// Lets the journal commit (and the discards of deleted files land) before a
// timed disk operation, so that one method does not pay for the last one.
void QuietDisk(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    syncfs(fd);
    close(fd);
  }
}

// ----------------------------------------------------------------- timing --

struct World {
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm node = MPI_COMM_NULL;  // ranks sharing this node
  int rank = 0;
  int size = 1;
  int node_rank = 0;
  bool trace = false;
};

// Thrown-free error path: a failed step on any rank stops every rank cleanly.
struct Failure {
  bool failed = false;
  std::string message;
};

// Barrier, time op on every rank, barrier; returns the maximum over ranks, or
// a negative value when op failed on some rank (its message is in *failure).
double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; }

double TimeCollective(const World& w, const std::string& label,
                      const std::function<bool(std::string*)>& op, Failure* failure) {
  std::string error;
  rusage u0{}, u1{};
  MPI_Barrier(w.comm);
  if (w.trace) getrusage(RUSAGE_THREAD, &u0);
  double t0 = MPI_Wtime();
  bool ok = op(&error);
  double t1 = MPI_Wtime();
  if (w.trace) {
    // The calling thread only: Cairn's own threads, if any, are not counted.
    getrusage(RUSAGE_THREAD, &u1);
    std::fprintf(stderr,
                 "trace rank %d %-40s wall %.4f user %.4f sys %.4f invol_cs %ld vol_cs %ld "
                 "minflt %ld majflt %ld\n",
                 w.rank, label.c_str(), t1 - t0, Seconds(u1.ru_utime) - Seconds(u0.ru_utime),
                 Seconds(u1.ru_stime) - Seconds(u0.ru_stime), u1.ru_nivcsw - u0.ru_nivcsw,
                 u1.ru_nvcsw - u0.ru_nvcsw, u1.ru_minflt - u0.ru_minflt,
                 u1.ru_majflt - u0.ru_majflt);
  }
  MPI_Barrier(w.comm);
  double local[2] = {t1 - t0, ok ? 0.0 : 1.0};
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_MAX, w.comm);
  if (!ok) {
    failure->failed = true;
    failure->message = error;
  }
  if (global[1] != 0.0) {
    failure->failed = true;
    return -1.0;
  }
  return global[0];
}

// True on every rank if cond holds on every rank.
bool AllTrue(const World& w, bool cond) {
  int in = cond ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, w.comm);
  return out == 1;
}

// ---------------------------------------------------------------- results --

// One baseline column of a case.
struct Baseline {
  std::string key;     // JSON prefix: raw, memcpy, direct, direct_overwrite
  std::string method;  // what it does, for the reader
  std::vector<double> samples;
};

struct CaseResult {
  std::string tier;
  std::string op;
  std::vector<double> cairn;
  std::vector<Baseline> baselines;     // [0] is "raw"
  std::vector<double> cairn_extra;     // wait (checkpoint) or restart_test (restart)
  std::string cairn_extra_key;
  std::string cache;                   // ssd restart: "cold" or "warm"
  double resident_fraction = 0.0;      // ssd restart: worst page-cache residency left
  std::string ecc;                     // --ecc cases: tiers.memory.ecc
  bool ecc_sync = false;               // --ecc cases: tiers.memory.ecc_sync
  double ratio_to_none = 0.0;          // --ecc cases: median over rounds against ecc = none's
  // --ecc cases with a sidecar: per version, the slowest rank's seconds from
  // the commit to ECC protection (cairn_checkpoint_info.ecc_protected_after).
  std::vector<double> ecc_window;
};

void PrintJson(const CaseResult& c, int ranks, uint64_t bytes, int reps, uint64_t seed,
               bool samples, int busy) {
  double total = static_cast<double>(ranks) * static_cast<double>(bytes);
  auto gbps = [&](double s) { return s > 0 ? total / s / 1e9 : 0.0; };
  const double cairn = cairn_bench::Median(c.cairn);
  const double raw = cairn_bench::Median(c.baselines[0].samples);
  cairn_bench::Json j;
  j["bench"] = "ckpt_bandwidth";
  j["tier"] = c.tier;
  j["op"] = c.op;
  j["ranks"] = ranks;
  j["bytes_per_rank"] = bytes;
  j["reps"] = reps;
  j["busy_threads_per_node"] = busy;
  j["cairn_seconds"] = cairn;
  j["raw_seconds"] = raw;
  j["ratio"] = raw > 0 ? cairn / raw : 0.0;
  j["cairn_gbps"] = gbps(cairn);
  j["raw_gbps"] = gbps(raw);
  for (size_t i = 1; i < c.baselines.size(); ++i) {
    const Baseline& b = c.baselines[i];
    const double s = cairn_bench::Median(b.samples);
    j[b.key + "_seconds"] = s;
    j[b.key + "_gbps"] = gbps(s);
    j["ratio_" + b.key] = s > 0 ? cairn / s : 0.0;
  }
  auto [cmin, cmax] = std::minmax_element(c.cairn.begin(), c.cairn.end());
  auto [rmin, rmax] = std::minmax_element(c.baselines[0].samples.begin(),
                                          c.baselines[0].samples.end());
  j["cairn_seconds_min"] = *cmin;
  j["cairn_seconds_max"] = *cmax;
  j["raw_seconds_min"] = *rmin;
  j["raw_seconds_max"] = *rmax;
  // Best case against best case: less sensitive to bursts of load from
  // other processes than the ratio of medians, which stays the headline.
  j["ratio_min"] = *rmin > 0 ? *cmin / *rmin : 0.0;
  if (!c.cairn_extra_key.empty()) j[c.cairn_extra_key] = cairn_bench::Median(c.cairn_extra);
  if (!c.cache.empty()) {
    j["cache"] = c.cache;
    j["resident_fraction"] = c.resident_fraction;
  }
  if (!c.ecc.empty()) {
    j["ecc"] = c.ecc;
    j["ecc_sync"] = c.ecc_sync;
    j["ratio_to_none"] = c.ratio_to_none;
  }
  if (!c.ecc_window.empty()) {
    j["ecc_window_seconds"] = cairn_bench::Median(c.ecc_window);
    j["ecc_window_seconds_max"] = *std::max_element(c.ecc_window.begin(), c.ecc_window.end());
  }
  for (const Baseline& b : c.baselines) j[b.key + "_method"] = b.method;
  if (samples) {
    j["cairn_samples"] = c.cairn;
    for (const Baseline& b : c.baselines) j[b.key + "_samples"] = b.samples;
  }
  j["seed"] = seed;
  cairn_bench::PrintJsonLine(j);
}

void PrintTable(const std::vector<CaseResult>& cases, int ranks, uint64_t bytes, int reps,
                uint64_t seed, int busy) {
  double total = static_cast<double>(ranks) * static_cast<double>(bytes);
  auto gbps = [&](double s) { return s > 0 ? total / s / 1e9 : 0.0; };
  std::printf("ckpt_bandwidth: %d ranks x %" PRIu64 " MiB, median of %d reps after 1 warm-up, "
              "seed %" PRIu64 "\n", ranks, bytes >> 20, reps, seed);
  if (busy > 0) std::printf("%d spinning thread(s) per node during every case\n", busy);
  std::printf("seconds are the max over ranks; GB/s are aggregate (ranks x bytes / s / 1e9)\n\n");
  std::printf("%-7s %-16s %10s %7s %10s %7s %6s   %s\n", "tier", "op", "cairn s", "GB/s",
              "raw s", "GB/s", "ratio", "other baselines (s, GB/s, cairn/baseline)");
  for (const CaseResult& c : cases) {
    double cairn = cairn_bench::Median(c.cairn);
    double raw = cairn_bench::Median(c.baselines[0].samples);
    std::printf("%-7s %-16s %10.4f %7.2f %10.4f %7.2f %6.3f  ", c.tier.c_str(), c.op.c_str(),
                cairn, gbps(cairn), raw, gbps(raw), raw > 0 ? cairn / raw : 0.0);
    for (size_t i = 1; i < c.baselines.size(); ++i) {
      double s = cairn_bench::Median(c.baselines[i].samples);
      std::printf(" %s %.4f %.2f %.3f;", c.baselines[i].key.c_str(), s, gbps(s),
                  s > 0 ? cairn / s : 0.0);
    }
    if (!c.cairn_extra_key.empty()) {
      std::printf(" %s %.4f;", c.cairn_extra_key.c_str(), cairn_bench::Median(c.cairn_extra));
    }
    if (!c.cache.empty()) std::printf(" cache %s", c.cache.c_str());
    if (!c.ecc.empty()) {
      std::printf(" ecc %s%s ratio_to_none %.3f", c.ecc.c_str(), c.ecc_sync ? " (sync)" : "",
                  c.ratio_to_none);
    }
    if (!c.ecc_window.empty()) std::printf(" ecc_window %.4f", cairn_bench::Median(c.ecc_window));
    std::printf("\n");
  }
  std::printf("\nbaselines:\n");
  for (const CaseResult& c : cases) {
    for (const Baseline& b : c.baselines) {
      std::printf("  %-7s %-16s %-17s %s\n", c.tier.c_str(), c.op.c_str(), b.key.c_str(),
                  b.method.c_str());
    }
  }
}

// ------------------------------------------------------------ the bench --

struct Run {
  Options opt;
  World w;
  size_t bytes = 0;
  std::string run_dir;   // <--dir>/run-<id>: ssd tier, disk baselines, configs
  std::string shm_dir;   // /dev/shm/cairn-bench-<uid>-<id>: memory tier, shm baselines
  Buffer* buf = nullptr; // the protected region
  Failure failure;
};

// The config file of one case, written by each node's first rank; `ecc`
// sets tiers.memory.ecc when not empty.
bool WriteConfig(Run& r, const std::string& tier, std::string* path, const std::string& ecc = "",
                 bool ecc_sync = false) {
  const std::string label = ecc + (ecc_sync ? "-sync" : "");
  *path = r.run_dir + "/" + tier + (ecc.empty() ? "" : "-ecc-" + label) + ".toml";
  // One tier only, no draining.
  toml::table doc{{"general", toml::table{{"dir", r.run_dir}}}};
  if (tier == "memory") {
    doc.insert("placement", toml::table{{"policy", "memory"}});
    // Each ecc mode its own tier, removed after its case (memory-only
    // copies are kept at finalize).
    toml::table memory{{"path", r.shm_dir + (ecc.empty() ? "/cairn" : "/cairn-ecc-" + label) +
                                    "/{node}"}};
    // Room for keep = 2 versions, the one being written and the spare slot,
    // per rank of the node.
    int local = 1;
    MPI_Comm_size(r.w.node, &local);
    // A sidecar adds at most 3/16 of the part (RS(19,16)).
    uint64_t copy = ecc.empty() ? r.bytes : r.bytes + r.bytes / 4;
    uint64_t need = static_cast<uint64_t>(local) * copy * 4;
    if (need > (4ULL << 30)) memory.insert("capacity", std::to_string(need >> 20) + "MiB");
    if (!ecc.empty()) memory.insert("ecc", ecc);
    if (ecc_sync) memory.insert("ecc_sync", true);
    doc.insert("tiers", toml::table{{"memory", memory},
                                    {"ssd", toml::table{{"enabled", false}}},
                                    {"pfs", toml::table{{"enabled", false}}}});
  } else {
    doc.insert("placement", toml::table{{"policy", "ssd"}});
    doc.insert("tiers", toml::table{{"memory", toml::table{{"enabled", false}}},
                                    {"ssd", toml::table{{"path", r.run_dir + "/cairn-ssd/{node}"}}},
                                    {"pfs", toml::table{{"enabled", false}}}});
  }
  if (r.opt.ranks_per_node >= 0) {
    doc.insert("topology", toml::table{{"ranks_per_node", r.opt.ranks_per_node}});
  }
  const std::string t = cairn_bench::TomlText(doc);
  std::string error;
  bool ok = true;
  if (r.w.node_rank == 0) {
    std::string tmp = *path + ".tmp";
    RemoveFile(tmp);
    ok = WriteFreshFile(tmp, t.data(), t.size(), false, Sync::kNone, &error) &&
         rename(tmp.c_str(), path->c_str()) == 0;
    if (!ok && error.empty()) error = Errno("rename " + *path);
  }
  if (!AllTrue(r.w, ok)) {
    if (!ok) std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, error.c_str());
    return false;
  }
  return true;
}

// A Cairn call failed on this rank: remember its message.
bool CairnFailed(const char* what, int rc, std::string* error) {
  *error = std::string(what) + " returned " + std::to_string(rc) + ": " +
           cairn_error_message(rc);
  return false;
}

bool CairnOpen(Run& r, const std::string& config) {
  int rc = cairn_init(r.w.comm, config.c_str());
  std::string error;
  bool ok = rc == CAIRN_SUCCESS || (CairnFailed("cairn_init", rc, &error), false);
  if (ok) {
    rc = cairn_protect(0, r.buf->p, r.bytes, 1);
    ok = rc == CAIRN_SUCCESS || (CairnFailed("cairn_protect", rc, &error), false);
  }
  if (!AllTrue(r.w, ok)) {
    if (!ok) std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, error.c_str());
    r.failure.failed = true;
    return false;
  }
  return true;
}

bool CairnClose(Run& r) {
  int rc = cairn_finalize();
  std::string error;
  bool ok = rc == CAIRN_SUCCESS || (CairnFailed("cairn_finalize", rc, &error), false);
  if (!AllTrue(r.w, ok)) {
    if (!ok) std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, error.c_str());
    r.failure.failed = true;
    return false;
  }
  return true;
}

// Runs the methods of one repetition in an order rotated by `rep`.
// Each entry: index into the sample vectors (-1: cairn) and the operation.
struct Method {
  int slot;  // -1 cairn, >= 0 baseline index
  std::string label;                          // for --trace
  std::function<bool(std::string*)> prepare;  // untimed, before the op (may be empty)
  std::function<bool(std::string*)> op;       // timed
  std::function<bool(std::string*)> check;    // untimed, after the op (may be empty)
};

bool RunRep(Run& r, std::vector<Method>& methods, int rep, bool keep, CaseResult* out) {
  size_t n = methods.size();
  for (size_t k = 0; k < n; ++k) {
    Method& m = methods[(k + static_cast<size_t>(rep)) % n];
    std::string error;
    if (m.prepare && !AllTrue(r.w, m.prepare(&error) || (r.failure.message = error, false))) {
      r.failure.failed = true;
      return false;
    }
    if (r.opt.prime) PrimeFreePages(r.bytes + (64u << 20));
    double t = TimeCollective(
        r.w, out->tier + " " + out->op + " " + m.label + " rep " + std::to_string(rep), m.op,
        &r.failure);
    if (t < 0) return false;
    if (m.check && !AllTrue(r.w, m.check(&error) || (r.failure.message = error, false))) {
      r.failure.failed = true;
      return false;
    }
    if (keep) {
      if (m.slot < 0) {
        out->cairn.push_back(t);
      } else {
        out->baselines[static_cast<size_t>(m.slot)].samples.push_back(t);
      }
    }
  }
  return true;
}

std::string RawPath(const std::string& dir, const char* kind, int rank, int version) {
  return dir + "/" + kind + ".rank" + std::to_string(rank) + ".v" + std::to_string(version);
}

// cairn_checkpoint_wait() on every rank, timed as TimeCollective times
// (the slowest rank's seconds; < 0 on failure, recorded in r.failure).
double TimedWait(Run& r, const std::string& label) {
  return TimeCollective(r.w, label,
                        [](std::string* e) {
                          int rc = cairn_checkpoint_wait();
                          return rc == CAIRN_SUCCESS ||
                                 CairnFailed("cairn_checkpoint_wait", rc, e);
                        },
                        &r.failure);
}

// The timed op of a checkpoint case: cairn_checkpoint(name, version), with
// `version` read at each call.
std::function<bool(std::string*)> CheckpointOp(const std::string& name, const int& version) {
  return [&name, &version](std::string* e) {
    int rc = cairn_checkpoint(name.c_str(), version);
    return rc == CAIRN_SUCCESS || CairnFailed("cairn_checkpoint", rc, e);
  };
}

// The memory tier's checkpoint baselines of a case that makes a fresh
// file per version: write() of buf into a fresh /dev/shm file named
// `prefix` (removed after the op), and memcpy into dst's faulted-in pages.
// `version` is read at each op; `prepare` (may be empty) runs before each.
void AddFreshShmBaselines(std::vector<Method>* methods, const std::string& raw_dir,
                          const char* prefix, int rank, void* buf, size_t n,
                          const int& version, ShmMap& dst,
                          const std::function<bool(std::string*)>& prepare) {
  methods->push_back({0, "raw", prepare,
                      [&raw_dir, prefix, rank, buf, n, &version](std::string* e) {
                        return WriteFreshFile(RawPath(raw_dir, prefix, rank, version), buf, n,
                                              false, Sync::kNone, e);
                      },
                      [&raw_dir, prefix, rank, &version](std::string*) {
                        RemoveFile(RawPath(raw_dir, prefix, rank, version));
                        return true;
                      }});
  methods->push_back({1, "memcpy", prepare,
                      [&dst, buf, n](std::string*) {
                        std::memcpy(dst.p, buf, n);
                        return true;
                      },
                      nullptr});
}

// Poisons the buffer so that a restore that does nothing cannot pass.
bool Poison(Run& r, std::string*) {
  std::memset(r.buf->p, 0xa5, r.bytes);
  return true;
}

bool Verify(Run& r, int version, const char* who, std::string* error) {
  long long at = FirstMismatch(r.buf->p, r.bytes, r.opt.seed, r.w.rank, version);
  if (at < 0) return true;
  *error = std::string(who) + ": restored data differ from version " + std::to_string(version) +
           " at byte " + std::to_string(at * 8);
  return false;
}

// The first checkpoint of a fresh instance, on the memory tier: each
// repetition opens Cairn, protects the buffer, fills it (the application's
// first computation, during which Cairn reserves its slots in the
// background), waits for that reservation to end (timed apart: how much
// computation it needs to stay hidden), then times one checkpoint and
// finalizes. The finalize releases the spare slots, so that every
// repetition starts without any.
bool BenchFirstCheckpoint(Run& r, const std::string& config, const std::string& raw_dir,
                          std::vector<CaseResult>* results) {
  const std::string name = "bench_first";
  const int rank = r.w.rank;
  const size_t n = r.bytes;
  void* buf = r.buf->p;
  CaseResult fc;
  fc.tier = "memory";
  fc.op = "first-checkpoint";
  fc.cairn_extra_key = "cairn_reserve_wait_seconds";
  fc.baselines = {{"raw", "write() into a fresh file on /dev/shm", {}},
                  {"memcpy", "memcpy into already-mapped, already-faulted /dev/shm pages", {}},
                  {"memcpy_fresh",
                   "memcpy into a fresh /dev/shm file, mapped and faulted in just before, as a "
                   "fresh instance's slots are",
                   {}}};
  ShmMap shm_dst;
  std::string error;
  if (!AllTrue(r.w, shm_dst.Open(RawPath(raw_dir, "first-memcpy", rank, 0), n, &error))) {
    std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", rank, error.c_str());
    return false;
  }
  int version = 0;
  bool keep = false;
  auto fill = [&](std::string*) {
    FillRandom(buf, n, r.opt.seed, rank, version);
    return true;
  };
  auto open_fresh = [&](std::string* e) {
    if (!CairnOpen(r, config)) return (*e = "cairn_init or cairn_protect failed", false);
    fill(e);
    double t = TimedWait(r, "memory first-checkpoint reservation wait");
    if (keep) fc.cairn_extra.push_back(t);
    return t >= 0;
  };
  std::vector<Method> methods;
  // Each instance starts as a job's first run does, with no version of
  // its name: the close deletes them, else the next instance's first
  // checkpoint would retire the last one's (a restarted job's case, whose
  // background deletion then shares the core with the call).
  auto close = [&](std::string* e) {
    int rc = cairn_delete(name.c_str());
    if (rc != CAIRN_SUCCESS) return CairnFailed("cairn_delete", rc, e);
    return CairnClose(r) || (*e = "cairn_finalize failed", false);
  };
  methods.push_back({-1, "cairn", open_fresh, CheckpointOp(name, version), close});
  AddFreshShmBaselines(&methods, raw_dir, "first-raw", rank, buf, n, version, shm_dst, fill);
  // Cairn's first checkpoint writes into slots made for the instance, not
  // into pages written many times before. This baseline copies into pages
  // as new, so that a slow repetition tells whether new memory was slow
  // (on a VM whose host takes back what the guest frees, it can be) or
  // Cairn was (docs/results.md).
  std::unique_ptr<ShmMap> fresh_dst;
  const std::string fresh_path = RawPath(raw_dir, "first-memcpy-fresh", rank, 0);
  methods.push_back({2, "memcpy_fresh",
                     [&](std::string* e) {
                       fill(e);
                       fresh_dst = std::make_unique<ShmMap>();
                       return fresh_dst->Open(fresh_path, n, e);
                     },
                     [&](std::string*) {
                       std::memcpy(fresh_dst->p, buf, n);
                       return true;
                     },
                     [&](std::string*) {
                       fresh_dst.reset();
                       RemoveFile(fresh_path);
                       return true;
                     }});
  for (version = 0; version <= r.opt.reps; ++version) {
    keep = version > 0;
    if (!RunRep(r, methods, version, keep, &fc)) return false;
  }
  results->push_back(fc);
  return true;
}

// One tier: checkpoint reps, then restart reps in a fresh Cairn instance
// (and on the memory tier, the first checkpoint of fresh instances).
bool BenchTier(Run& r, const std::string& tier, std::vector<CaseResult>* results) {
  const bool mem = tier == "memory";
  const std::string name = mem ? "bench_memory" : "bench_ssd";
  // Baseline files live on the same file system as the tier.
  const std::string raw_dir = (mem ? r.shm_dir : r.run_dir) + "/raw";
  std::string error;
  if (!AllTrue(r.w, MakeDirs(raw_dir, &error))) {
    std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, error.c_str());
    return false;
  }
  std::string config;
  if (!WriteConfig(r, tier, &config)) return false;
  if (!CairnOpen(r, config)) return false;

  const int rank = r.w.rank;
  const size_t n = r.bytes;
  void* buf = r.buf->p;

  // ---- checkpoint ----
  CaseResult ck;
  ck.tier = tier;
  ck.op = "checkpoint";
  ck.cairn_extra_key = "cairn_wait_seconds";
  ShmMap shm_dst;
  std::string overwrite_path = RawPath(raw_dir, "overwrite", rank, 0);
  if (mem) {
    ck.baselines = {{"raw", "write() into a fresh file on /dev/shm", {}},
                    {"memcpy", "memcpy into already-mapped, already-faulted /dev/shm pages", {}}};
    if (!AllTrue(r.w, shm_dst.Open(RawPath(raw_dir, "memcpy", rank, 0), n, &error))) {
      std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", rank, error.c_str());
      return false;
    }
  } else {
    ck.baselines = {{"raw", "write() + fsync() of a fresh file in --dir", {}},
                    {"direct", "O_DIRECT write() + fdatasync() of a fresh file in --dir", {}},
                    {"direct_overwrite",
                     "O_DIRECT overwrite in place of a preallocated file + fdatasync()", {}}};
    FillRandom(buf, n, r.opt.seed, rank, 0);
    bool ok = WriteFreshFile(overwrite_path, buf, n, false, Sync::kFsync, &error);
    if (!AllTrue(r.w, ok)) {
      std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", rank, error.c_str());
      return false;
    }
  }

  int version = 0;
  std::vector<Method> methods;
  // Disk methods (cairn's included) start on a quiet disk: no journal commit
  // or discard left over from the method before.
  std::function<bool(std::string*)> quiet = [&](std::string*) {
    QuietDisk(r.run_dir);
    return true;
  };
  methods.push_back({-1, "cairn", mem ? nullptr : quiet,
                     CheckpointOp(name, version),
                     nullptr});
  if (mem) {
    methods.push_back({0, "raw", nullptr,
                       [&](std::string* e) {
                         return WriteFreshFile(RawPath(raw_dir, "raw", rank, version), buf, n,
                                               false, Sync::kNone, e);
                       },
                       nullptr});
    methods.push_back({1, "memcpy", nullptr,
                       [&](std::string*) {
                         std::memcpy(shm_dst.p, buf, n);
                         return true;
                       },
                       nullptr});
  } else {
    methods.push_back({0, "raw", quiet,
                       [&](std::string* e) {
                         return WriteFreshFile(RawPath(raw_dir, "raw", rank, version), buf, n,
                                               false, Sync::kFsync, e);
                       },
                       nullptr});
    methods.push_back({1, "direct", quiet,
                       [&](std::string* e) {
                         return WriteFreshFile(RawPath(raw_dir, "direct", rank, version), buf, n,
                                               true, Sync::kFdatasync, e);
                       },
                       nullptr});
    methods.push_back({2, "direct_overwrite", quiet,
                       [&](std::string* e) { return OverwriteDirect(overwrite_path, buf, n, e); },
                       nullptr});
  }
  for (version = 0; version <= r.opt.reps; ++version) {
    FillRandom(buf, n, r.opt.seed, rank, version);
    if (!RunRep(r, methods, version, version > 0, &ck)) return false;
    // Background work (none expected with one tier) is timed apart, so that
    // a library that deferred its sync would show here.
    double tw = TimedWait(r, tier + " checkpoint cairn_checkpoint_wait");
    if (tw < 0) return false;
    if (version > 0) ck.cairn_extra.push_back(tw);
    // Retention of the raw baselines: keep the last two versions.
    if (version >= 2) {
      for (const char* kind : {"raw", "direct"}) {
        RemoveFile(RawPath(raw_dir, kind, rank, version - 2));
      }
    }
  }
  const int last = r.opt.reps;
  results->push_back(ck);
  if (!CairnClose(r)) return false;

  // ---- restart, in a fresh instance ----
  if (!CairnOpen(r, config)) return false;
  CaseResult rs;
  rs.tier = tier;
  rs.op = "restart";
  rs.cairn_extra_key = "cairn_restart_test_seconds";
  const std::string raw_file = RawPath(raw_dir, "raw", rank, last);
  if (mem) {
    rs.baselines = {{"raw", "read() of the raw file on /dev/shm", {}},
                    {"memcpy", "fresh mmap() of the raw file on /dev/shm + memcpy", {}}};
  } else {
    rs.baselines = {{"raw", "read() of the write()+fsync() file in --dir", {}},
                    {"direct", "O_DIRECT read() of the same file", {}}};
    rs.cache = r.opt.warm ? "warm" : "cold";
  }
  double worst_resident = 0.0;
  auto prepare = [&](std::string* e) {
    Poison(r, e);
    if (!mem) {
      QuietDisk(r.run_dir);
      if (!r.opt.warm) {
        // Each node's first rank evicts the node's cairn files; every rank
        // evicts its own baseline file.
        double f = 0.0;
        if (r.w.node_rank == 0) f = EvictTree(r.run_dir + "/cairn-ssd");
        f = std::max(f, EvictTree(raw_file));
        worst_resident = std::max(worst_resident, f);
      }
    }
    return true;
  };
  methods.clear();
  methods.push_back({-1, "cairn", prepare,
                     [&](std::string* e) {
                       int rc = cairn_restart(name.c_str(), last);
                       if (rc == last) return true;
                       if (rc >= 0) {
                         *e = "cairn_restart restored version " + std::to_string(rc) +
                              ", expected " + std::to_string(last);
                         return false;
                       }
                       return CairnFailed("cairn_restart", rc, e);
                     },
                     [&](std::string* e) { return Verify(r, last, "cairn_restart", e); }});
  methods.push_back({0, "raw", prepare,
                     [&](std::string* e) { return ReadFile(raw_file, buf, n, false, e); },
                     [&](std::string* e) { return Verify(r, last, "read()", e); }});
  if (mem) {
    methods.push_back({1, "memcpy", prepare,
                       [&](std::string* e) { return MmapCopy(raw_file, buf, n, e); },
                       [&](std::string* e) { return Verify(r, last, "mmap+memcpy", e); }});
  } else {
    methods.push_back({1, "direct", prepare,
                       [&](std::string* e) { return ReadFile(raw_file, buf, n, true, e); },
                       [&](std::string* e) { return Verify(r, last, "O_DIRECT read()", e); }});
  }
  for (int rep = 0; rep <= r.opt.reps; ++rep) {
    double tt = TimeCollective(r.w, tier + " restart cairn_restart_test",
                               [&](std::string* e) {
                                 int v = cairn_restart_test(name.c_str(), -1);
                                 if (v == last) return true;
                                 *e = "cairn_restart_test found version " + std::to_string(v) +
                                      ", expected " + std::to_string(last) + " (" +
                                      cairn_error_message(CAIRN_E_NOT_FOUND) + ")";
                                 return false;
                               },
                               &r.failure);
    if (tt < 0) return false;
    if (rep > 0) rs.cairn_extra.push_back(tt);
    if (!RunRep(r, methods, rep, rep > 0, &rs)) return false;
  }
  double resident = 0.0;
  MPI_Allreduce(&worst_resident, &resident, 1, MPI_DOUBLE, MPI_MAX, r.w.comm);
  rs.resident_fraction = resident;
  if (!mem && !r.opt.warm && resident > 0.01 && r.w.rank == 0) {
    std::fprintf(stderr,
                 "ckpt_bandwidth: warning: %.1f%% of the ssd files stayed in the page cache "
                 "after eviction; the ssd restart is not fully cold\n", resident * 100);
  }
  results->push_back(rs);
  if (!CairnClose(r)) return false;
  return !mem || BenchFirstCheckpoint(r, config, raw_dir, results);
}

// After a timed checkpoint call: waits for its background work (the ECC
// encode) and, when `keep`, appends the wait and the encode window that
// cairn_last_checkpoint reports (-1: no sidecar) to this rank's samples.
bool WaitForEncode(bool keep, std::vector<double>* waits, std::vector<double>* windows,
                   std::string* error) {
  const double start = MPI_Wtime();
  int rc = cairn_checkpoint_wait();
  if (rc != CAIRN_SUCCESS) return CairnFailed("cairn_checkpoint_wait", rc, error);
  const double waited = MPI_Wtime() - start;
  cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
  rc = cairn_last_checkpoint(&info);
  if (rc != CAIRN_SUCCESS) return CairnFailed("cairn_last_checkpoint", rc, error);
  if (keep) {
    waits->push_back(waited);
    windows->push_back(info.ecc_protected_after);
  }
  return true;
}

// Per sample, the largest of the ranks' (every rank holds as many).
std::vector<double> SlowestRank(const World& w, std::vector<double> samples) {
  MPI_Allreduce(MPI_IN_PLACE, samples.data(), static_cast<int>(samples.size()), MPI_DOUBLE,
                MPI_MAX, w.comm);
  return samples;
}

// --ecc: memory-tier checkpoints with tiers.memory.ecc = none, normal and
// strong (and the last two with ecc_sync), each mode in a fresh instance
// (the setting is read at init), as the steady checkpoint case measures
// them (one warm-up, reps timed, new data each version; baselines as for
// that case). The modes run one after the other in --ecc-rounds rounds,
// so that a change of load on a shared machine falls into every mode
// alike: each round's ratio is the mode's median against the none case's
// of the same round, and ratio_to_none is the median of those ratios. The
// sidecar is encoded after the call returns: right after each call
// (untimed, so that the encode overlaps no baseline) the case waits for
// it, and records the wait (cairn_wait_seconds) and the encode window the
// library reports (ecc_window_seconds: commit to protected, the slowest
// rank's).
struct EccCase {
  const char* mode;
  bool sync;  // tiers.memory.ecc_sync: the sidecar encoded inside the call (the A of the A/B)
};

// One round of one mode: a fresh instance, a warm-up and reps versions,
// whose samples are appended to *ck.
bool RunEccRound(Run& r, const EccCase& c, const std::string& raw_dir, ShmMap& shm_dst,
                 CaseResult* ck) {
  const int rank = r.w.rank;
  void* buf = r.buf->p;
  const std::string mode = c.mode;
  const std::string label = mode + (c.sync ? "-sync" : "");
  std::string config;
  if (!WriteConfig(r, "memory", &config, mode, c.sync) || !CairnOpen(r, config)) return false;
  const std::string name = "bench_ecc_" + label;
  int version = 0;
  std::vector<double> waits, windows;  // this rank's, per timed version
  std::vector<Method> methods;
  methods.push_back({-1, "cairn", nullptr,
                     CheckpointOp(name, version),
                     [&](std::string* e) {
                       return WaitForEncode(version > 0, &waits, &windows, e);
                     }});
  AddFreshShmBaselines(&methods, raw_dir, "raw", rank, buf, r.bytes, version, shm_dst, nullptr);
  // Background work (the reservation of the instance's slots before the
  // first version) is waited for before each version.
  for (version = 0; version <= r.opt.reps; ++version) {
    FillRandom(buf, r.bytes, r.opt.seed, rank, version);
    double tw = TimedWait(r, "memory checkpoint ecc " + label + " wait");
    if (tw < 0) return false;
    if (!RunRep(r, methods, version, version > 0, ck)) return false;
  }
  if (!CairnClose(r)) return false;
  for (double w : SlowestRank(r.w, waits)) ck->cairn_extra.push_back(w);
  if (ck->ecc != "none") {
    for (double w : SlowestRank(r.w, windows)) ck->ecc_window.push_back(w);
  }
  MPI_Barrier(r.w.comm);
  if (r.w.node_rank == 0) cairn_bench::RemoveTree(r.shm_dir + "/cairn-ecc-" + label);
  return true;
}

bool BenchEcc(Run& r, std::vector<CaseResult>* results) {
  const std::string raw_dir = r.shm_dir + "/raw-ecc";
  std::string error;
  ShmMap shm_dst;
  if (!AllTrue(r.w, MakeDirs(raw_dir, &error) &&
                        shm_dst.Open(RawPath(raw_dir, "memcpy", r.w.rank, 0), r.bytes, &error))) {
    std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, error.c_str());
    return false;
  }
  const std::vector<EccCase> cases = {{"none", false}, {"normal", false}, {"strong", false},
                                      {"normal", true}, {"strong", true}};
  std::vector<CaseResult> ck(cases.size());
  std::vector<std::vector<double>> round_ratios(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    ck[i].tier = "memory";
    ck[i].op = "checkpoint";
    ck[i].ecc = cases[i].mode;
    ck[i].ecc_sync = cases[i].sync;
    ck[i].cairn_extra_key = "cairn_wait_seconds";
    ck[i].baselines = {{"raw", "write() into a fresh file on /dev/shm", {}},
                       {"memcpy", "memcpy into already-mapped, already-faulted /dev/shm pages", {}}};
  }
  for (int round = 0; round < r.opt.ecc_rounds; ++round) {
    double none_seconds = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      const size_t before = ck[i].cairn.size();
      if (!RunEccRound(r, cases[i], raw_dir, shm_dst, &ck[i])) return false;
      const double median = cairn_bench::Median(
          {ck[i].cairn.begin() + static_cast<std::ptrdiff_t>(before), ck[i].cairn.end()});
      if (i == 0) none_seconds = median;
      round_ratios[i].push_back(none_seconds > 0 ? median / none_seconds : 0.0);
    }
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    ck[i].ratio_to_none = cairn_bench::Median(round_ratios[i]);
    results->push_back(std::move(ck[i]));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  cairn_bench::RemovedAtExit removed_at_exit;  // before MPI_Init: it forks
  MPI_Init(&argc, &argv);
  Run r;
  MPI_Comm_rank(r.w.comm, &r.w.rank);
  MPI_Comm_size(r.w.comm, &r.w.size);
  MPI_Comm_split_type(r.w.comm, MPI_COMM_TYPE_SHARED, r.w.rank, MPI_INFO_NULL, &r.w.node);
  MPI_Comm_rank(r.w.node, &r.w.node_rank);

  if (auto exit = ParseOptions(argc, argv, &r.opt, r.w.rank == 0)) {
    MPI_Finalize();
    return *exit;
  }
  std::string error;
  r.bytes = static_cast<size_t>(r.opt.mib) << 20;
  r.w.trace = r.opt.trace;

  const long long id = cairn_bench::SharedRunId(r.w.comm);
  bool ok = MakeDirs(r.opt.dir, &error);
  char real[PATH_MAX];
  if (ok && realpath(r.opt.dir.c_str(), real) == nullptr) ok = (error = Errno(r.opt.dir), false);
  if (ok) {
    r.run_dir = std::string(real) + "/run-" + std::to_string(id);
    r.shm_dir = "/dev/shm/cairn-bench-" + std::to_string(getuid()) + "-" + std::to_string(id);
    ok = MakeDirs(r.run_dir, &error) && MakeDirs(r.shm_dir, &error);
    if (!r.opt.keep_data && r.w.node_rank == 0) {
      removed_at_exit.Add(r.run_dir);
      removed_at_exit.Add(r.shm_dir);
    }
  }
  Buffer buffer(r.bytes);
  if (ok && buffer.p == nullptr) ok = (error = Errno("mmap of the data buffer"), false);
  r.buf = &buffer;
  if (!AllTrue(r.w, ok)) {
    if (!ok) std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, error.c_str());
    MPI_Finalize();
    return 1;
  }

  std::vector<CaseResult> results;
  bool good = true;
  {
    BusyCores busy(r.w.node_rank == 0 ? r.opt.busy : 0);
    if (r.opt.do_memory) good = BenchTier(r, "memory", &results);
    if (good && r.opt.do_ssd) good = BenchTier(r, "ssd", &results);
    if (good && r.opt.ecc) good = BenchEcc(r, &results);
  }
  if (!good && !r.failure.message.empty()) {
    std::fprintf(stderr, "ckpt_bandwidth: rank %d: %s\n", r.w.rank, r.failure.message.c_str());
  }

  MPI_Barrier(r.w.comm);
  if (!r.opt.keep_data && r.w.node_rank == 0) {
    cairn_bench::RemoveTree(r.run_dir);
    cairn_bench::RemoveTree(r.shm_dir);
  }
  if (good && r.w.rank == 0) {
    if (r.opt.json) {
      for (const CaseResult& c : results) {
        PrintJson(c, r.w.size, r.bytes, r.opt.reps, r.opt.seed, r.opt.samples, r.opt.busy);
      }
    } else {
      PrintTable(results, r.w.size, r.bytes, r.opt.reps, r.opt.seed, r.opt.busy);
    }
    std::fflush(stdout);
  }
  MPI_Comm_free(&r.w.node);
  MPI_Finalize();
  return good ? 0 : 1;
}
