// Fuzzes the part-file header reader (format/part.h): PartHeaderSize on the
// first 16 bytes, then DecodePartHeader on the whole input, as
// runtime/part_io.cc reads a part. The input is a part file, or its start.
// A decoded header must encode back to exactly the bytes it came from: a
// byte the reader skipped or misread would not, and a refusal must be
// kCorrupt naming the file.
#include <cstdint>
#include <string>

#include "format/part.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

constexpr uint64_t kSizeFieldOffset = 12;  // magic (8), format version (4), header size (4)

// Makes the header checksum right for whatever header size the input
// claims, when that size lies inside the input.
void RestoreHeaderCrc(std::string* bytes) {
  if (bytes->size() < 16) return;
  uint32_t size;
  std::memcpy(&size, bytes->data() + kSizeFieldOffset, 4);
  if (size >= 4 && size <= bytes->size()) RestoreCrc32c(bytes, size - 4, size - 4);
}

void FuzzOne(std::string bytes) {
  RestoreHeaderCrc(&bytes);
  const std::string origin = "fuzz.part";
  Result<uint64_t> size = PartHeaderSize(bytes.substr(0, 16), origin);
  Result<PartHeader> header = DecodePartHeader(bytes, origin);
  if (!header.ok()) {
    CheckRefusal(header.status(), Code::kCorrupt, origin);
    return;
  }
  CAIRN_FUZZ_CHECK(size.ok(), "DecodePartHeader accepted what PartHeaderSize refused: {}",
                   size.status().message());
  const std::string encoded = header->Encode();
  CAIRN_FUZZ_CHECK(encoded.size() == *size && encoded.size() == header->HeaderBytes(),
                   "header of {} bytes re-encodes to {}", *size, encoded.size());
  CAIRN_FUZZ_CHECK(encoded == bytes.substr(0, *size), "header does not re-encode to its bytes");
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
