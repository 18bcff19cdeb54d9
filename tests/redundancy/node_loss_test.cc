// node_loss_test: a job loses whole virtual nodes — every node-local tier
// of them, memory and ssd — and restarts (docs/redundancy.md).
//
//   mpirun -np R node_loss_test --scheme xor --ranks-per-node 2 --lose 1
//          [--parity M] [--pfs] [--sync] [--corrupt-parity] [--corrupt-part]
//          [--second-loss] [--placement ssd]
//          [--expect rebuilt|pfs|error] [--seed N]
//
// Without --seed (or with 0), rank 0 draws one, so that every run loses
// other nodes after another number of versions; the seed is printed, and
// --seed repeats a run.
// Run 1 protects a buffer per rank (sizes differ by rank), checkpoints
// versions 1..K (K random, from the seed) and finalizes. Rank 0 then
// deletes the node-local directories of --lose random virtual nodes (and,
// with --corrupt-parity, flips a byte in the parity files of a survivor of
// a lost rank's group; with --corrupt-part, flips a byte in the part files
// of one random rank on every node-local tier, so that its copies are all
// complete but corrupt). With --placement ssd every version goes straight
// to the ssd tier and is kept, and each node's SSD wear ledger must count
// at least every byte on its ssd tier, parity included. Run 2 restarts and
// expects:
//   rebuilt  version K restored bit for bit, the lost (and corrupt) ranks'
//            parts rebuilt from their groups and written back with their parity (with
//            --second-loss, another node is then lost and run 3 restarts
//            from what run 2 wrote back);
//   pfs      version K restored from the pfs, nothing rebuilt;
//   error    no version recoverable, an error naming what the scheme
//            survives, and the protected buffer untouched.
// Prints the seed; exits 0 when every rank passed.
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cairn/cairn.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string scheme = "xor";
  int ranks_per_node = 1;
  int parity = 2;
  int lose = 1;
  bool pfs = false;
  bool sync = false;
  bool corrupt_parity = false;
  bool corrupt_part = false;
  std::string placement = "memory";
  bool second_loss = false;
  std::string expect = "rebuilt";
  unsigned seed = 0;  // 0: drawn at random by rank 0, so that each run tries other nodes
  // "" (the scenario above), "endless" (checkpoint versions 1, 2, ... in
  // --dir until killed, printing each), "restore-any" (restart from the
  // newest recoverable version in --dir and compare it bit for bit).
  std::string mode;
  std::string dir;  // with --mode: the data directory (memory tier: <dir>/shm)
  int kib = 0;      // per-rank checkpoint size (0: about 300 KB)
  int min_version = 1;  // restore-any: the oldest version acceptable
};

int g_rank = 0;
int g_size = 1;
int g_failures = 0;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "rank %d: FAILED %s: ", g_rank, #cond);     \
      std::fprintf(stderr, __VA_ARGS__);                              \
      std::fprintf(stderr, "\n");                                     \
      ++g_failures;                                                   \
    }                                                                 \
  } while (0)

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--scheme") o.scheme = next();
    else if (a == "--ranks-per-node") o.ranks_per_node = std::atoi(next().c_str());
    else if (a == "--parity") o.parity = std::atoi(next().c_str());
    else if (a == "--lose") o.lose = std::atoi(next().c_str());
    else if (a == "--pfs") o.pfs = true;
    else if (a == "--sync") o.sync = true;
    else if (a == "--corrupt-parity") o.corrupt_parity = true;
    else if (a == "--corrupt-part") o.corrupt_part = true;
    else if (a == "--placement") o.placement = next();
    else if (a == "--second-loss") o.second_loss = true;
    else if (a == "--expect") o.expect = next();
    else if (a == "--seed") o.seed = static_cast<unsigned>(std::atoi(next().c_str()));
    else if (a == "--mode") o.mode = next();
    else if (a == "--dir") o.dir = next();
    else if (a == "--kib") o.kib = std::atoi(next().c_str());
    else if (a == "--min-version") o.min_version = std::atoi(next().c_str());
  }
  return o;
}

// This rank's checkpoint content of `version`: deterministic in (seed,
// rank, version), of a size that differs by rank (groups pad to the
// largest part).
std::vector<uint8_t> Content(const Options& o, int rank, int version) {
  const size_t base = o.kib > 0 ? static_cast<size_t>(o.kib) * 1024 : 300000;
  std::vector<uint8_t> out(base + static_cast<size_t>(rank) * 4099);
  std::mt19937_64 gen(o.seed * 1000003ull + rank * 7919ull + static_cast<uint64_t>(version));
  for (size_t i = 0; i + 8 <= out.size(); i += 8) {
    uint64_t w = gen();
    std::memcpy(&out[i], &w, 8);
  }
  return out;
}

std::string g_dir;  // shared by all ranks
std::string g_shm;  // the memory tiers

std::string WriteConfig(const Options& o) {
  std::string path = g_dir + "/cairn.toml";
  if (g_rank == 0) {
    std::ofstream f(path);
    f << "[general]\ndir = \"" << g_dir << "\"\n"
      << "[tiers.memory]\npath = \"" << g_shm << "/{node}\"\n"
      << "[tiers.ssd]\npath = \"" << g_dir << "/ssd/{node}\"\n"
      << "[tiers.pfs]\nenabled = " << (o.pfs ? "true" : "false") << "\npath = \"" << g_dir
      << "/pfs\"\n"
      << "[placement]\npolicy = \"" << o.placement << "\"\n"
      << (o.placement == "ssd" ? "[retention]\nkeep = 8\n" : "")
      << "[topology]\nranks_per_node = " << o.ranks_per_node << "\n"
      << "[redundancy]\nscheme = \"" << o.scheme << "\"\nparity = " << o.parity
      << "\nsync = " << (o.sync ? "true" : "false") << "\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

void Check(int rc, const char* what) {
  if (rc != CAIRN_SUCCESS) {
    std::fprintf(stderr, "rank %d: %s failed: %s\n", g_rank, what, cairn_error_message(CAIRN_LAST_ERROR));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// Run 1: versions 1..k of this rank's content, then a clean finalize.
void WriteVersions(const Options& o, const std::string& config, int k) {
  Check(cairn_init(MPI_COMM_WORLD, config.c_str()), "cairn_init");
  std::vector<uint8_t> buf = Content(o, g_rank, 1);
  Check(cairn_protect(0, buf.data(), buf.size(), 1), "cairn_protect");
  for (int v = 1; v <= k; ++v) {
    std::vector<uint8_t> next = Content(o, g_rank, v);
    std::memcpy(buf.data(), next.data(), buf.size());
    Check(cairn_checkpoint("state", v), "cairn_checkpoint");
  }
  Check(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  Check(cairn_finalize(), "cairn_finalize");
}

// Rank 0 removes every node-local directory of the given nodes.
void LoseNodes(const std::set<int>& nodes) {
  if (g_rank == 0) {
    for (int n : nodes) {
      fs::remove_all(g_shm + "/" + std::to_string(n));
      fs::remove_all(g_dir + "/ssd/" + std::to_string(n));
      std::printf("lost virtual node %d (memory and ssd)\n", n);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Flips the byte `from_end` bytes before the end of rank r's file `file`
// of every version on every node-local tier of its node.
void CorruptFiles(int r, int ranks_per_node, const std::string& file, int from_end) {
  const std::string node = std::to_string(r / ranks_per_node);
  for (const std::string& root : {g_shm + "/" + node, g_dir + "/ssd/" + node}) {
    if (!fs::exists(root + "/state")) continue;
    for (const auto& v : fs::directory_iterator(root + "/state")) {
      fs::path p = v.path() / file;
      if (!fs::exists(p)) continue;
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(-from_end, std::ios::end);
      char c = 0;
      f.read(&c, 1);
      c ^= 0x5a;
      f.seekp(-from_end, std::ios::end);
      f.write(&c, 1);
      std::printf("corrupted %s\n", p.c_str());
    }
  }
}

// A byte in the last row of rank r's parity files.
void CorruptParity(int r, int ranks_per_node) {
  char file[32];
  std::snprintf(file, sizeof(file), "r%06d.parity", r);
  CorruptFiles(r, ranks_per_node, file, 5);
}

// A byte in the data of rank r's part files: complete, but failing their
// CRC32C.
void CorruptPart(int r, int ranks_per_node) {
  char file[32];
  std::snprintf(file, sizeof(file), "r%06d.part", r);
  CorruptFiles(r, ranks_per_node, file, 1000);
}

// The bytes a node's SSD wear ledger counts: per writer, the larger
// "bytes" of its two slot files (the count only grows).
uint64_t LedgerBytes(const std::string& ssd_root) {
  std::map<std::string, uint64_t> writers;
  const fs::path wear = fs::path(ssd_root) / ".wear";
  if (!fs::exists(wear)) return 0;
  for (const auto& f : fs::recursive_directory_iterator(wear)) {
    if (!f.is_regular_file()) continue;
    std::ifstream in(f.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find("\"bytes\":");
    if (at == std::string::npos) continue;
    const uint64_t bytes = std::strtoull(text.c_str() + at + 8, nullptr, 10);
    uint64_t& w = writers[f.path().stem().string()];
    w = std::max(w, bytes);
  }
  uint64_t sum = 0;
  for (const auto& [writer, bytes] : writers) sum += bytes;
  return sum;
}

// Every byte on each node's ssd tier (versions are kept: --placement ssd
// with keep 8) was written there, parity files included, so the ledger
// must count at least as many.
void CheckWearLedgers(int nodes) {
  if (g_rank != 0) return;
  for (int n = 0; n < nodes; ++n) {
    const std::string root = g_dir + "/ssd/" + std::to_string(n);
    uint64_t on_ssd = 0, parity = 0;
    for (const auto& f : fs::recursive_directory_iterator(root + "/state")) {
      if (!f.is_regular_file()) continue;
      on_ssd += f.file_size();
      if (f.path().extension() == ".parity") parity += f.file_size();
    }
    const uint64_t counted = LedgerBytes(root);
    CHECK(parity > 0, "node %d: no parity file on its ssd tier", n);
    CHECK(counted >= on_ssd, "node %d: the wear ledger counts %llu bytes, its ssd tier holds %llu "
          "(%llu of parity)", n, static_cast<unsigned long long>(counted),
          static_cast<unsigned long long>(on_ssd), static_cast<unsigned long long>(parity));
  }
}

// A restart that must succeed with version k; returns the report.
cairn_restart_info RestartAndCompare(const Options& o, const std::string& config, int k) {
  Check(cairn_init(MPI_COMM_WORLD, config.c_str()), "cairn_init");
  std::vector<uint8_t> buf(Content(o, g_rank, k).size(), 0);
  Check(cairn_protect(0, buf.data(), buf.size(), 1), "cairn_protect");
  int found = cairn_restart_test("state", -1);
  CHECK(found == k, "restart_test found version %d, expected %d", found, k);
  int rc = cairn_restart("state", k);  // the version restored, or an error
  CHECK(rc == k, "restart returned %d: %s", rc, cairn_error_message(CAIRN_LAST_ERROR));
  cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
  if (rc == k) {
    Check(cairn_last_restart(&info), "cairn_last_restart");
    CHECK(buf == Content(o, g_rank, k), "restored bytes differ from version %d's", k);
  }
  Check(cairn_finalize(), "cairn_finalize");
  return info;
}

// A restart that must fail, leaving the protected buffer as it was.
void RestartMustFail(const Options& o, const std::string& config) {
  Check(cairn_init(MPI_COMM_WORLD, config.c_str()), "cairn_init");
  std::vector<uint8_t> buf(Content(o, g_rank, 1).size(), 0xab);
  Check(cairn_protect(0, buf.data(), buf.size(), 1), "cairn_protect");
  int found = cairn_restart_test("state", -1);
  CHECK(found == -1, "restart_test found version %d beyond the scheme's tolerance", found);
  // Not the plain "none" of a job that never checkpointed: the cause is kept.
  std::string cause = cairn_error_message(CAIRN_LAST_ERROR);
  CHECK(cairn_last_error() != CAIRN_SUCCESS && cause.find("survives") != std::string::npos,
        "restart_test's error does not say what the scheme survives: %s", cause.c_str());
  int rc = cairn_restart("state", 1000);
  std::string message = cairn_error_message(CAIRN_LAST_ERROR);
  CHECK(rc < 0 && message.find("survives") != std::string::npos,
        "the error does not say what the scheme survives: %s", message.c_str());
  if (g_rank == 0) std::printf("restart failed as expected: %s\n", message.c_str());
  bool untouched = true;
  for (uint8_t b : buf) untouched &= b == 0xab;
  CHECK(untouched, "a failed restart wrote into protected memory");
  Check(cairn_finalize(), "cairn_finalize");
}

// --mode endless: versions 1, 2, ... with a background encode each, until
// the job is killed (tests/redundancy/kill_during_encode.sh).
void CheckpointUntilKilled(const Options& o, const std::string& config) {
  Check(cairn_init(MPI_COMM_WORLD, config.c_str()), "cairn_init");
  std::vector<uint8_t> buf = Content(o, g_rank, 1);
  Check(cairn_protect(0, buf.data(), buf.size(), 1), "cairn_protect");
  for (int v = 1; v < 100000; ++v) {
    std::vector<uint8_t> next = Content(o, g_rank, v);
    std::memcpy(buf.data(), next.data(), buf.size());
    Check(cairn_checkpoint("state", v), "cairn_checkpoint");
    // Odd versions are waited for: protected before the next one starts,
    // so a kill after an even version lands while its encode is queued or
    // running, with the version before it protected.
    if (v % 2 == 1) Check(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
    if (g_rank == 0) {
      std::printf("version %d committed\n", v);
      std::fflush(stdout);
    }
  }
  Check(cairn_finalize(), "cairn_finalize");
}

// --mode restore-any: whatever version is recoverable must come back as it
// was written, whether read or rebuilt.
void RestoreAny(const Options& o, const std::string& config) {
  Check(cairn_init(MPI_COMM_WORLD, config.c_str()), "cairn_init");
  int k = cairn_restart_test("state", -1);
  CHECK(k >= o.min_version && k >= 1, "version %d recoverable after the kill, expected >= %d: %s",
        k, o.min_version, cairn_error_message(CAIRN_LAST_ERROR));
  if (k >= 1) {
    std::vector<uint8_t> buf(Content(o, g_rank, k).size(), 0);
    Check(cairn_protect(0, buf.data(), buf.size(), 1), "cairn_protect");
    int rc = cairn_restart("state", k);
    CHECK(rc == k, "restart returned %d: %s", rc, cairn_error_message(CAIRN_LAST_ERROR));
    CHECK(buf == Content(o, g_rank, k), "restored bytes differ from version %d's", k);
    cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
    if (rc == k && cairn_last_restart(&info) == CAIRN_SUCCESS && g_rank == 0) {
      std::printf("restored version %d, %d part(s) rebuilt\n", k, info.parts_rebuilt);
    }
  }
  Check(cairn_finalize(), "cairn_finalize");
}

// The nodes to lose: `count` distinct ones, from the seed.
std::set<int> PickNodes(std::mt19937& gen, int nodes, int count, const std::set<int>& avoid) {
  std::set<int> out;
  while (static_cast<int>(out.size()) < count) {
    int n = static_cast<int>(gen() % static_cast<unsigned>(nodes));
    if (!avoid.count(n)) out.insert(n);
  }
  return out;
}

int LostRanks(const std::set<int>& nodes, int ranks_per_node) {
  int lost = 0;
  for (int r = 0; r < g_size; ++r) lost += nodes.count(r / ranks_per_node) > 0;
  return lost;
}

// corrupt: ranks whose copies were all corrupt, rebuilt as well.
void CheckRebuilt(const Options& o, const cairn_restart_info& info, const std::set<int>& lost,
                  int corrupt) {
  CHECK(info.parts_rebuilt == LostRanks(lost, o.ranks_per_node) + corrupt,
        "%d parts rebuilt, %d ranks were lost and %d corrupt", info.parts_rebuilt,
        LostRanks(lost, o.ranks_per_node), corrupt);
  CHECK(o.scheme == info.redundancy, "rebuilt with '%s', configured '%s'", info.redundancy,
        o.scheme.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Options o = Parse(argc, argv);
  if (o.seed == 0 && g_rank == 0) o.seed = 1 + std::random_device{}() % 1000000;
  MPI_Bcast(&o.seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  char dir[256] = {};
  char shm[256] = {};
  if (!o.mode.empty()) {
    // A job of the kill test: its directories are the script's.
    g_dir = o.dir;
    g_shm = o.dir + "/shm";
    const std::string config = WriteConfig(o);
    if (o.mode == "endless") CheckpointUntilKilled(o, config);
    if (o.mode == "restore-any") RestoreAny(o, config);
    int failures = 0;
    MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) std::printf("%s (seed %u)\n", failures == 0 ? "PASS" : "FAIL", o.seed);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
  }
  if (g_rank == 0) {
    std::snprintf(dir, sizeof(dir), "/tmp/cairn-node-loss-XXXXXX");
    std::snprintf(shm, sizeof(shm), "/dev/shm/cairn-node-loss-XXXXXX");
    if (!mkdtemp(dir) || !mkdtemp(shm)) MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Bcast(shm, sizeof(shm), MPI_CHAR, 0, MPI_COMM_WORLD);
  g_dir = dir;
  g_shm = shm;
  const int nodes = (g_size + o.ranks_per_node - 1) / o.ranks_per_node;
  std::mt19937 gen(o.seed);
  const int k = 2 + static_cast<int>(gen() % 3);  // versions 1..k, k in 2..4
  if (g_rank == 0) {
    std::printf("node_loss_test: seed %u, %d ranks on %d virtual nodes, scheme %s, %d version(s), "
                "losing %d node(s), expecting '%s'\n",
                o.seed, g_size, nodes, o.scheme.c_str(), k, o.lose, o.expect.c_str());
  }
  const std::string config = WriteConfig(o);
  WriteVersions(o, config, k);
  if (o.placement == "ssd") CheckWearLedgers(nodes);
  std::set<int> lost = PickNodes(gen, nodes, o.lose, {});
  LoseNodes(lost);
  if (o.corrupt_parity && g_rank == 0) {
    // A survivor of the first lost rank's group: the next node's rank at
    // the same position (groups are columns of the nodes).
    int victim = (*lost.begin() * o.ranks_per_node + o.ranks_per_node) % g_size;
    while (lost.count(victim / o.ranks_per_node)) victim = (victim + o.ranks_per_node) % g_size;
    CorruptParity(victim, o.ranks_per_node);
  }
  // A rank of a node not lost: its copies are there, whole in size, but
  // corrupt in every tier.
  int corrupt = 0;
  if (o.corrupt_part) {
    const std::set<int> avoid(lost);
    int victim = static_cast<int>(gen() % static_cast<unsigned>(g_size));
    while (avoid.count(victim / o.ranks_per_node)) victim = (victim + 1) % g_size;
    if (g_rank == 0) {
      std::printf("corrupting the part files of rank %d\n", victim);
      CorruptPart(victim, o.ranks_per_node);
    }
    corrupt = 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (o.expect == "error") {
    RestartMustFail(o, config);
  } else {
    cairn_restart_info info = RestartAndCompare(o, config, k);
    if (o.expect == "rebuilt") {
      CheckRebuilt(o, info, lost, corrupt);
    } else {
      CHECK(info.parts_rebuilt == 0, "%d parts rebuilt, the pfs copy was expected",
            info.parts_rebuilt);
    }
    if (o.second_loss) {
      // What run 2 wrote back is protected again: losing another node
      // is survived the same way.
      std::set<int> again = PickNodes(gen, nodes, o.lose, lost);
      LoseNodes(again);
      cairn_restart_info second = RestartAndCompare(o, config, k);
      CheckRebuilt(o, second, again, 0);
    }
  }
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    fs::remove_all(g_dir);
    fs::remove_all(g_shm);
    std::printf("%s (seed %u)\n", failures == 0 ? "PASS" : "FAIL", o.seed);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
