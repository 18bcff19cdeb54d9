// Fuzzes the SSD wear ledger's slot reader (storage/wear_ledger.h):
// DecodeWearFile on a slot file, then ReadWearLedger on a ledger directory
// holding it, as the controller and `cairn status` read them. Both formats
// are fuzzed: version 2 (one canonical JSON object whose "crc32c" member
// covers the rest) and version 1 (text lines closed by a "crc32c" line).
// A refusal must be kCorrupt; an accepted slot must keep its invariants
// (samples strictly increasing in time, the last one holding `bytes`) and
// survive writing and reading again.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "env/env.h"
#include "fuzz_support.h"
#include "storage/wear_ledger.h"

namespace cairn::fuzz {
namespace {

constexpr char kLedgerDir[] = "/ssd/0/.wear/dev-8-0";
constexpr char kV1CrcLine[] = "\ncrc32c ";

std::string CrcText(const std::string& body) {
  return fmt::format("{:08x}", Crc32c(body.data(), body.size()));
}

// Recomputes the checksum, in whichever format the input is, so that
// mutations reach the fields behind it; the writer's own JSON form is kept
// (anything else is refused before the checksum is looked at).
void RestoreChecksum(std::string* bytes) {
  // Member order matters to the form: Cairn writes ordered_json.
  nlohmann::ordered_json doc =
      nlohmann::ordered_json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (doc.is_object() && doc.contains("crc32c") && doc.dump() + "\n" == *bytes) {
    doc.erase("crc32c");
    doc["crc32c"] = CrcText(doc.dump());
    *bytes = doc.dump() + "\n";
    return;
  }
  const size_t crc_at = bytes->rfind(kV1CrcLine);
  if (crc_at != std::string::npos && bytes->size() == crc_at + 8 + 8 + 1) {
    bytes->replace(crc_at + 8, 8, CrcText(bytes->substr(0, crc_at + 1)));
  }
}

void CheckState(const WearWriterState& s) {
  for (size_t i = 1; i < s.series.size(); ++i) {
    CAIRN_FUZZ_CHECK(s.series[i - 1].time < s.series[i].time, "samples {} and {} out of order",
                     i - 1, i);
  }
  CAIRN_FUZZ_CHECK(s.series.empty() || s.series.back().bytes == s.bytes,
                   "last sample {} bytes, the writer {}", s.series.back().bytes, s.bytes);
  const std::string written = EncodeWearFile(s);
  Result<WearWriterState> again = DecodeWearFile(written);
  CAIRN_FUZZ_CHECK(again.ok(), "a slot written by Cairn is refused: {}", again.status().message());
  CAIRN_FUZZ_CHECK(EncodeWearFile(*again) == written, "slot changes when written and read again");
}

void FuzzOne(std::string bytes) {
  RestoreChecksum(&bytes);
  Result<WearWriterState> state = DecodeWearFile(bytes);
  if (!state.ok()) {
    CAIRN_FUZZ_CHECK(state.status().code() == Code::kCorrupt, "refused with {}",
                     state.status().ToString());
  } else {
    CheckState(*state);
  }
  // The directory reader stores what it cannot decode as a problem.
  std::unique_ptr<Env> env = NewMemEnv();
  const std::string slot = std::string(kLedgerDir) + "/" +
                           (state.ok() && ValidWearWriterName(state->writer) ? state->writer : "w") +
                           ".0";
  Status stored = env->CreateDirs(kLedgerDir);
  if (stored.ok()) stored = env->WriteFileAtomic(slot, bytes.data(), bytes.size(), false);
  CAIRN_FUZZ_CHECK(stored.ok(), "storing '{}': {}", slot, stored.ToString());
  Result<WearLedgerSnapshot> ledger = ReadWearLedger(env.get(), kLedgerDir);
  CAIRN_FUZZ_CHECK(ledger.ok(), "ReadWearLedger: {}", ledger.status().ToString());
  const double now = ledger->created + 3600;
  (void)ledger->Series();
  (void)ledger->BytesAt(now);
  (void)ledger->Bandwidth(now, 600, 0);
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
