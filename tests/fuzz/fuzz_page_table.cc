// Fuzzes the pages-file header reader (format/page_table.h): PagesHeaderSize
// on the first 32 bytes, then DecodePagesHeader on the whole input, as the
// restart of a deduplicated version reads it; and the format-2 trailer
// reader on the input's last 16 bytes. The input is a header (format 1's
// file starts with it; format 2's ends with it and the trailer). A decoded header must encode back to exactly the bytes it came
// from (a byte the reader skipped or misread would not), and a refusal must
// be kCorrupt (kUnsupported for a newer format) naming the file.
#include <cstdint>
#include <string>

#include "format/page_table.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

constexpr size_t kCrcOffset = 12;   // magic (8), format version (4)
constexpr size_t kSizeOffset = 16;  // then the CRC (4), then the header length (8)

// The header's CRC32C covers the header with its own field zeroed. Makes it
// right for whatever length the input claims, when that lies inside it.
void RestoreHeaderCrc(std::string* bytes) {
  if (bytes->size() < kPagesFixedPrefix) return;
  uint64_t size;
  std::memcpy(&size, bytes->data() + kSizeOffset, 8);
  if (size < kSizeOffset + 8 || size > bytes->size()) return;
  std::memset(bytes->data() + kCrcOffset, 0, 4);
  RestoreCrc32c(bytes, size, kCrcOffset);
}

void FuzzOne(std::string bytes) {
  RestoreHeaderCrc(&bytes);
  const std::string origin = "fuzz.pages";
  Result<uint64_t> size = PagesHeaderSize(bytes.substr(0, kPagesFixedPrefix), origin);
  Result<PagesHeader> header = DecodePagesHeader(bytes, origin);
  if (!header.ok()) {
    CheckRefusal(header.status(),
                 header.status().code() == Code::kUnsupported ? Code::kUnsupported : Code::kCorrupt,
                 origin);
    return;
  }
  CAIRN_FUZZ_CHECK(size.ok(), "DecodePagesHeader accepted what PagesHeaderSize refused: {}",
                   size.status().message());
  const std::string encoded = header->Encode();
  CAIRN_FUZZ_CHECK(encoded.size() == *size && encoded.size() == header->HeaderBytes(),
                   "header of {} bytes re-encodes to {}", *size, encoded.size());
  CAIRN_FUZZ_CHECK(encoded == bytes.substr(0, *size), "header does not re-encode to its bytes");
  const bool data_after_header = header->format == kPagesFormatV1
                                     ? header->DataOffset() >= header->HeaderBytes()
                                     : header->HeaderOffset() >= header->DataOffset();
  CAIRN_FUZZ_CHECK(data_after_header && header->DataOffset() % kPagesDataAlign == 0,
                   "format {}: data offset {} for a header of {} bytes", header->format,
                   header->DataOffset(), header->HeaderBytes());
}

void FuzzTrailer(const std::string& bytes) {
  if (bytes.size() < kPagesTrailerBytes) return;
  const std::string origin = "fuzz.pages";
  // As if the input were the end of a file of that many bytes, and of one
  // 5 MiB longer.
  for (uint64_t file_size : {uint64_t{bytes.size()}, uint64_t{bytes.size()} + (5 << 20)}) {
    Result<uint64_t> at =
        DecodePagesTrailer(bytes.substr(bytes.size() - kPagesTrailerBytes), file_size, origin);
    if (!at.ok()) {
      CheckRefusal(at.status(), Code::kCorrupt, origin);
      continue;
    }
    CAIRN_FUZZ_CHECK(*at >= kPagesDataAlign && *at + kPagesTrailerBytes < file_size,
                     "header offset {} accepted in a file of {} bytes", *at, file_size);
    CAIRN_FUZZ_CHECK(EncodePagesTrailer(*at) == bytes.substr(bytes.size() - kPagesTrailerBytes),
                     "trailer does not re-encode to its bytes");
  }
  Result<uint32_t> format = PagesFileFormat(bytes.substr(0, 12), origin);
  if (!format.ok()) {
    CheckRefusal(format.status(),
                 format.status().code() == Code::kUnsupported ? Code::kUnsupported : Code::kCorrupt,
                 origin);
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  cairn::fuzz::FuzzOne(bytes);
  cairn::fuzz::FuzzTrailer(bytes);
  return 0;
}
