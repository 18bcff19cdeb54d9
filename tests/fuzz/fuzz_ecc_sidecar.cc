// Fuzzes the ECC sidecar reader (runtime/ecc_sidecar.h): RepairPart and
// ScanPart on a memory-tier part and its sidecar, as restart, the drain and
// `cairn verify` read them. The files are real: at start-up WritePart and
// WriteEccSidecar store one part (regions that make one RS(36,32) stripe
// and two RS(19,16) stripes) and its sidecar for each ecc mode in a MemEnv.
// The input picks the mode and a list of edits to the stored bytes: flipped
// bytes in either file, lost pages of the part, a truncated part, a
// sidecar cut short or grown (the manifest entry then gives the sidecar's
// new size, as a forged manifest would). Whatever the bytes:
//  - a repair that succeeds returns the original part, bit for bit;
//  - one that fails says kCorrupt;
//  - ScanPart agrees with RepairPart on whether the part can be repaired.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/env.h"
#include "format/layout.h"
#include "fuzz_support.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/part_io.h"
#include "storage/tier.h"

namespace cairn::fuzz {
namespace {

constexpr char kName[] = "c";
constexpr int64_t kVersion = 1;
constexpr size_t kMaxEdits = 64;
constexpr uint64_t kHeaderCrcAt = kEccHeaderSize - 4;  // over the bytes before it

// One ecc mode's stored files as WriteEccSidecar left them.
struct StoredCopy {
  FileEntry part;
  FileEntry parity;
  std::string sidecar;
};

struct Fixture {
  std::unique_ptr<Env> env = NewMemEnv();
  std::unique_ptr<Tier> tier =
      std::make_unique<Tier>(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  std::vector<std::vector<uint8_t>> data;  // the regions' bytes
  std::string part;                        // the part file's bytes
  std::array<StoredCopy, 2> copies;        // normal, strong

  std::string PartPath() const { return tier->FilePath(kName, kVersion, PartFileName(0)); }
  std::string SidecarPath() const { return tier->FilePath(kName, kVersion, EccSidecarName(0)); }
};

// Small regions packed after the header and a large one page-aligned after
// them (format/part.h).
Fixture* MakeFixture() {
  auto* f = new Fixture;
  const std::vector<uint64_t> sizes = {24, 8, 3000, 70000};
  std::mt19937_64 rng(20261124);
  std::vector<Region> regions;
  for (size_t i = 0; i < sizes.size(); ++i) {
    f->data.emplace_back(sizes[i]);
    for (auto& b : f->data.back()) b = static_cast<uint8_t>(rng());
    regions.push_back({static_cast<int>(i), f->data.back().data(), sizes[i], 1});
  }
  const PartHeader header = MakePartHeader(kName, kVersion, 0, 1, regions);
  const EccMode modes[] = {EccMode::kNormal, EccMode::kStrong};
  for (int i = 0; i < 2; ++i) {
    auto part = WritePart(*f->tier, header, regions);
    auto parity = WriteEccSidecar(*f->tier, header, regions, modes[i]);
    auto sidecar = f->env->ReadFileToString(f->SidecarPath());
    CAIRN_FUZZ_CHECK(part.ok() && parity.ok() && sidecar.ok(), "fixture: {} {} {}",
                     part.status().ToString(), parity.status().ToString(),
                     sidecar.status().ToString());
    f->copies[i] = {*part, *parity, *sidecar};
  }
  auto part = f->env->ReadFileToString(f->PartPath());
  CAIRN_FUZZ_CHECK(part.ok(), "fixture: {}", part.status().ToString());
  f->part = *part;
  return f;
}

const Fixture& TheFixture() {
  static const Fixture* fixture = MakeFixture();
  return *fixture;
}

enum class Edit { kFlipSidecar, kFlipPart, kLosePage, kTruncatePart, kResizeSidecar, kCount };

void ApplyEdit(FuzzedDataProvider* in, std::string* part, std::string* sidecar) {
  const auto edit = static_cast<Edit>(in->ConsumeIntegralInRange(0, int(Edit::kCount) - 1));
  auto offset_in = [&](const std::string& s) { return in->ConsumeIntegralInRange<size_t>(0, s.size()); };
  switch (edit) {
    case Edit::kFlipSidecar:
    case Edit::kFlipPart: {
      std::string* file = edit == Edit::kFlipPart ? part : sidecar;
      const size_t at = offset_in(*file);
      const uint8_t mask = in->ConsumeIntegral<uint8_t>();
      if (at < file->size()) (*file)[at] = static_cast<char>((*file)[at] ^ mask);
      break;
    }
    case Edit::kLosePage: {
      const size_t page = offset_in(*part) / kEccShardSize * kEccShardSize;
      const size_t end = std::min<size_t>(part->size(), page + kEccShardSize);
      if (page < end) std::fill(part->begin() + page, part->begin() + end, '\0');
      break;
    }
    case Edit::kTruncatePart:
      part->resize(offset_in(*part));
      break;
    case Edit::kResizeSidecar:
      sidecar->resize(in->ConsumeIntegralInRange<size_t>(0, sidecar->size() + kEccShardSize));
      break;
    case Edit::kCount:
      break;
  }
}

void Store(const Fixture& f, const std::string& path, const std::string& bytes) {
  Status s = f.env->WriteFileAtomic(path, bytes.data(), bytes.size(), false);
  CAIRN_FUZZ_CHECK(s.ok(), "storing '{}': {}", path, s.ToString());
}

void FuzzOne(FuzzedDataProvider* in) {
  const Fixture& f = TheFixture();
  const StoredCopy& copy = f.copies[in->ConsumeBool() ? 1 : 0];
  std::string part = f.part, sidecar = copy.sidecar;
  for (size_t i = 0; i < kMaxEdits && in->remaining_bytes() > 0; ++i) {
    ApplyEdit(in, &part, &sidecar);
  }
  if (sidecar.size() >= kEccHeaderSize) RestoreCrc32c(&sidecar, kHeaderCrcAt, kHeaderCrcAt);
  Store(f, f.PartPath(), part);
  Store(f, f.SidecarPath(), sidecar);
  FileEntry parity = copy.parity;
  parity.size = sidecar.size();

  Result<RepairedPart> repaired = RepairPart(*f.tier, kName, kVersion, copy.part, parity);
  Result<EccScan> scan = ScanPart(*f.tier, kName, kVersion, copy.part, parity);
  const bool scan_ok = scan.ok() && scan->status.ok();
  if (!repaired.ok()) {
    const Status& why = repaired.status();
    CAIRN_FUZZ_CHECK(why.code() == Code::kCorrupt, "refused with {}", why.ToString());
    CAIRN_FUZZ_CHECK(why.message().find(f.PartPath()) != std::string::npos ||
                         why.message().find(f.SidecarPath()) != std::string::npos,
                     "the message names neither file: {}", why.message());
    CAIRN_FUZZ_CHECK(!scan_ok, "ScanPart passes a part RepairPart refuses: {}",
                     repaired.status().message());
    return;
  }
  CAIRN_FUZZ_CHECK(std::string(repaired->bytes.begin(), repaired->bytes.end()) == f.part,
                   "RepairPart succeeded with bytes that differ from the original part");
  CAIRN_FUZZ_CHECK(scan_ok, "ScanPart refuses a part RepairPart repairs: {}",
                   scan.ok() ? scan->status.message() : scan.status().message());
  CAIRN_FUZZ_CHECK(scan->shards_corrected == repaired->shards_corrected,
                   "ScanPart corrects {} shards, RepairPart {}", scan->shards_corrected,
                   repaired->shards_corrected);
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  cairn::fuzz::FuzzOne(&in);
  return 0;
}
