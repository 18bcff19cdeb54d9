// Fuzzes the reader of a persistent array's header page
// (format/pmem_array_layout.h): DecodePmemArrayHeader and the choice of the
// newest epoch record, as InPlaceArray::Open reads an existing file. The
// input is one flag byte, the file's size (8 bytes, little-endian) and the
// start of its header page (zero-filled to a page). The flags say which
// CRCs to make right (bit 0 the header's, bits 1 and 2 the records'), so
// that mutations reach the fields behind them and the CRC checks are still
// tried. An accepted shape must fit the file and encode back to its bytes;
// a chosen record must be valid and no older than the other valid one.
#include <cstdint>
#include <cstring>
#include <string>

#include "format/pmem_array_layout.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void FuzzOne(const std::string& input) {
  if (input.size() < 9) return;
  const uint8_t flags = static_cast<uint8_t>(input[0]);
  uint64_t file_size;
  std::memcpy(&file_size, input.data() + 1, 8);
  std::string page = input.substr(9, kPmemArrayHeaderBytes);
  page.resize(kPmemArrayHeaderBytes, '\0');
  if (flags & 1) RestoreCrc32c(&page, kPmemArrayHeaderCrcOffset, kPmemArrayHeaderCrcOffset);
  for (int i = 0; i < 2; ++i) {
    if (!(flags & (2 << i))) continue;
    std::string line = page.substr(kEpochRecordOffset[i], kEpochRecordBytes);
    RestoreCrc32c(&line, kEpochRecordCrcOffset, kEpochRecordCrcOffset);
    page.replace(kEpochRecordOffset[i], kEpochRecordBytes, line);
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(page.data());

  const std::string origin = "fuzz.pmem";
  Result<PmemArrayShape> shape = DecodePmemArrayHeader(bytes, file_size, origin);
  if (!shape.ok()) {
    CheckRefusal(shape.status(), Code::kCorrupt, origin);
  } else {
    CAIRN_FUZZ_CHECK(shape->FileBytes() <= file_size &&
                         shape->copy_bytes % kPmemArrayPageBytes == 0 &&
                         shape->copy_bytes / shape->elem_size >= shape->count,
                     "shape {} x {} bytes, {} per copy, accepted for a file of {} bytes",
                     shape->count, shape->elem_size, shape->copy_bytes, file_size);
    std::string encoded(kPmemArrayHeaderBytes, '\0');
    EncodePmemArrayHeader(*shape, reinterpret_cast<uint8_t*>(encoded.data()));
    const size_t header_fields = kPmemArrayHeaderCrcOffset + 4;
    CAIRN_FUZZ_CHECK(encoded.compare(0, header_fields, page, 0, header_fields) == 0,
                     "the header does not encode back to its bytes");
  }

  std::optional<EpochRecord> newest = NewestEpochRecord(bytes);
  for (size_t offset : kEpochRecordOffset) {
    std::optional<EpochRecord> record = DecodeEpochRecord(bytes + offset);
    if (!record) continue;
    CAIRN_FUZZ_CHECK(newest && newest->iteration >= record->iteration,
                     "record of iteration {} passed over", record->iteration);
    uint8_t line[kEpochRecordBytes];
    EncodeEpochRecord(*record, line);
    CAIRN_FUZZ_CHECK(std::memcmp(line, bytes + offset, kEpochRecordCrcOffset + 4) == 0,
                     "the record at {} does not encode back to its bytes", offset);
  }
  if (newest) {
    CAIRN_FUZZ_CHECK(newest->iteration >= 0 && (newest->consistent == 0 || newest->consistent == 1),
                     "record of iteration {} naming copy {} chosen", newest->iteration,
                     newest->consistent);
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
