// Fuzzes the SCR layer's dataset index reader (compat/scr/scr_index.h,
// ScrIndex::FromJson): <prefix>/.scr/index.scr, which outlives a run and
// decides which dataset the next run's SCR_Have_restart offers. An accepted
// index must survive writing and reading again unchanged, and a refusal
// must name the file.
#include <cstdint>
#include <string>

#include "compat/scr/scr_index.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void FuzzOne(const std::string& text) {
  const std::string origin = "fuzz/index.scr";
  cairn_compat::ScrIndex index;
  cairn_compat::Status read = index.FromJson(text, origin);
  if (!read.ok()) {
    CAIRN_FUZZ_CHECK(read.message().find(origin) != std::string::npos,
                     "the message does not name '{}': {}", origin, read.message());
    return;
  }
  const std::string written = index.ToJson();
  cairn_compat::ScrIndex again;
  cairn_compat::Status reread = again.FromJson(written, origin);
  CAIRN_FUZZ_CHECK(reread.ok(), "its own output is refused: {}", reread.message());
  CAIRN_FUZZ_CHECK(again.ToJson() == written, "the index changes when written and read again");
  if (index.current()) {
    CAIRN_FUZZ_CHECK(index.datasets().count(*index.current()) == 1,
                     "the current dataset {} is not in the index", *index.current());
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
