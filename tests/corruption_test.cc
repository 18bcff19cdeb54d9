// Corruption campaign: versions 1 and 2 are stored on all three tiers, then
// a random selection of copies is damaged — bits flipped, pages zeroed,
// files truncated, deleted, replaced by garbage or grown past any size a
// reader accepts (sparse, so nothing is allocated), manifests included — and
// a fresh engine restarts. Damage must always be detected and never reach
// application memory: the newest version with an intact copy is restored,
// bit for bit, from the fastest tier that holds one, and the rollback from
// version 2 is reported.
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "comm/comm.h"
#include "format/layout.h"
#include "format/manifest.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"
#include "runtime/part_io.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using cairn::TierKind;

constexpr size_t kWords = 40000;  // 320 KB
// The tiers the campaign configures, fastest first (the pmem tier stays off).
constexpr TierKind kCampaignTiers[3] = {TierKind::kMemory, TierKind::kSsd, TierKind::kPfs};
const char* kDamage[] = {"flip-bit", "zero-page", "truncate", "delete",
                         "garbage",  "flip-header", "inflate"};

// Damages the file; returns false if the damage fell only on alignment
// padding of a part file (bytes that carry no data), which leaves the copy
// intact.
bool Damage(const std::string& path, const std::string& kind, std::mt19937& rng,
            uint64_t padding_begin, uint64_t padding_end) {
  uint64_t size = fs::file_size(path);
  if (kind == "delete") {
    fs::remove(path);
  } else if (kind == "truncate") {
    fs::resize_file(path, rng() % size);
  } else if (kind == "inflate") {
    fs::resize_file(path, size + cairn::kMaxManifestBytes);
  } else if (kind == "garbage") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (uint64_t i = 0; i < size; ++i) out.put(static_cast<char>(rng()));
  } else {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    uint64_t at = kind == "flip-header" ? rng() % std::min<uint64_t>(size, 64) : rng() % size;
    if (kind == "zero-page") {
      at = at / 4096 * 4096;
      std::string zeros(std::min<uint64_t>(4096, size - at), '\0');
      f.seekp(static_cast<std::streamoff>(at));
      f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
      return true;
    }
    char c = 0;
    f.seekg(static_cast<std::streamoff>(at));
    f.read(&c, 1);
    c = static_cast<char>(c ^ (1 << (rng() % 8)));
    f.seekp(static_cast<std::streamoff>(at));
    f.write(&c, 1);
    return at < padding_begin || at >= padding_end;
  }
  return true;
}

std::unique_ptr<cairn::Engine> Open(const cairn::Config& config) {
  auto e = cairn::Engine::Create(cairn::NewSingleComm(), config, cairn::PosixEnv(),
                                 cairn::Clock::Real());
  if (!e.ok()) {
    std::printf("engine: %s\n", e.status().ToString().c_str());
    std::exit(2);
  }
  return std::move(e).value();
}

}  // namespace

int main(int argc, char** argv) {
  int cases = argc > 1 ? std::atoi(argv[1]) : 300;
  unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 777u;
  std::printf("corruption campaign: %d cases, seed %u\n", cases, seed);
  std::mt19937 rng(seed);
  int failures = 0;
  std::map<std::string, int> outcomes;
  for (int c = 0; c < cases; ++c) {
    cairn_test::TempDir dir;
    cairn::Config config = cairn_test::ThreeTierConfig(dir.path());
    std::vector<uint64_t> data(kWords);
    {
      auto e = Open(config);
      (void)e->Protect(0, data.data(), data.size(), sizeof(uint64_t));
      for (int v = 1; v <= 2; ++v) {
        cairn_test::FillVersion(data, v);
        if (!e->Checkpoint("c", v).ok() || !e->Wait().ok()) std::exit(2);
      }
      (void)e->Finalize();
    }
    // Damage: each tier's copy of version 2 (and sometimes of version 1) is
    // hit with probability 2/3, in its part or its manifest.
    cairn::Region region{0, data.data(), data.size(), sizeof(uint64_t)};
    cairn::PartHeader layout = cairn::MakePartHeader("c", 2, 0, 1, {region});
    bool intact2[3];
    bool intact1_anywhere = false;
    // Some tier still has a manifest file of version 2 / an undamaged one.
    bool manifest2_left = false;
    bool manifest2_intact = false;
    std::string what;
    for (int k = 0; k < 3; ++k) {
      auto tier = std::move(cairn::OpenNodeTier(cairn::PosixEnv(), config, kCampaignTiers[k], 0))
                      .value();
      for (int v = 2; v >= 1; --v) {
        bool hit = v == 2 ? rng() % 3 != 0 : rng() % 4 == 0;
        bool manifest_hit = false;
        if (hit) {
          std::string file = rng() % 3 == 0 ? cairn::ManifestFileName(0) : cairn::PartFileName(0);
          manifest_hit = file == cairn::ManifestFileName(0);
          std::string kind = kDamage[rng() % std::size(kDamage)];
          bool is_part = file == cairn::PartFileName(0);
          uint64_t header = layout.HeaderBytes();
          hit = Damage(tier->FilePath("c", v, file), kind, rng, is_part ? header : 0,
                       is_part ? layout.regions[0].offset : 0);
          what += fmt::format(" {}:v{}:{}:{}", tier->name(), v, file.substr(8), kind);
        }
        if (v == 2) {
          intact2[k] = !hit;
          manifest2_left |= fs::exists(tier->FilePath("c", 2, cairn::ManifestFileName(0)));
          manifest2_intact |= !manifest_hit;
        }
        if (v == 1 && !hit) intact1_anywhere = true;
      }
    }
    int64_t expect_version = -1;
    std::string expect_tier;
    for (int k = 0; k < 3 && expect_version < 0; ++k) {
      if (intact2[k]) {
        expect_version = 2;
        expect_tier = cairn::TierKindName(kCampaignTiers[k]);
      }
    }
    if (expect_version < 0 && intact1_anywhere) expect_version = 1;

    std::fill(data.begin(), data.end(), 0);
    auto e = Open(config);
    (void)e->Protect(0, data.data(), data.size(), sizeof(uint64_t));
    auto report = e->Restart("c", 2);
    bool bit_exact = report.ok() && cairn_test::HoldsVersion(data, report->version);
    std::string outcome;
    if (!report.ok()) {
      outcome = "nothing recoverable";
      if (expect_version >= 0) {
        std::printf("FAIL case %d (seed %u)%s: restart failed: %s\n", c, seed, what.c_str(),
                    report.status().ToString().c_str());
        ++failures;
      }
    } else if (!bit_exact) {
      std::printf("FAIL case %d (seed %u)%s: WRONG DATA returned for version %lld\n", c, seed,
                  what.c_str(), static_cast<long long>(report->version));
      ++failures;
      outcome = "wrong data";
    } else if (report->version != expect_version ||
               (expect_version == 2 && report->tier != expect_tier)) {
      std::printf("FAIL case %d (seed %u)%s: restored v%lld from %s, expected v%lld from %s\n", c,
                  seed, what.c_str(), static_cast<long long>(report->version), report->tier.c_str(),
                  static_cast<long long>(expect_version), expect_tier.c_str());
      ++failures;
    } else if (report->newest != (manifest2_left ? 2 : 1) ||
               report->rollback_versions != report->newest - report->version ||
               (report->rollback_versions == 0 && report->rollback_seconds != 0) ||
               // Only a readable manifest of version 2 tells when it was made.
               (report->rollback_versions > 0 && manifest2_intact &&
                report->rollback_seconds <= 0)) {
      std::printf("FAIL case %d (seed %u)%s: restored v%lld, reported newest v%lld, rollback "
                  "%lld version(s), %.6f s\n",
                  c, seed, what.c_str(), static_cast<long long>(report->version),
                  static_cast<long long>(report->newest),
                  static_cast<long long>(report->rollback_versions), report->rollback_seconds);
      ++failures;
      outcome = "wrong rollback";
    } else {
      outcome = fmt::format("v{} from {}", report->version, report->tier);
    }
    ++outcomes[outcome];
    (void)e->Finalize();
  }
  std::printf("outcomes:\n");
  for (const auto& [outcome, n] : outcomes) std::printf("  %-22s %d\n", outcome.c_str(), n);
  std::printf("%d passed, %d failed\n", cases - failures, failures);
  return failures == 0 ? 0 : 1;
}
