// The file a versioned array drains one rank's partition of one version
// into (varray/version_drain.h; docs/format.md "Drained versions of a
// versioned array"): a 48-byte header of six little-endian u64 fields —
// magic, lineage, version, rank, the partition's byte count, its CRC32C in
// the low 32 bits — then the partition's bytes.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_DRAINED_VERSION_H_
#define CAIRN_FORMAT_DRAINED_VERSION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

inline constexpr uint64_t kDrainedMagic = 0x31444152524156ull;
inline constexpr uint64_t kDrainedHeaderBytes = 48;

struct DrainedHeader {
  uint64_t lineage = 0;  // the array's random identity (its log keeps it)
  int64_t version = 0;
  int32_t rank = 0;
  uint64_t bytes = 0;  // of the partition, after the header
  uint32_t crc = 0;    // CRC32C of those bytes
};

// Exactly kDrainedHeaderBytes long.
std::string EncodeDrainedHeader(const DrainedHeader& header);

// Decodes the first kDrainedHeaderBytes of a file of `file_size` bytes.
// kCorrupt naming `origin` if `head` is shorter, the magic is not a
// drained version's, the version or rank is out of range, or the byte
// count is not what follows the header in the file. The lineage, version
// and rank are the caller's to compare.
Result<DrainedHeader> DecodeDrainedHeader(std::string_view head, uint64_t file_size,
                                          const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_FORMAT_DRAINED_VERSION_H_
