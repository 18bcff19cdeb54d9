#include "format/pmem_array_layout.h"

#include <cstring>

#include "codec/crc32c.h"

namespace cairn {
namespace {

constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'I', 'P', 'V'};

// Fields are little-endian, which is the host's order on x86-64, the only
// architecture with the flush instructions persistent arrays need.
template <typename T>
void Put(uint8_t* p, size_t offset, T value) {
  std::memcpy(p + offset, &value, sizeof(T));
}
template <typename T>
T Get(const uint8_t* p, size_t offset) {
  T value;
  std::memcpy(&value, p + offset, sizeof(T));
  return value;
}

uint64_t PaddedToPages(uint64_t n) {
  return (n + kPmemArrayPageBytes - 1) / kPmemArrayPageBytes * kPmemArrayPageBytes;
}

}  // namespace

std::optional<PmemArrayShape> PmemArrayShapeFor(uint64_t count, uint64_t elem_size) {
  if (count == 0 || elem_size == 0 || count > (UINT64_MAX / 4) / elem_size) return std::nullopt;
  return PmemArrayShape{elem_size, count, PaddedToPages(count * elem_size)};
}

void EncodePmemArrayHeader(const PmemArrayShape& shape, uint8_t* page) {
  std::memcpy(page, kMagic, sizeof(kMagic));
  Put<uint32_t>(page, 8, kPmemArrayFormatVersion);
  Put<uint32_t>(page, 12, static_cast<uint32_t>(kPmemArrayHeaderBytes));
  Put<uint64_t>(page, 16, shape.elem_size);
  Put<uint64_t>(page, 24, shape.count);
  Put<uint64_t>(page, 32, shape.copy_bytes);
  Put<uint32_t>(page, kPmemArrayHeaderCrcOffset, Crc32c(page, kPmemArrayHeaderCrcOffset));
}

Result<PmemArrayShape> DecodePmemArrayHeader(const uint8_t* page, uint64_t file_size,
                                             const std::string& origin) {
  if (file_size < kPmemArrayHeaderBytes || std::memcmp(page, kMagic, sizeof(kMagic)) != 0 ||
      Get<uint32_t>(page, kPmemArrayHeaderCrcOffset) != Crc32c(page, kPmemArrayHeaderCrcOffset)) {
    return Error(Code::kCorrupt, "'{}' is not a Cairn persistent array (bad magic or header CRC)",
                 origin);
  }
  if (Get<uint32_t>(page, 8) != kPmemArrayFormatVersion ||
      Get<uint32_t>(page, 12) != kPmemArrayHeaderBytes) {
    return Error(Code::kCorrupt, "persistent array '{}': unknown format version {}", origin,
                 Get<uint32_t>(page, 8));
  }
  const uint64_t elem_size = Get<uint64_t>(page, 16);
  const uint64_t count = Get<uint64_t>(page, 24);
  std::optional<PmemArrayShape> shape = PmemArrayShapeFor(count, elem_size);
  if (!shape || shape->copy_bytes != Get<uint64_t>(page, 32)) {
    return Error(Code::kCorrupt, "persistent array '{}': its header's shape ({} x {} bytes, {} "
                 "per copy) is inconsistent", origin, count, elem_size, Get<uint64_t>(page, 32));
  }
  if (file_size < shape->FileBytes()) {
    return Error(Code::kCorrupt, "persistent array '{}' is truncated ({} bytes)", origin,
                 file_size);
  }
  return *shape;
}

void EncodeEpochRecord(const EpochRecord& record, uint8_t* line) {
  std::memset(line, 0, kEpochRecordBytes);
  Put<int64_t>(line, 0, record.iteration);
  Put<uint32_t>(line, 8, static_cast<uint32_t>(record.consistent));
  Put<uint32_t>(line, 12, static_cast<uint32_t>(record.mode));
  Put<uint32_t>(line, kEpochRecordCrcOffset, Crc32c(line, kEpochRecordCrcOffset));
}

std::optional<EpochRecord> DecodeEpochRecord(const uint8_t* line) {
  if (Crc32c(line, kEpochRecordCrcOffset) != Get<uint32_t>(line, kEpochRecordCrcOffset)) {
    return std::nullopt;
  }
  const int64_t iteration = Get<int64_t>(line, 0);
  const uint32_t consistent = Get<uint32_t>(line, 8);
  const uint32_t mode = Get<uint32_t>(line, 12);
  if (iteration < 0 || consistent > 1 ||
      (mode != static_cast<uint32_t>(EpochMode::kInPlace) &&
       mode != static_cast<uint32_t>(EpochMode::kCopy))) {
    return std::nullopt;
  }
  return EpochRecord{iteration, static_cast<int>(consistent), static_cast<EpochMode>(mode)};
}

std::optional<EpochRecord> NewestEpochRecord(const uint8_t* page) {
  std::optional<EpochRecord> newest;
  for (size_t offset : kEpochRecordOffset) {
    std::optional<EpochRecord> record = DecodeEpochRecord(page + offset);
    if (record && (!newest || record->iteration > newest->iteration)) newest = record;
  }
  return newest;
}

}  // namespace cairn
