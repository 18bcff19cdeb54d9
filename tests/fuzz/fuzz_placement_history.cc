// Fuzzes the placement history reader (runtime/placement_history.h):
// ReadPlacementHistory on a history.jsonl file, as `cairn status` reads
// it, which decodes each line with DecodePlacementRecord. A refusal must be
// kCorrupt naming the file; every record read must survive writing and
// reading again unchanged.
#include <cstdint>
#include <memory>
#include <string>

#include "env/env.h"
#include "fuzz_support.h"
#include "runtime/placement_history.h"

namespace cairn::fuzz {
namespace {

constexpr char kTierRoot[] = "/ssd/0";

void FuzzOne(const std::string& file) {
  std::unique_ptr<Env> env = NewMemEnv();
  const std::string path = PlacementHistoryPath(kTierRoot);
  Status stored = env->CreateDirs(path.substr(0, path.rfind('/')));
  if (stored.ok()) stored = env->WriteFileAtomic(path, file.data(), file.size(), false);
  CAIRN_FUZZ_CHECK(stored.ok(), "storing '{}': {}", path, stored.ToString());
  Result<std::vector<PlacementRecord>> records = ReadPlacementHistory(env.get(), kTierRoot);
  if (!records.ok()) {
    CheckRefusal(records.status(), Code::kCorrupt, path);
    return;
  }
  for (const PlacementRecord& r : *records) {
    Result<PlacementRecord> again = DecodePlacementRecord(EncodePlacementRecord(r));
    CAIRN_FUZZ_CHECK(again.ok(), "a record written by Cairn is refused: {}",
                     again.status().message());
    CAIRN_FUZZ_CHECK(*again == r, "record of version {} changes when written and read again",
                     r.version);
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
