#include "format/part.h"

#include <cstring>

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {
namespace {

constexpr uint64_t kFixedBytes = 8 + 4 + 4;      // magic, format version, header size
constexpr uint64_t kRegionBytes = 4 + 8 + 8 + 8;  // id, elem_size, count, offset
constexpr uint64_t kMaxHeaderBytes = 64ULL << 20;

}  // namespace

uint64_t PartHeader::HeaderBytes() const {
  return kFixedBytes + 8 + 4 + 4 + 4 + 2 + name.size() + regions.size() * kRegionBytes + 4;
}

uint64_t PartHeader::Layout() {
  uint64_t offset = AlignUp(HeaderBytes(), kRegionAlign);
  for (auto& r : regions) {
    r.offset = offset;
    offset = AlignUp(offset + r.bytes(), kRegionAlign);
  }
  return FileSize();
}

uint64_t PartHeader::FileSize() const {
  if (regions.empty()) return HeaderBytes();
  const RegionInfo& last = regions.back();
  return last.offset + last.bytes();
}

std::string PartHeader::Encode() const {
  ByteWriter w;
  w.Bytes(std::string_view(kPartMagic, 8));
  w.U32(kFormatVersion);
  w.U32(static_cast<uint32_t>(HeaderBytes()));
  w.I64(version);
  w.U32(static_cast<uint32_t>(rank));
  w.U32(static_cast<uint32_t>(nranks));
  w.U32(static_cast<uint32_t>(regions.size()));
  w.String16(name);
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
  if (format != kFormatVersion) {
    return Error(Code::kCorrupt, "'{}' has format version {}, this Cairn reads {}", origin, format,
                 kFormatVersion);
  }
  if (size < kFixedBytes || size > kMaxHeaderBytes) {
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
  ByteReader r(std::string_view(prefix).substr(kFixedBytes, size - kFixedBytes - 4));
  PartHeader h;
  h.version = r.I64();
  h.rank = static_cast<int32_t>(r.U32());
  h.nranks = static_cast<int32_t>(r.U32());
  uint32_t nregions = r.U32();
  h.name = r.String16();
  if (!r.ok() || r.remaining() != uint64_t{nregions} * kRegionBytes) {
    return Error(Code::kCorrupt, "'{}': region table does not fit the header", origin);
  }
  for (uint32_t i = 0; i < nregions; ++i) {
    RegionInfo info;
    info.id = static_cast<int32_t>(r.U32());
    info.elem_size = r.U64();
    info.count = r.U64();
    info.offset = r.U64();
    h.regions.push_back(info);
  }
  return h;
}

}  // namespace cairn
