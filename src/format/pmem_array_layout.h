// The persistent array file (pmem/in_place_array.h; docs/format.md
// "Persistent arrays"): a header page — magic, format version, shape, a
// CRC32C — holding two epoch records, one cache line each, that iterations
// write alternately; then two copies of the array, each padded to whole
// pages. Little-endian.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_PMEM_ARRAY_LAYOUT_H_
#define CAIRN_FORMAT_PMEM_ARRAY_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace cairn {

inline constexpr uint32_t kPmemArrayFormatVersion = 1;
// The header page; copy 0 starts after it.
inline constexpr uint64_t kPmemArrayHeaderBytes = 4096;
// Each copy is padded to whole pages of this size.
inline constexpr uint64_t kPmemArrayPageBytes = 4096;
// Where the two epoch records are in the header page, and their size: one
// cache line each, so that a record is persisted by one line flush.
inline constexpr size_t kEpochRecordOffset[2] = {64, 128};
inline constexpr size_t kEpochRecordBytes = 64;
// Where each CRC32C is: the header's covers the page's bytes before it, a
// record's the record's bytes before it.
inline constexpr size_t kPmemArrayHeaderCrcOffset = 40;
inline constexpr size_t kEpochRecordCrcOffset = 16;

struct PmemArrayShape {
  uint64_t elem_size = 0;
  uint64_t count = 0;
  uint64_t copy_bytes = 0;  // bytes reserved per copy

  // The bytes the file needs: the header page and both copies.
  uint64_t FileBytes() const { return kPmemArrayHeaderBytes + 2 * copy_bytes; }
};

// The shape of an array of `count` elements of `elem_size` bytes; nullopt
// for no elements, elements of no bytes, or copies of 2^62 bytes or more.
std::optional<PmemArrayShape> PmemArrayShapeFor(uint64_t count, uint64_t elem_size);

// Writes the header fields into the first bytes of `page` (which holds
// kPmemArrayHeaderBytes, zeroed by the caller).
void EncodePmemArrayHeader(const PmemArrayShape& shape, uint8_t* page);
// The shape a file of `file_size` bytes whose first bytes are `page`
// (kPmemArrayHeaderBytes of them, or all the file has if shorter) holds.
// kCorrupt naming `origin`: a bad magic or CRC, an unknown format version,
// a shape whose copies are not its elements padded to pages, or a file
// shorter than the header and both copies.
Result<PmemArrayShape> DecodePmemArrayHeader(const uint8_t* page, uint64_t file_size,
                                             const std::string& origin);

// How the iteration of a record was made persistent (informational).
enum class EpochMode : uint32_t { kInPlace = 1, kCopy = 2 };

// Copy `consistent` holds iteration `iteration`.
struct EpochRecord {
  int64_t iteration = 0;
  int consistent = 0;  // 0 or 1
  EpochMode mode = EpochMode::kInPlace;
};

// The cache line of a record (kEpochRecordBytes; CRC32C over its first 16).
void EncodeEpochRecord(const EpochRecord& record, uint8_t* line);
// nullopt for a line that is not a valid record: a torn or never-written
// one (CRC mismatch), or fields out of range.
std::optional<EpochRecord> DecodeEpochRecord(const uint8_t* line);
// The valid record with the highest iteration in a header page; nullopt
// when neither is valid (nothing committed yet).
std::optional<EpochRecord> NewestEpochRecord(const uint8_t* page);

}  // namespace cairn

#endif  // CAIRN_FORMAT_PMEM_ARRAY_LAYOUT_H_
