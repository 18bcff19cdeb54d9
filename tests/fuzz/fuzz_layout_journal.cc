// Fuzzes the compatibility layers' layout journal reader
// (compat/common/layout_journal.h, ParseLayoutRecords): the per-checkpoint
// region shapes a VeloC, SCR or FTI application's restart reads back. An
// accepted journal must survive writing and reading again unchanged, and a
// refusal must name the file.
#include <cstdint>
#include <string>

#include "compat/common/layout_journal.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void FuzzOne(const std::string& text) {
  const std::string origin = "fuzz.layouts";
  auto records = cairn_compat::ParseLayoutRecords(text, origin);
  if (!records.ok()) {
    CAIRN_FUZZ_CHECK(records.status().message().find(origin) != std::string::npos,
                     "the message does not name '{}': {}", origin, records.status().message());
    return;
  }
  const std::string written = cairn_compat::FormatLayoutRecords(*records);
  auto again = cairn_compat::ParseLayoutRecords(written, origin);
  CAIRN_FUZZ_CHECK(again.ok(), "its own output is refused: {}", again.status().message());
  CAIRN_FUZZ_CHECK(cairn_compat::FormatLayoutRecords(*again) == written,
                   "the journal changes when written and read again");
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
