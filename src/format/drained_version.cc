#include "format/drained_version.h"

#include <limits>

#include "format/bytes.h"

namespace cairn {

std::string EncodeDrainedHeader(const DrainedHeader& header) {
  ByteWriter w;
  w.U64(kDrainedMagic);
  w.U64(header.lineage);
  w.I64(header.version);
  w.U64(static_cast<uint64_t>(header.rank));
  w.U64(header.bytes);
  w.U64(header.crc);
  return std::move(w.data());
}

Result<DrainedHeader> DecodeDrainedHeader(std::string_view head, uint64_t file_size,
                                          const std::string& origin) {
  if (head.size() < kDrainedHeaderBytes || file_size < kDrainedHeaderBytes) {
    return Error(Code::kCorrupt, "{}: shorter than its {}-byte header", origin,
                 kDrainedHeaderBytes);
  }
  ByteReader r(head);
  const uint64_t magic = r.U64();
  DrainedHeader h;
  h.lineage = r.U64();
  h.version = r.I64();
  const uint64_t rank = r.U64();
  h.bytes = r.U64();
  const uint64_t crc = r.U64();
  if (magic != kDrainedMagic) {
    return Error(Code::kCorrupt, "{}: not a drained varray version (magic {:#x})", origin, magic);
  }
  if (h.version < 0 || rank > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) ||
      crc > std::numeric_limits<uint32_t>::max()) {
    return Error(Code::kCorrupt, "{}: header out of range (version {}, rank {}, CRC {:#x})",
                 origin, h.version, rank, crc);
  }
  if (h.bytes != file_size - kDrainedHeaderBytes) {
    return Error(Code::kCorrupt, "{}: header says {} bytes follow it, the file has {}", origin,
                 h.bytes, file_size - kDrainedHeaderBytes);
  }
  h.rank = static_cast<int32_t>(rank);
  h.crc = static_cast<uint32_t>(crc);
  return h;
}

}  // namespace cairn
