// The part file: one rank's protected regions for one version. A header
// (magic, format version, identity, region table) is followed by each
// region's bytes at a kRegionAlign-aligned offset. The header carries its own
// CRC32C so it can be trusted before the manifest's block CRCs are checked.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_PART_H_
#define CAIRN_FORMAT_PART_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

inline constexpr char kPartMagic[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'R', 'T'};

struct RegionInfo {
  int32_t id = 0;
  uint64_t elem_size = 0;
  uint64_t count = 0;
  uint64_t offset = 0;  // of its first byte in the part file
  uint64_t bytes() const { return elem_size * count; }
};

struct PartHeader {
  std::string name;
  int64_t version = 0;
  int32_t rank = 0;
  int32_t nranks = 0;
  std::vector<RegionInfo> regions;

  // Fills in regions[i].offset and returns the file size they imply.
  uint64_t Layout();
  std::string Encode() const;  // exactly HeaderBytes() long
  uint64_t HeaderBytes() const;
  uint64_t FileSize() const;
};

// Parses the header at the start of `prefix` (which must hold at least the
// whole header; PartHeaderSize tells how much that is).
Result<PartHeader> DecodePartHeader(const std::string& prefix, const std::string& origin);
// Bytes needed to decode the header, read from the first 16 bytes.
Result<uint64_t> PartHeaderSize(const std::string& first16, const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_FORMAT_PART_H_
