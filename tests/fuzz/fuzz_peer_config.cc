// Fuzzes the reader of the peers' configuration files
// (compat/common/ini_file.h, ParseIni): FTI's and VeloC's INI files and
// SCR's scr.conf, which users write by hand, in each peer's dialect. Every
// entry must have a key without a separator and lines in ascending order; a refusal must name the file
// and the line.
#include <cstdint>
#include <string>

#include "compat/common/ini_file.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void FuzzDialect(const std::string& text, const cairn_compat::IniDialect& dialect) {
  const std::string origin = "fuzz.cfg";
  auto entries = cairn_compat::ParseIni(text, origin, dialect);
  if (!entries.ok()) {
    CAIRN_FUZZ_CHECK(entries.status().message().rfind(origin + ":", 0) == 0,
                     "the message does not start with '{}:' and a line: {}", origin,
                     entries.status().message());
    return;
  }
  int previous_line = 0;
  for (const cairn_compat::IniEntry& e : *entries) {
    CAIRN_FUZZ_CHECK(!e.key.empty() && e.key.find_first_of(dialect.separators) == std::string::npos &&
                         e.key.find('\n') == std::string::npos,
                     "key '{}' on line {}", e.key, e.line);
    CAIRN_FUZZ_CHECK(e.line > previous_line, "line {} after line {}", e.line, previous_line);
    previous_line = e.line;
  }
}

// Each peer's dialect (comments and quotes as its own parser reads them).
void FuzzOne(const std::string& text) {
  for (const auto* dialect : {&cairn_compat::kFtiIni, &cairn_compat::kVelocIni, &cairn_compat::kScrConf}) {
    FuzzDialect(text, *dialect);
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
