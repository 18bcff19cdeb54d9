#include "format/part.h"

#include <algorithm>
#include <cstring>

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {
namespace {

constexpr uint64_t kFixedBytes = 8 + 4 + 4;      // magic, format version, header size
constexpr uint64_t kIdentityBytes = 8 + 4 + 4 + 4 + 2;  // version, rank, nranks, R, name length
constexpr uint64_t kRegionBytes = 4 + 8 + 8 + 8;  // id, elem_size, count, offset

// Format 2 gives the name a field of kMaxNameLength bytes whatever its
// length; format 1 a field exactly as long as the name.
uint64_t NameFieldBytes(uint32_t format, const std::string& name) {
  return format == 1 ? name.size() : kMaxNameLength;
}

bool AllZero(const std::string& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

}  // namespace

uint64_t PartHeader::HeaderBytes() const {
  return kFixedBytes + kIdentityBytes + NameFieldBytes(format, name) +
         regions.size() * kRegionBytes + 4;
}

uint64_t PartHeader::Layout() {
  format = kPartFormatVersion;
  // Small regions first, right after the header, so that no large region
  // waits behind a page of padding for a small one before it.
  uint64_t end = HeaderBytes();
  for (auto& r : regions) {
    if (r.bytes() >= kAlignedRegionMinBytes) continue;
    r.offset = AlignUp(end, kPackedRegionAlign);
    end = r.offset + r.bytes();
  }
  for (auto& r : regions) {
    if (r.bytes() < kAlignedRegionMinBytes) continue;
    r.offset = AlignUp(end, kRegionAlign);
    end = r.offset + r.bytes();
  }
  return FileSize();
}

uint64_t PartHeader::FileSize() const {
  uint64_t end = HeaderBytes();
  for (const auto& r : regions) end = std::max(end, r.offset + r.bytes());
  return end;
}

std::string PartHeader::Encode() const {
  ByteWriter w;
  w.Bytes(std::string_view(kPartMagic, 8));
  w.U32(format);
  w.U32(static_cast<uint32_t>(HeaderBytes()));
  w.I64(version);
  w.U32(static_cast<uint32_t>(rank));
  w.U32(static_cast<uint32_t>(nranks));
  w.U32(static_cast<uint32_t>(regions.size()));
  w.String16(name);
  w.Bytes(std::string(NameFieldBytes(format, name) - name.size(), '\0'));
  for (const auto& r : regions) {
    w.U32(static_cast<uint32_t>(r.id));
    w.U64(r.elem_size);
    w.U64(r.count);
    w.U64(r.offset);
  }
  w.U32(Crc32c(w.data().data(), w.data().size()));
  return std::move(w.data());
}

Result<uint64_t> PartHeaderSize(const std::string& first16, const std::string& origin) {
  ByteReader r(first16);
  std::string magic = r.Bytes(8);
  uint32_t format = r.U32();
  uint32_t size = r.U32();
  if (!r.ok() || std::memcmp(magic.data(), kPartMagic, 8) != 0) {
    return Error(Code::kCorrupt, "'{}' is not a Cairn part file (bad magic)", origin);
  }
  if (format < kOldestPartFormatVersion || format > kPartFormatVersion) {
    return Error(Code::kCorrupt, "'{}' has part format version {}, this Cairn reads {} to {}",
                 origin, format, kOldestPartFormatVersion, kPartFormatVersion);
  }
  if (size < kFixedBytes || size > kMaxPartHeaderBytes) {
    return Error(Code::kCorrupt, "'{}' has an impossible header size {}", origin, size);
  }
  return uint64_t{size};
}

Result<PartHeader> DecodePartHeader(const std::string& prefix, const std::string& origin) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t size, PartHeaderSize(prefix.substr(0, kFixedBytes), origin));
  if (prefix.size() < size) return Error(Code::kCorrupt, "'{}': header is truncated", origin);
  uint32_t stored;
  std::memcpy(&stored, prefix.data() + size - 4, 4);  // little-endian hosts only (x86_64)
  if (Crc32c(prefix.data(), size - 4) != stored) {
    return Error(Code::kCorrupt, "'{}': header checksum mismatch", origin);
  }
  PartHeader h;
  std::memcpy(&h.format, prefix.data() + 8, 4);
  ByteReader r(std::string_view(prefix).substr(kFixedBytes, size - kFixedBytes - 4));
  h.version = r.I64();
  h.rank = static_cast<int32_t>(r.U32());
  h.nranks = static_cast<int32_t>(r.U32());
  uint32_t nregions = r.U32();
  h.name = r.String16();
  if (h.format != 1) {
    // A fixed-width field: the name, then zeros (which the CRC covers, but
    // a header must have one encoding only).
    if (h.name.size() > kMaxNameLength) {
      return Error(Code::kCorrupt, "'{}': name of {} bytes overflows its field", origin,
                   h.name.size());
    }
    if (!AllZero(r.Bytes(kMaxNameLength - h.name.size()))) {
      return Error(Code::kCorrupt, "'{}': bytes after the name are not zero", origin);
    }
  }
  if (!r.ok() || r.remaining() != uint64_t{nregions} * kRegionBytes) {
    return Error(Code::kCorrupt, "'{}': region table does not fit the header", origin);
  }
  for (uint32_t i = 0; i < nregions; ++i) {
    RegionInfo info;
    info.id = static_cast<int32_t>(r.U32());
    info.elem_size = r.U64();
    info.count = r.U64();
    info.offset = r.U64();
    // bytes() and the region's end must be exact: a wrapped size could
    // make a forged table agree with its manifest.
    uint64_t bytes = 0, end = 0;
    if (__builtin_mul_overflow(info.elem_size, info.count, &bytes) ||
        __builtin_add_overflow(info.offset, bytes, &end)) {
      return Error(Code::kCorrupt, "'{}': region {} ({} x {} bytes at {}) overflows", origin,
                   info.id, info.count, info.elem_size, info.offset);
    }
    h.regions.push_back(info);
  }
  return h;
}

}  // namespace cairn
