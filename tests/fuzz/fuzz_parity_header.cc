// Fuzzes the parity-file header reader (format/parity_layout.h), as the
// rebuild of a lost part and `cairn verify` read it. The input is a parity
// file, or its start. Its CRC32C sits right after the header, whose length
// only the parse finds, so the input is tried twice: as it is, and with the
// last 4 bytes made the CRC of all before them (the header then ends where
// the input does). A decoded header must encode back to exactly its bytes,
// and a refusal must be kCorrupt naming the file.
#include <cstdint>
#include <string>

#include "format/parity_layout.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void DecodeOne(const std::string& bytes) {
  const std::string origin = "fuzz.parity";
  uint64_t header_bytes = 0;
  Result<ParityHeader> header = DecodeParityHeader(bytes, origin, &header_bytes);
  if (!header.ok()) {
    CheckRefusal(header.status(), Code::kCorrupt, origin);
    return;
  }
  CAIRN_FUZZ_CHECK(header_bytes <= bytes.size(), "header of {} bytes in an input of {}",
                   header_bytes, bytes.size());
  CAIRN_FUZZ_CHECK(header->index < header->members.size(), "index {} of {} members",
                   header->index, header->members.size());
  CAIRN_FUZZ_CHECK(EncodeParityHeader(*header) == bytes.substr(0, header_bytes),
                   "header does not re-encode to its bytes");
}

void FuzzOne(std::string bytes) {
  DecodeOne(bytes);
  if (bytes.size() >= 4) {
    RestoreCrc32c(&bytes, bytes.size() - 4, bytes.size() - 4);
    DecodeOne(bytes);
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
