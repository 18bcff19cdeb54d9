// Fuzzes the header reader of a versioned array's drained version
// (format/drained_version.h, DecodeDrainedHeader), as VersionDrain::Read
// reads a `v<version>.vad` file back. The input is the whole file. An
// accepted header must describe exactly the bytes after it and encode back
// to the bytes it came from; a refusal must be kCorrupt naming the file.
#include <cstdint>
#include <string>

#include "format/drained_version.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void FuzzOne(const std::string& file) {
  const std::string origin = "fuzz/r0/v1.vad";
  Result<DrainedHeader> header =
      DecodeDrainedHeader(std::string_view(file).substr(0, kDrainedHeaderBytes), file.size(),
                          origin);
  if (!header.ok()) {
    CheckRefusal(header.status(), Code::kCorrupt, origin);
    return;
  }
  CAIRN_FUZZ_CHECK(header->bytes == file.size() - kDrainedHeaderBytes,
                   "header says {} bytes follow it, the file has {}", header->bytes,
                   file.size() - kDrainedHeaderBytes);
  CAIRN_FUZZ_CHECK(header->version >= 0 && header->rank >= 0, "version {} rank {} accepted",
                   header->version, header->rank);
  CAIRN_FUZZ_CHECK(EncodeDrainedHeader(*header) == file.substr(0, kDrainedHeaderBytes),
                   "the header does not encode back to its bytes");
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
