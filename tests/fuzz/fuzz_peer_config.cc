// Fuzzes the reader of the peers' configuration files
// (compat/common/ini_file.h, ParseIni): FTI's and VeloC's INI files and
// SCR's scr.conf, which users write by hand. Every entry must have a key
// without '=' and lines in ascending order; a refusal must name the file
// and the line.
#include <cstdint>
#include <string>

#include "compat/common/ini_file.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void FuzzOne(const std::string& text) {
  const std::string origin = "fuzz.cfg";
  auto entries = cairn_compat::ParseIni(text, origin);
  if (!entries.ok()) {
    CAIRN_FUZZ_CHECK(entries.status().message().rfind(origin + ":", 0) == 0,
                     "the message does not start with '{}:' and a line: {}", origin,
                     entries.status().message());
    return;
  }
  int previous_line = 0;
  for (const cairn_compat::IniEntry& e : *entries) {
    CAIRN_FUZZ_CHECK(!e.key.empty() && e.key.find('=') == std::string::npos &&
                         e.key.find('\n') == std::string::npos,
                     "key '{}' on line {}", e.key, e.line);
    CAIRN_FUZZ_CHECK(e.line > previous_line, "line {} after line {}", e.line, previous_line);
    previous_line = e.line;
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
