// Software chipkill campaign (docs/format.md "ECC sidecar"): a version is
// written to a memory tier with ecc = normal and with ecc = strong, drained to
// ssd and pfs; then, case after case, the memory part file is restored to its
// pristine bytes and damaged at random — single bit flips, bit flips in
// several shards of one stripe, bursts of garbage, a whole shard of garbage,
// zeroed pages, truncation — and a fresh engine restarts. The expected
// outcome follows from the code's capacity, computed here from the damage
// itself: if every stripe has at most m damaged shards, the restart must come
// from the memory tier, bit-exact, with exactly the damaged shards corrected;
// otherwise it must come from ssd, bit-exact. Wrong data is never acceptable.
// A second part checks drains: a memory part read back damaged (through an
// Env that corrupts what it reads) is repaired before it reaches ssd, or not
// drained at all, and the sidecar never leaves the memory tier.
//
// Usage: ecc_memory_test [cases per code (500)] [seed (4242)]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>

#include "codec/crc32c.h"
#include "comm/comm.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/engine.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using cairn::EccMode;
using cairn::Status;
using cairn::TierKind;

constexpr uint64_t kS = cairn::kEccShardSize;
constexpr size_t kWords = 70000;     // 560000 bytes: several stripes for both codes
constexpr size_t kSmall = 1001;      // a second region whose end is not page-aligned
// crc-collision: one bit of a data shard flipped and the shard's CRC32C in
// the sidecar patched to match, as if the CRC had collided: only the
// syndromes can find that shard.
const char* kKinds[] = {"bit-flip", "shard-flips", "burst", "garbage-shard", "zero-pages",
                        "truncate", "crc-collision"};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::unique_ptr<cairn::Engine> Open(const cairn::Config& config, cairn::Env* env) {
  auto e = cairn::Engine::Create(cairn::NewSingleComm(), config, env, cairn::Clock::Real());
  if (!e.ok()) {
    std::printf("engine: %s\n", e.status().ToString().c_str());
    std::exit(2);
  }
  return std::move(e).value();
}

void FillSmall(std::vector<uint32_t>& small, int64_t v) {
  for (size_t i = 0; i < small.size(); ++i) small[i] = static_cast<uint32_t>(i * 2654435761u + v);
}

struct State {
  std::vector<uint64_t> big = std::vector<uint64_t>(kWords);
  std::vector<uint32_t> small = std::vector<uint32_t>(kSmall);
  void Protect(cairn::Engine& e) {
    (void)e.Protect(0, big.data(), big.size(), sizeof(uint64_t));
    (void)e.Protect(1, small.data(), small.size(), sizeof(uint32_t));
  }
  void Fill(int64_t v) {
    cairn_test::FillVersion(big, v);
    FillSmall(small, v);
  }
  void Clear() {
    std::fill(big.begin(), big.end(), 0);
    std::fill(small.begin(), small.end(), 0);
  }
  bool Holds(int64_t v) const {
    std::vector<uint32_t> s(kSmall);
    FillSmall(s, v);
    return cairn_test::HoldsVersion(big, v) && s == small;
  }
};

// Applies one random damage of `kind` to `bytes` (the part file), in place.
void Damage(std::string& bytes, const std::string& kind, int k, int m, std::mt19937_64& rng) {
  uint64_t size = bytes.size();
  uint64_t stripes = (size + k * kS - 1) / (k * kS);
  auto flip = [&](uint64_t at) { bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); };
  // Distinct shards of one stripe that exist in the file.
  auto shards_of_stripe = [&](int count) {
    uint64_t s = rng() % stripes;
    std::vector<uint64_t> all;
    for (int j = 0; j < k; ++j) {
      if ((s * k + j) * kS < size) all.push_back(s * k + j);
    }
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(std::min<size_t>(all.size(), count));
    return all;
  };
  if (kind == "bit-flip") {
    flip(rng() % size);
  } else if (kind == "shard-flips") {
    for (uint64_t shard : shards_of_stripe(1 + rng() % (m + 2))) {
      uint64_t len = std::min(kS, size - shard * kS);
      flip(shard * kS + rng() % len);
    }
  } else if (kind == "burst") {
    uint64_t len = 1 + rng() % ((m + 1) * kS);
    uint64_t at = rng() % size;
    for (uint64_t i = at; i < std::min(size, at + len); ++i) bytes[i] = static_cast<char>(rng());
  } else if (kind == "garbage-shard") {
    uint64_t shard = rng() % ((size + kS - 1) / kS);
    for (uint64_t i = shard * kS; i < std::min(size, (shard + 1) * kS); ++i) {
      bytes[i] = static_cast<char>(rng());
    }
  } else if (kind == "zero-pages") {
    for (uint64_t shard : shards_of_stripe(1 + rng() % (m + 1))) {
      uint64_t end = std::min(size, (shard + 1) * kS);
      std::memset(bytes.data() + shard * kS, 0, end - shard * kS);
    }
  } else if (kind == "truncate") {
    // Near the end (often within capacity) or anywhere.
    uint64_t cut = rng() % 2 ? rng() % ((m + 1) * kS) + 1 : rng() % size + 1;
    bytes.resize(size - std::min(size, cut));
  }
}

struct Expectation {
  bool data_damaged = false;  // some byte that carries data differs
  bool within = true;         // every stripe has at most m damaged shards
  uint64_t damaged_shards = 0;
};

Expectation Expect(const std::string& pristine, const std::string& damaged,
                   const cairn::PartHeader& layout, int k, int m) {
  Expectation x;
  uint64_t size = pristine.size();
  uint64_t stripes = (size + k * kS - 1) / (k * kS);
  auto carries_data = [&](uint64_t at) {
    if (at < layout.HeaderBytes()) return true;
    for (const auto& r : layout.regions) {
      if (at >= r.offset && at < r.offset + r.bytes()) return true;
    }
    return false;
  };
  for (uint64_t s = 0; s < stripes; ++s) {
    int bad = 0;
    for (int j = 0; j < k; ++j) {
      uint64_t begin = (s * k + j) * kS;
      if (begin >= size) break;
      uint64_t end = std::min(size, begin + kS);
      bool shard_bad = false;
      for (uint64_t i = begin; i < end; ++i) {
        bool differs = i >= damaged.size() || damaged[i] != pristine[i];
        if (differs) {
          shard_bad = true;
          if (carries_data(i)) x.data_damaged = true;
        }
      }
      // A truncated shard is an erasure even where the lost bytes were zeros.
      if (end > damaged.size()) shard_bad = true;
      bad += shard_bad;
    }
    x.damaged_shards += bad;
    if (bad > m) x.within = false;
  }
  if (damaged.size() != size) x.data_damaged = true;  // the copy's size no longer matches
  return x;
}

// Reads of one file come back with `damage` applied (the file on disk is
// untouched), to make a drain read a damaged memory part.
class DamagingEnv : public cairn::EnvWrapper {
 public:
  DamagingEnv(cairn::Env* target, std::string suffix)
      : EnvWrapper(target), suffix_(std::move(suffix)) {}
  std::function<void(std::string&)> damage;

  cairn::Result<std::unique_ptr<cairn::ReadableFile>> NewReadableFile(
      const std::string& p) override {
    bool hit = damage && p.size() >= suffix_.size() &&
               p.compare(p.size() - suffix_.size(), suffix_.size(), suffix_) == 0;
    if (!hit) return target()->NewReadableFile(p);
    std::string bytes = ReadAll(p);
    damage(bytes);
    return std::unique_ptr<cairn::ReadableFile>(new StringFile(p, std::move(bytes)));
  }

 private:
  class StringFile : public cairn::ReadableFile {
   public:
    StringFile(std::string path, std::string bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {}
    cairn::Status ReadAt(uint64_t offset, void* dst, size_t n) const override {
      if (offset + n > bytes_.size()) return cairn::Error(cairn::Code::kCorrupt, "short read");
      std::memcpy(dst, bytes_.data() + offset, n);
      return cairn::Status::Ok();
    }
    uint64_t size() const override { return bytes_.size(); }
    const std::string& path() const override { return path_; }

   private:
    std::string path_;
    std::string bytes_;
  };
  std::string suffix_;
};

int failures = 0;
#define CHECK(cond, ...)                   \
  do {                                     \
    if (!(cond)) {                         \
      std::printf("FAIL: " __VA_ARGS__);   \
      std::printf("\n");                   \
      ++failures;                          \
    }                                      \
  } while (0)

// The drain part: version 2 is checkpointed with ssd flush = sync and
// ecc_sync while reads of the memory part come back damaged.
void DrainCases(EccMode mode, int m, std::mt19937_64& rng, std::map<std::string, int>& table) {
  const char* code = mode == EccMode::kNormal ? "normal" : "strong";
  for (int within = 1; within >= 0; --within) {
    cairn_test::TempDir dir;
    cairn::Config config = cairn_test::ThreeTierConfig(dir.path());
    config.tier(TierKind::kMemory).ecc = mode;
    // The sidecar must be listed before the synchronous drain reads the
    // part (a background encode would come after it, and would itself
    // refuse a part that reads back damaged).
    config.tier(TierKind::kMemory).ecc_sync = true;
    config.tier(TierKind::kSsd).flush = cairn::FlushMode::kSync;
    config.tier(TierKind::kPfs).enabled = false;
    DamagingEnv env(cairn::PosixEnv(), "/v0000000002/" + cairn::PartFileName(0));
    // `within`: m whole shards of one stripe garbage; else m + 1.
    uint64_t first = rng() % 4;
    env.damage = [&](std::string& b) {
      for (int i = 0; i < m + (within ? 0 : 1); ++i) {
        uint64_t shard = first + i;
        for (uint64_t j = shard * kS; j < std::min<uint64_t>(b.size(), (shard + 1) * kS); ++j) {
          b[j] = static_cast<char>(~b[j]);
        }
      }
    };
    State st;
    auto e = Open(config, &env);
    st.Protect(*e);
    st.Fill(2);
    Status s = e->Checkpoint("c", 2);
    auto mem = std::move(cairn::OpenNodeTier(cairn::PosixEnv(), config, TierKind::kMemory, 0)).value();
    auto ssd = std::move(cairn::OpenNodeTier(cairn::PosixEnv(), config, TierKind::kSsd, 0)).value();
    std::string part = cairn::PartFileName(0);
    bool ssd_has_sidecar = fs::exists(ssd->FilePath("c", 2, cairn::EccSidecarName(0)));
    auto ssd_manifest = cairn::CheckCopy(*ssd, "c", 2, 0, 1);
    std::string outcome;
    if (within) {
      CHECK(s.ok(), "drain %s within capacity: %s", code, s.ToString().c_str());
      CHECK(ssd_manifest.ok(), "drain %s: no ssd copy", code);
      if (ssd_manifest.ok()) {
        CHECK(cairn::FindParityEntry(*ssd_manifest) == nullptr, "drain %s: sidecar listed on ssd",
              code);
      }
      CHECK(ReadAll(ssd->FilePath("c", 2, part)) == ReadAll(mem->FilePath("c", 2, part)),
            "drain %s: ssd part differs from the pristine memory part", code);
      CHECK(e->ecc_shards_corrected() == static_cast<uint64_t>(m), "drain %s: %llu corrected",
            code, static_cast<unsigned long long>(e->ecc_shards_corrected()));
      outcome = fmt::format("drain {}: repaired, {} shards", code, e->ecc_shards_corrected());
    } else {
      CHECK(!s.ok() && !ssd_manifest.ok(), "drain %s beyond capacity was not refused", code);
      outcome = fmt::format("drain {}: refused (beyond capacity)", code);
    }
    CHECK(!ssd_has_sidecar, "drain %s: sidecar copied to ssd", code);
    ++table[outcome];
    (void)e->Finalize();
  }
}

}  // namespace

int main(int argc, char** argv) {
  int cases = argc > 1 ? std::atoi(argv[1]) : 500;
  uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4242;
  std::printf("ecc memory campaign: %d cases per code, seed %llu\n", cases,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::map<std::string, int> table;
  for (EccMode mode : {EccMode::kNormal, EccMode::kStrong}) {
    cairn::RsCode code(*cairn::EccCodeFor(mode));
    const int k = code.k(), m = code.m();
    const char* code_name = mode == EccMode::kNormal ? "normal" : "strong";
    cairn_test::TempDir dir;
    cairn::Config config = cairn_test::ThreeTierConfig(dir.path());
    config.tier(TierKind::kMemory).ecc = mode;
    if (const char* level = std::getenv("ECC_TEST_LOG")) config.log_level = level;
    State st;
    {
      auto e = Open(config, cairn::PosixEnv());
      st.Protect(*e);
      st.Fill(1);
      if (!e->Checkpoint("c", 1).ok() || !e->Wait().ok()) std::exit(2);
      (void)e->Finalize();
    }
    auto mem = std::move(cairn::OpenNodeTier(cairn::PosixEnv(), config, TierKind::kMemory, 0)).value();
    auto ssd = std::move(cairn::OpenNodeTier(cairn::PosixEnv(), config, TierKind::kSsd, 0)).value();
    auto mem_manifest = cairn::CheckCopy(*mem, "c", 1, 0, 1);
    auto ssd_manifest = cairn::CheckCopy(*ssd, "c", 1, 0, 1);
    if (!mem_manifest.ok() || !ssd_manifest.ok()) std::exit(2);
    CHECK(cairn::FindParityEntry(*mem_manifest) != nullptr, "%s: no sidecar in the manifest",
          code_name);
    CHECK(cairn::FindParityEntry(*ssd_manifest) == nullptr, "%s: sidecar drained to ssd",
          code_name);
    CHECK(!fs::exists(ssd->FilePath("c", 1, cairn::EccSidecarName(0))), "%s: sidecar on ssd",
          code_name);
    const std::string part_path = mem->FilePath("c", 1, cairn::PartFileName(0));
    const std::string pristine = ReadAll(part_path);
    const std::string sidecar_path = mem->FilePath("c", 1, cairn::EccSidecarName(0));
    const std::string pristine_sidecar = ReadAll(sidecar_path);
    const uint64_t sidecar_size = fs::file_size(mem->FilePath("c", 1, cairn::EccSidecarName(0)));
    std::printf("%s: RS(%d,%d), part %zu bytes, sidecar %llu bytes (%.2f %%)\n", code_name, k + m,
                k, pristine.size(), static_cast<unsigned long long>(sidecar_size),
                100.0 * sidecar_size / pristine.size());
    cairn::Region r0{0, st.big.data(), kWords, sizeof(uint64_t)};
    cairn::Region r1{1, st.small.data(), kSmall, sizeof(uint32_t)};
    cairn::PartHeader layout = cairn::MakePartHeader("c", 1, 0, 1, {r0, r1});

    for (int c = 0; c < cases; ++c) {
      std::string kind = kKinds[rng() % std::size(kKinds)];
      std::string damaged = pristine;
      std::string sidecar = pristine_sidecar;
      if (kind == "crc-collision") {
        uint64_t shard = rng() % (pristine.size() / kS);  // a whole shard inside the file
        uint64_t at = shard * kS + rng() % kS;
        damaged[at] = static_cast<char>(damaged[at] ^ (1 << (rng() % 8)));
        uint32_t crc = cairn::Crc32c(damaged.data() + shard * kS, kS);
        uint64_t stripe = shard / k, j = shard % k;
        uint64_t record = cairn::kEccHeaderSize + stripe * (m * kS + 4 * (k + m));
        std::memcpy(sidecar.data() + record + m * kS + 4 * j, &crc, 4);
      } else {
        Damage(damaged, kind, k, m, rng);
      }
      WriteAll(part_path, damaged);
      WriteAll(sidecar_path, sidecar);
      Expectation x = Expect(pristine, damaged, layout, k, m);

      st.Clear();
      auto e = Open(config, cairn::PosixEnv());
      st.Protect(*e);
      auto report = e->Restart("c", 1);
      uint64_t corrected = e->ecc_shards_corrected();
      std::string expect_tier = !x.data_damaged || x.within ? "memory" : "ssd";
      uint64_t expect_corrected = x.data_damaged && x.within ? x.damaged_shards : 0;
      std::string outcome;
      if (!report.ok()) {
        CHECK(false, "case %d (%s, %s, seed %llu): restart failed: %s", c, code_name,
              kind.c_str(), static_cast<unsigned long long>(seed),
              report.status().ToString().c_str());
        outcome = "restart failed";
      } else if (report->version != 1 || !st.Holds(1)) {
        CHECK(false, "case %d (%s, %s, seed %llu): WRONG DATA from %s", c, code_name,
              kind.c_str(), static_cast<unsigned long long>(seed), report->tier.c_str());
        outcome = "WRONG DATA";
      } else {
        CHECK(report->tier == expect_tier && corrected == expect_corrected,
              "case %d (%s, %s, seed %llu): from %s with %llu shards corrected, expected %s "
              "with %llu (%llu damaged shards, %s capacity)",
              c, code_name, kind.c_str(), static_cast<unsigned long long>(seed),
              report->tier.c_str(), static_cast<unsigned long long>(corrected),
              expect_tier.c_str(), static_cast<unsigned long long>(expect_corrected),
              static_cast<unsigned long long>(x.damaged_shards), x.within ? "within" : "beyond");
        outcome = report->tier == "memory"
                      ? (corrected > 0 ? "memory, corrected" : "memory, no data hit")
                      : "fallback to " + report->tier;
      }
      ++table[fmt::format("{} {:<13} {}", code_name, kind, outcome)];
      (void)e->Finalize();
    }
    WriteAll(part_path, pristine);
    DrainCases(mode, m, rng, table);
  }
  std::printf("outcomes (code, damage, outcome: count):\n");
  for (const auto& [outcome, n] : table) std::printf("  %-50s %5d\n", outcome.c_str(), n);
  std::printf("%d failures (seed %llu)\n", failures, static_cast<unsigned long long>(seed));
  return failures == 0 ? 0 : 1;
}
