// ecc — throughput of the memory tier's software chipkill (docs/ecc.md,
// docs/format.md "ECC sidecar"), next to raw baselines measured in the same
// run on the same bytes.
//
//   ecc [--mib N] [--ckpt-mib N] [--reps N] [--dir D] [--json]
//
// Cases, for RS(36,32) (ecc = normal) and RS(19,16) (ecc = strong), over N MiB
// of random data cut as the sidecar cuts a part file: stripes of k data
// shards of 4 KiB, byte i of every shard one codeword:
//   encode    RsCode::Encode, stripe by stripe
//             raw: ISA-L ec_encode_data with the same generator matrix on the
//             same shards (the target is >= 0.9 of raw)
//   check     RsCode::Check of clean stripes (re-encode and compare)
//   correct   RsCode::Correct with one corrupted shard in every stripe
//             (syndromes, locate, repair: the restart path without CRCs)
//   rebuild   RsCode::Rebuild of one erased shard per stripe, and
//   rebuild-m of m erased shards per stripe (the most it rebuilds); the
//             erasure pattern changes from stripe to stripe (k patterns in
//             turn), so the decoder cache must serve them all
//             raw: ec_encode_data with as many rows, from the k survivors
//             (the rebuild's arithmetic without making the decoder)
//   memcpy    memcpy of the same data bytes (the memory system's limit)
// GB/s figures count data bytes (k shards per stripe) per second.
// Then where the sidecar's time goes, over --ckpt-mib MiB laid out as a
// part file, each stage adding to the one before as WriteEccSidecar does
// them, stripe by stripe: encode (parity into one record), shard CRCs
// (CRC32C of the k + m shards), record CRC (the sidecar's own block CRCs
// for its manifest entry), write (the record appended with write() to a
// fresh file under --dir); against the part pass (block CRCs and a copy
// into faulted memory), the part pass followed by the sidecar pass, and
// the two fused stripe by stripe; and CRC32C and memcpy of the data.
// Then a memory-tier checkpoint through the C API (cairn_init_single and a
// config file, memory tier only, under --dir, default /dev/shm) of
// --ckpt-mib MiB with ecc = "none" and ecc = "strong" (and "normal"); the
// versions alternate between the settings so that neither always runs first.
// Then restart from the memory tier of the same --ckpt-mib MiB, clean and
// with one garbled shard in every stripe (the repair path: RepairPart,
// then the regions filled from its buffer), for normal and strong.
// Every figure is the median of --reps repetitions after one warm-up.
#include <fcntl.h>
#include <isa-l/erasure_code.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CAIRN_NO_MPI  // a single process: cairn_init_single
#include "cairn/cairn.h"
#include "bench_support.h"
#include "codec/crc32c.h"
#include "codec/rs_code.h"

namespace {

constexpr size_t kShard = 4096;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Median seconds of reps runs of f after one warm-up; `before` runs untimed
// before each.
double Time(int reps, const std::function<void()>& f,
            const std::function<void()>& before = [] {}) {
  std::vector<double> t;
  for (int r = 0; r <= reps; ++r) {
    before();
    double start = Now();
    f();
    double s = Now() - start;
    if (r > 0) t.push_back(s);
  }
  return cairn_bench::Median(t);
}

void Fill(std::vector<uint8_t>& v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= v.size(); i += 8) {
    uint64_t x = rng();
    std::memcpy(&v[i], &x, 8);
  }
}

struct Options {
  size_t mib = 64;
  size_t ckpt_mib = 64;
  int reps = 5;
  std::string dir = "/dev/shm";
  bool json = false;
  // Every file and directory the run makes under dir is registered here,
  // so that a killed run leaves none of them behind.
  cairn_bench::RemovedAtExit* removed_at_exit = nullptr;
};

void Report(const Options& o, const std::string& code, const std::string& op, double bytes,
            double seconds, double baseline_seconds, const std::string& baseline) {
  double gbs = bytes / seconds / 1e9;
  double ratio = baseline_seconds / seconds;  // >1: faster than the baseline
  if (o.json) {
    cairn_bench::PrintJsonLine({{"bench", "ecc"},
                                {"code", code},
                                {"op", op},
                                {"bytes", static_cast<uint64_t>(bytes)},
                                {"seconds", seconds},
                                {"gbps", gbs},
                                {"baseline", baseline},
                                {"baseline_gbps", bytes / baseline_seconds / 1e9},
                                {"ratio_to_baseline", ratio}});
  } else {
    std::printf("%-10s %-8s %8.2f GB/s   %-14s %8.2f GB/s   ratio %.3f\n", code.c_str(),
                op.c_str(), gbs, baseline.c_str(), bytes / baseline_seconds / 1e9, ratio);
  }
}

void BenchCode(cairn::RsCodeId id, const Options& o) {
  cairn::RsCode code(id);
  const int k = code.k(), m = code.m(), n = code.n();
  const size_t stripe = static_cast<size_t>(k) * kShard;
  const size_t stripes = std::max<size_t>(1, o.mib * (1 << 20) / stripe);
  const double data_bytes = static_cast<double>(stripes * stripe);
  std::vector<uint8_t> data(stripes * stripe), parity(stripes * m * kShard),
      raw_parity(parity.size()), copy(data.size());
  Fill(data, 42 + static_cast<int>(id));
  auto shards_of = [&](size_t s, std::vector<uint8_t>& par, std::vector<uint8_t*>& out) {
    for (int j = 0; j < k; ++j) out[j] = data.data() + s * stripe + j * kShard;
    for (int p = 0; p < m; ++p) out[k + p] = par.data() + (s * m + p) * kShard;
  };

  // Raw ISA-L with RsCode's own parity generator.
  std::vector<uint8_t> matrix(static_cast<size_t>(m) * k), tables(32ull * k * m);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < k; ++c) matrix[r * k + c] = code.ParityGenerator(r, c);
  }
  ec_init_tables(k, m, matrix.data(), tables.data());
  std::vector<uint8_t*> shards(n);
  double raw = Time(o.reps, [&] {
    for (size_t s = 0; s < stripes; ++s) {
      shards_of(s, raw_parity, shards);
      ec_encode_data(static_cast<int>(kShard), k, m, tables.data(), shards.data(),
                     shards.data() + k);
    }
  });
  double enc = Time(o.reps, [&] {
    for (size_t s = 0; s < stripes; ++s) {
      shards_of(s, parity, shards);
      if (!code.Encode(shards, kShard).ok()) std::abort();
    }
  });
  if (parity != raw_parity) {
    std::fprintf(stderr, "ecc: %s parity differs from raw ec_encode_data\n", code.name());
    std::exit(1);
  }
  double mcp = Time(o.reps, [&] { std::memcpy(copy.data(), data.data(), data.size()); });
  double check = Time(o.reps, [&] {
    for (size_t s = 0; s < stripes; ++s) {
      shards_of(s, parity, shards);
      auto r = code.Check(std::span<const uint8_t* const>(shards.data(), n), kShard);
      if (!r.ok() || r->clean != kShard) std::abort();
    }
  });
  // One corrupted shard per stripe, a different one each stripe.
  auto corrupt = [&] {
    for (size_t s = 0; s < stripes; ++s) {
      uint8_t* p = data.data() + s * stripe + (s % k) * kShard;
      for (size_t i = 0; i < kShard; i += 64) p[i] ^= 0x5A;
    }
  };
  double correct = Time(
      o.reps,
      [&] {
        for (size_t s = 0; s < stripes; ++s) {
          shards_of(s, parity, shards);
          auto r = code.Correct(shards, kShard);
          if (!r.ok() || r->uncorrectable != 0) std::abort();
        }
      },
      corrupt);
  if (std::memcmp(copy.data(), data.data(), data.size()) != 0) {
    std::fprintf(stderr, "ecc: %s: Correct did not restore the data\n", code.name());
    std::exit(1);
  }
  // Rebuilds `erasures` shards per stripe: shards s % k, s % k + 1, ... of
  // stripe s, so that k patterns take turns.
  auto rebuild = [&](int erasures) {
    auto garble = [&] {
      for (size_t s = 0; s < stripes; ++s) {
        for (int e = 0; e < erasures; ++e) {
          uint8_t* p = data.data() + s * stripe + ((s + e) % k) * kShard;
          for (size_t i = 0; i < kShard; i += 64) p[i] ^= 0x5A;
        }
      }
    };
    double t = Time(
        o.reps,
        [&] {
          std::vector<int> erased(erasures);
          for (size_t s = 0; s < stripes; ++s) {
            shards_of(s, parity, shards);
            for (int e = 0; e < erasures; ++e) erased[e] = static_cast<int>((s + e) % k);
            if (!code.Rebuild(shards, kShard, erased).ok()) std::abort();
          }
        },
        garble);
    if (std::memcmp(copy.data(), data.data(), data.size()) != 0) {
      std::fprintf(stderr, "ecc: %s: Rebuild of %d did not restore the data\n", code.name(),
                   erasures);
      std::exit(1);
    }
    return t;
  };
  // The same arithmetic with a decoder made once: `rows` rows over k
  // sources (the generator's rows stand in for the decode rows).
  auto raw_rebuild = [&](int rows) {
    std::vector<uint8_t> rows_tables(32ull * k * rows);
    ec_init_tables(k, rows, matrix.data(), rows_tables.data());
    std::vector<uint8_t> out(static_cast<size_t>(rows) * kShard);
    std::vector<uint8_t*> dst(rows);
    for (int r = 0; r < rows; ++r) dst[r] = out.data() + r * kShard;
    return Time(o.reps, [&] {
      for (size_t s = 0; s < stripes; ++s) {
        shards_of(s, parity, shards);
        ec_encode_data(static_cast<int>(kShard), k, rows, rows_tables.data(), shards.data(),
                       dst.data());
      }
    });
  };
  const double rebuild_1 = rebuild(1), rebuild_m = rebuild(m);
  const double raw_1 = raw_rebuild(1), raw_m = raw_rebuild(m);
  std::string name = code.name();
  Report(o, name, "encode", data_bytes, enc, raw, "ec_encode_data");
  Report(o, name, "encode", data_bytes, enc, mcp, "memcpy");
  Report(o, name, "check", data_bytes, check, raw, "ec_encode_data");
  Report(o, name, "check", data_bytes, check, mcp, "memcpy");
  Report(o, name, "correct", data_bytes, correct, mcp, "memcpy");
  Report(o, name, "rebuild", data_bytes, rebuild_1, raw_1, "ec_encode_data");
  Report(o, name, "rebuild", data_bytes, rebuild_1, mcp, "memcpy");
  Report(o, name, "rebuild-m", data_bytes, rebuild_m, raw_m, "ec_encode_data");
  Report(o, name, "rebuild-m", data_bytes, rebuild_m, mcp, "memcpy");
}

// Where WriteEccSidecar's time goes: its stages, cumulatively, on
// --ckpt-mib MiB of application memory cut into stripes as it cuts a part
// (the part header's shard aside: a few KiB of the same work). Then the
// part pass WritePart makes before it (CRC32C of each 64 KiB block, copy
// into already-faulted memory, as into a memory-tier slot) alone, followed
// by the sidecar pass over the same data (today's order, without the fresh
// file), and fused with it stripe by stripe, the sidecar's work then
// reading the stripe from cache rather than from DRAM again.
void BenchSidecarStages(cairn::RsCodeId id, const Options& o) {
  constexpr size_t kBlock = 64 * 1024;  // the manifest's CRC block
  cairn::RsCode code(id);
  const int k = code.k(), m = code.m(), n = code.n();
  const size_t stripe = static_cast<size_t>(k) * kShard;
  std::vector<uint8_t> data(std::max(stripe, (o.ckpt_mib << 20) / stripe * stripe));
  Fill(data, 11);
  const size_t stripes = data.size() / stripe;
  const double bytes = static_cast<double>(data.size());
  const size_t record_bytes = m * kShard + 4 * n;
  std::vector<uint8_t> record(record_bytes);
  // Written once before timing, so that their pages are faulted in.
  std::vector<uint8_t> part(data.size(), 1), sidecar(stripes * record_bytes, 1);
  std::vector<uint32_t> block_crcs(data.size() / kBlock + 1);
  std::vector<uint8_t*> shards(n);
  enum Stage { kEncode, kShardCrcs, kRecordCrc };
  uint32_t sum = 0;  // Crc32c is out of line: its calls are never elided
  auto sidecar_stripe = [&](const uint8_t* src, uint8_t* rec, Stage last) {
    for (int j = 0; j < k; ++j) shards[j] = const_cast<uint8_t*>(src) + j * kShard;
    for (int p = 0; p < m; ++p) shards[k + p] = rec + p * kShard;
    if (!code.Encode(shards, kShard).ok()) std::abort();
    if (last >= kShardCrcs) {
      for (int j = 0; j < n; ++j) {
        uint32_t crc = cairn::Crc32c(shards[j], kShard);
        std::memcpy(rec + m * kShard + 4 * j, &crc, 4);
      }
    }
    if (last >= kRecordCrc) sum = cairn::Crc32c(rec, record_bytes, sum);
  };
  auto part_blocks = [&](size_t begin, size_t end) {
    for (size_t off = begin; off < end; off += kBlock) {
      block_crcs[off / kBlock] = cairn::Crc32c(data.data() + off, kBlock);
      std::memcpy(part.data() + off, data.data() + off, kBlock);
    }
  };
  auto sidecar_pass = [&](Stage last) {
    for (size_t s = 0; s < stripes; ++s) sidecar_stripe(data.data() + s * stripe, record.data(), last);
  };
  const std::string path = o.dir + "/cairn-bench-ecc-sidecar-" + std::to_string(::getpid());
  o.removed_at_exit->Add(path);
  auto write_pass = [&] {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
      std::fprintf(stderr, "ecc: cannot create %s\n", path.c_str());
      std::exit(1);
    }
    for (size_t s = 0; s < stripes; ++s) {
      sidecar_stripe(data.data() + s * stripe, record.data(), kRecordCrc);
      if (::write(fd, record.data(), record_bytes) != static_cast<ssize_t>(record_bytes)) {
        std::fprintf(stderr, "ecc: write to %s failed\n", path.c_str());
        std::exit(1);
      }
    }
    ::close(fd);
  };
  // A fresh file each time, as each checkpoint's sidecar is.
  auto fresh = [&] { ::unlink(path.c_str()); };
  const double t_encode = Time(o.reps, [&] { sidecar_pass(kEncode); });
  const double t_crcs = Time(o.reps, [&] { sidecar_pass(kShardCrcs); });
  const double t_record = Time(o.reps, [&] { sidecar_pass(kRecordCrc); });
  const double t_write = Time(o.reps, write_pass, fresh);
  fresh();
  const double t_part = Time(o.reps, [&] { part_blocks(0, data.size()); });
  const double t_separate = Time(o.reps, [&] {
    part_blocks(0, data.size());
    for (size_t s = 0; s < stripes; ++s) {
      sidecar_stripe(data.data() + s * stripe, sidecar.data() + s * record_bytes, kRecordCrc);
    }
  });
  const double t_fused = Time(o.reps, [&] {
    for (size_t s = 0; s < stripes; ++s) {
      part_blocks(s * stripe, (s + 1) * stripe);
      sidecar_stripe(data.data() + s * stripe, sidecar.data() + s * record_bytes, kRecordCrc);
    }
  });
  const double t_data_crc = Time(o.reps, [&] { sum ^= cairn::Crc32c(data.data(), data.size()); });
  const double t_memcpy =
      Time(o.reps, [&] { std::memcpy(part.data(), data.data(), data.size()); });
  const struct {
    const char* stage;
    double seconds;
  } rows[] = {{"encode", t_encode},
              {"+shard-crcs", t_crcs},
              {"+record-crc", t_record},
              {"+write", t_write},
              {"part-pass", t_part},
              {"part+sidecar", t_separate},
              {"fused", t_fused},
              {"data-crc", t_data_crc},
              {"memcpy", t_memcpy}};
  for (const auto& r : rows) {
    if (o.json) {
      cairn_bench::PrintJsonLine({{"bench", "ecc"},
                                  {"op", "sidecar_stage"},
                                  {"code", code.name()},
                                  {"stage", r.stage},
                                  {"bytes", static_cast<uint64_t>(bytes)},
                                  {"seconds", r.seconds},
                                  {"gbps", bytes / r.seconds / 1e9},
                                  {"ratio_to_part_pass", r.seconds / t_part}});
    } else {
      std::printf("sidecar %-10s %-13s %8.4f s  %6.2f GB/s   time / part pass %.3f\n",
                  code.name(), r.stage, r.seconds, bytes / r.seconds / 1e9, r.seconds / t_part);
    }
  }
}

// A memory-tier-only configuration under root/<label> with the given ecc;
// returns its path.
std::string WriteConfig(const std::string& root, const std::string& label, const char* ecc) {
  std::string cfg = root + "/cairn-" + label + ".toml";
  std::ofstream out(cfg);
  out << cairn_bench::TomlText(toml::table{
      {"general", toml::table{{"dir", root + "/data-" + label}, {"log_level", "error"}}},
      {"tiers",
       toml::table{{"memory", toml::table{{"path", root + "/shm-" + label + "/{node}"},
                                          {"ecc", ecc}}},
                   {"ssd", toml::table{{"enabled", false}}},
                   {"pfs", toml::table{{"enabled", false}}}}}});
  return cfg;
}

void InitOrDie(const std::string& cfg, std::vector<uint8_t>& buffer) {
  int rc = cairn_init_single(cfg.c_str());
  if (rc == 0) rc = cairn_protect(0, buffer.data(), buffer.size(), 1);
  if (rc != 0) {
    std::fprintf(stderr, "ecc: cairn (%s): %s\n", cfg.c_str(), cairn_error_message(rc));
    std::exit(1);
  }
}

// Median seconds of cairn_checkpoint per setting, alternating settings.
void BenchCheckpoint(const Options& o) {
  const char* modes[] = {"none", "strong", "normal"};
  std::string root = o.dir + "/cairn-bench-ecc-" + std::to_string(::getpid());
  o.removed_at_exit->Add(root);
  std::filesystem::create_directories(root);
  std::vector<uint8_t> buffer(o.ckpt_mib << 20);
  Fill(buffer, 7);
  std::vector<double> times[3];
  for (int rep = 0; rep <= o.reps; ++rep) {
    for (int i = 0; i < 3; ++i) {
      int mode = (i + rep) % 3;  // rotate which setting runs first
      InitOrDie(WriteConfig(root, modes[mode], modes[mode]), buffer);
      buffer[rep] ^= 1;  // a new version has new bytes
      double start = Now();
      int rc = cairn_checkpoint("bench", rep);
      double s = Now() - start;
      if (rc != 0) {
        std::fprintf(stderr, "ecc: checkpoint: %s\n", cairn_error_message(rc));
        std::exit(1);
      }
      (void)cairn_finalize();
      if (rep > 0) times[mode].push_back(s);
    }
  }
  std::filesystem::remove_all(root);
  double none = cairn_bench::Median(times[0]);
  double bytes = static_cast<double>(buffer.size());
  for (int mode = 0; mode < 3; ++mode) {
    double t = cairn_bench::Median(times[mode]);
    if (o.json) {
      cairn_bench::PrintJsonLine({{"bench", "ecc"},
                                  {"op", "memory_checkpoint"},
                                  {"ecc", modes[mode]},
                                  {"bytes", static_cast<uint64_t>(bytes)},
                                  {"seconds", t},
                                  {"gbps", bytes / t / 1e9},
                                  {"ratio_to_none", t / none}});
    } else {
      std::printf("checkpoint %-8s %8.4f s  %6.2f GB/s   time / ecc=none %.3f\n", modes[mode], t,
                  bytes / t / 1e9, t / none);
    }
  }
}

// Restart from the memory tier with a clean part, and with one garbled
// shard in every stripe of it (shard s % k of stripe s: k erasure patterns
// in turn), which the restart rebuilds from the sidecar. Both must restore
// the checkpointed bytes exactly.
void BenchRepairRestart(const Options& o) {
  namespace fs = std::filesystem;
  std::string root = o.dir + "/cairn-bench-ecc-restart-" + std::to_string(::getpid());
  o.removed_at_exit->Add(root);
  fs::create_directories(root);
  std::vector<uint8_t> buffer(o.ckpt_mib << 20);
  for (const char* mode : {"normal", "strong"}) {
    const int k = std::string(mode) == "normal" ? 32 : 16;
    Fill(buffer, 13);
    const std::vector<uint8_t> saved = buffer;
    InitOrDie(WriteConfig(root, std::string("restart-") + mode, mode), buffer);
    if (int rc = cairn_checkpoint("bench", 1); rc != 0) {
      std::fprintf(stderr, "ecc: checkpoint: %s\n", cairn_error_message(rc));
      std::exit(1);
    }
    std::string part;
    for (const auto& e : fs::recursive_directory_iterator(root + "/shm-restart-" + mode)) {
      if (e.path().filename() == "r000000.part") part = e.path().string();
    }
    std::string pristine;
    {
      std::ifstream in(part, std::ios::binary);
      pristine.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::string damaged = pristine;
    const size_t stripe = static_cast<size_t>(k) * kShard;
    for (size_t s = 0; s * stripe < damaged.size(); ++s) {
      size_t at = s * stripe + (s % k) * kShard;
      for (size_t i = at; i < std::min(damaged.size(), at + kShard); ++i) damaged[i] = ~damaged[i];
    }
    auto install = [&](const std::string& bytes) {
      std::ofstream out(part, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    };
    auto restart = [&] {
      int version = cairn_restart("bench", 1);
      if (version != 1 || buffer != saved) {
        std::fprintf(stderr, "ecc: restart (%s) did not restore version 1: %s\n", mode,
                     version < 0 ? cairn_error_message(version) : "wrong version or data");
        std::exit(1);
      }
    };
    auto scramble = [&] { std::fill(buffer.begin(), buffer.end(), 0); };
    const double clean = Time(o.reps, restart, [&] { install(pristine); scramble(); });
    const double repaired = Time(o.reps, restart, [&] { install(damaged); scramble(); });
    (void)cairn_finalize();
    const double bytes = static_cast<double>(buffer.size());
    if (o.json) {
      cairn_bench::PrintJsonLine({{"bench", "ecc"},
                                  {"op", "memory_restart_repair"},
                                  {"ecc", mode},
                                  {"bytes", static_cast<uint64_t>(bytes)},
                                  {"seconds", repaired},
                                  {"gbps", bytes / repaired / 1e9},
                                  {"clean_seconds", clean},
                                  {"ratio_to_clean", repaired / clean}});
    } else {
      std::printf("restart %-8s clean %8.4f s  one bad shard per stripe %8.4f s  %6.2f GB/s   "
                  "time / clean %.3f\n",
                  mode, clean, repaired, bytes / repaired / 1e9, repaired / clean);
    }
  }
  fs::remove_all(root);
}

}  // namespace

int main(int argc, char** argv) {
  cairn_bench::RemovedAtExit removed_at_exit;  // before MPI starts: it forks
  Options o;
  o.removed_at_exit = &removed_at_exit;
  CLI::App app{"ecc: throughput of the memory tier's software chipkill (RS(36,32), RS(19,16)) "
               "against raw baselines measured in the same run"};
  app.add_option("--mib", o.mib, "MiB of data per code")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--ckpt-mib", o.ckpt_mib, "MiB of the sidecar-stage, checkpoint and restart cases")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  app.add_option("--reps", o.reps, "repetitions after one warm-up; figures are their median")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--dir", o.dir, "directory of the checkpoint and restart cases' tiers")
      ->capture_default_str();
  app.add_flag("--json", o.json, "one JSON object per case and line");
  if (auto exit_code = cairn_bench::ParseCommandLine(app, argc, argv)) return *exit_code;
  if (!o.json) {
    std::printf("ecc: %zu MiB per code, 4 KiB shards, checkpoint %zu MiB, median of %d\n", o.mib,
                o.ckpt_mib, o.reps);
  }
  BenchCode(cairn::RsCodeId::kRs36_32, o);
  BenchCode(cairn::RsCodeId::kRs19_16, o);
  BenchSidecarStages(cairn::RsCodeId::kRs36_32, o);
  BenchSidecarStages(cairn::RsCodeId::kRs19_16, o);
  BenchCheckpoint(o);
  BenchRepairRestart(o);
  return 0;
}
