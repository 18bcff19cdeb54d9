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
//   rebuild   RsCode::Rebuild of one erased shard per stripe
//   memcpy    memcpy of the same data bytes (the memory system's limit)
// GB/s figures count data bytes (k shards per stripe) per second.
// Then a memory-tier checkpoint through the C API (cairn_init_single and a
// config file, memory tier only, under --dir, default /dev/shm) of
// --ckpt-mib MiB with ecc = "none" and ecc = "strong" (and "normal"); the
// versions alternate between the settings so that neither always runs first.
// Every figure is the median of --reps repetitions after one warm-up.
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
#include "codec/rs_code.h"

namespace {

constexpr size_t kShard = 4096;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  return Median(t);
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
};

bool json_out = false;

void Report(const std::string& code, const std::string& op, double bytes, double seconds,
            double baseline_seconds, const std::string& baseline) {
  double gbs = bytes / seconds / 1e9;
  double ratio = baseline_seconds / seconds;  // >1: faster than the baseline
  if (json_out) {
    std::printf(
        "{\"bench\": \"ecc\", \"code\": \"%s\", \"op\": \"%s\", \"bytes\": %.0f, \"seconds\": "
        "%.6f, \"gbps\": %.3f, \"baseline\": \"%s\", \"baseline_gbps\": %.3f, "
        "\"ratio_to_baseline\": %.3f}\n",
        code.c_str(), op.c_str(), bytes, seconds, gbs, baseline.c_str(),
        bytes / baseline_seconds / 1e9, ratio);
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
  double rebuild = Time(
      o.reps,
      [&] {
        for (size_t s = 0; s < stripes; ++s) {
          shards_of(s, parity, shards);
          int erased = static_cast<int>(s % k);
          if (!code.Rebuild(shards, kShard, std::span<const int>(&erased, 1)).ok()) std::abort();
        }
      },
      corrupt);
  if (std::memcmp(copy.data(), data.data(), data.size()) != 0) {
    std::fprintf(stderr, "ecc: %s: Rebuild did not restore the data\n", code.name());
    std::exit(1);
  }
  std::string name = code.name();
  Report(name, "encode", data_bytes, enc, raw, "ec_encode_data");
  Report(name, "encode", data_bytes, enc, mcp, "memcpy");
  Report(name, "check", data_bytes, check, raw, "ec_encode_data");
  Report(name, "check", data_bytes, check, mcp, "memcpy");
  Report(name, "correct", data_bytes, correct, mcp, "memcpy");
  Report(name, "rebuild", data_bytes, rebuild, mcp, "memcpy");
}

// Median seconds of cairn_checkpoint per setting, alternating settings.
void BenchCheckpoint(const Options& o) {
  const char* modes[] = {"none", "strong", "normal"};
  std::string root = o.dir + "/cairn-bench-ecc-" + std::to_string(::getpid());
  std::filesystem::create_directories(root);
  std::vector<uint8_t> buffer(o.ckpt_mib << 20);
  Fill(buffer, 7);
  std::vector<double> times[3];
  for (int rep = 0; rep <= o.reps; ++rep) {
    for (int i = 0; i < 3; ++i) {
      int mode = (i + rep) % 3;  // rotate which setting runs first
      std::string cfg = root + "/cairn-" + modes[mode] + ".toml";
      {
        std::ofstream out(cfg);
        out << "[general]\ndir = \"" << root << "/data-" << modes[mode]
            << "\"\nlog_level = \"error\"\n[tiers.memory]\npath = \"" << root << "/shm-"
            << modes[mode] << "/{node}\"\necc = \"" << modes[mode]
            << "\"\n[tiers.ssd]\nenabled = false\n[tiers.pfs]\nenabled = false\n";
      }
      if (cairn_init_single(cfg.c_str()) != 0 ||
          cairn_protect(0, buffer.data(), buffer.size(), 1) != 0) {
        std::fprintf(stderr, "ecc: cairn: %s\n", cairn_error_message(0));
        std::exit(1);
      }
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
  double none = Median(times[0]);
  double bytes = static_cast<double>(buffer.size());
  for (int mode = 0; mode < 3; ++mode) {
    double t = Median(times[mode]);
    if (json_out) {
      std::printf(
          "{\"bench\": \"ecc\", \"op\": \"memory_checkpoint\", \"ecc\": \"%s\", \"bytes\": %.0f, "
          "\"seconds\": %.6f, \"gbps\": %.3f, \"ratio_to_none\": %.3f}\n",
          modes[mode], bytes, t, bytes / t / 1e9, t / none);
    } else {
      std::printf("checkpoint %-8s %8.4f s  %6.2f GB/s   time / ecc=none %.3f\n", modes[mode], t,
                  bytes / t / 1e9, t / none);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ecc: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mib") {
      o.mib = std::stoul(next());
    } else if (a == "--ckpt-mib") {
      o.ckpt_mib = std::stoul(next());
    } else if (a == "--reps") {
      o.reps = std::max(1, std::stoi(next()));
    } else if (a == "--dir") {
      o.dir = next();
    } else if (a == "--json") {
      o.json = true;
    } else {
      std::fprintf(stderr,
                   "usage: ecc [--mib N (64)] [--ckpt-mib N (64)] [--reps N (5)] [--dir D "
                   "(/dev/shm)] [--json]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  json_out = o.json;
  if (!o.json) {
    std::printf("ecc: %zu MiB per code, 4 KiB shards, checkpoint %zu MiB, median of %d\n", o.mib,
                o.ckpt_mib, o.reps);
  }
  BenchCode(cairn::RsCodeId::kRs36_32, o);
  BenchCode(cairn::RsCodeId::kRs19_16, o);
  BenchCheckpoint(o);
  return 0;
}
