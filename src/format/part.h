// The part file: one rank's protected regions for one version. A header
// (magic, format version, identity, region table) is followed by the
// regions' bytes: regions of at least kAlignedRegionMinBytes start at a
// kRegionAlign (4 KiB) boundary, smaller ones are packed after the header
// at kPackedRegionAlign. The header carries its own CRC32C so it can be
// trusted before the manifest's block CRCs are checked. docs/format.md
// "Part file" documents every byte.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_PART_H_
#define CAIRN_FORMAT_PART_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

inline constexpr char kPartMagic[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'R', 'T'};

// Version 2 is written. Version 1 (every region 4 KiB-aligned, the name
// field as long as the name) is still read: its region table gives every
// offset, so a reader needs to know only the header's encoding.
inline constexpr uint32_t kPartFormatVersion = 2;
inline constexpr uint32_t kOldestPartFormatVersion = 1;
// Large regions are page-aligned: a region the size of pages is copied at
// memcpy speed into page-aligned slots and written with O_DIRECT. For a
// smaller one that alignment buys nothing and costs up to 4 KiB of padding
// (five scalars took 20 KiB in format 1), so it is packed at 8 bytes.
inline constexpr uint64_t kAlignedRegionMinBytes = 64 * 1024;
inline constexpr uint64_t kPackedRegionAlign = 8;
// No header is longer (about 2.4 million regions): a reader refuses a longer
// one before it allocates for it, whatever a manifest says.
inline constexpr uint64_t kMaxPartHeaderBytes = 64ULL << 20;

struct RegionInfo {
  int32_t id = 0;
  uint64_t elem_size = 0;
  uint64_t count = 0;
  uint64_t offset = 0;  // of its first byte in the part file
  uint64_t bytes() const { return elem_size * count; }
};

struct PartHeader {
  uint32_t format = kPartFormatVersion;  // as read; Layout() sets the current one
  std::string name;
  int64_t version = 0;
  int32_t rank = 0;
  int32_t nranks = 0;
  std::vector<RegionInfo> regions;  // sorted by id

  // Lays the regions out in the current format: fills in regions[i].offset
  // and returns the file size. In format 2 the size depends only on the
  // regions (the name field has a fixed width), so the memory tier can
  // reserve a part's slot before the checkpoint's name is known.
  uint64_t Layout();
  // Exactly HeaderBytes() long, in `format`. REQUIRES: name.size() <=
  // kMaxNameLength (ValidateName).
  std::string Encode() const;
  uint64_t HeaderBytes() const;
  // Where the file ends: past the region that ends last, or the header.
  uint64_t FileSize() const;
};

// Parses the header at the start of `prefix` (which must hold at least the
// whole header; PartHeaderSize tells how much that is). kCorrupt for a
// region whose size (elem_size x count) or end overflows 64 bits.
Result<PartHeader> DecodePartHeader(const std::string& prefix, const std::string& origin);
// Bytes needed to decode the header, read from the first 16 bytes.
Result<uint64_t> PartHeaderSize(const std::string& first16, const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_FORMAT_PART_H_
