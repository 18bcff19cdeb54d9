#include "format/ecc_sidecar_layout.h"

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {

std::string EccSidecarName(int rank) { return PartFileName(rank) + ".ecc"; }

EccGeometry EccGeometryFor(const RsCode& code, uint64_t part_size) {
  EccGeometry g;
  g.code = code.id();
  g.k = code.k();
  g.m = code.m();
  g.part_size = part_size;
  const uint64_t stripe_bytes = static_cast<uint64_t>(g.k) * kEccShardSize;
  // Not (part_size + stripe_bytes - 1) / stripe_bytes: a part_size read
  // from a damaged header may be near 2^64 and wrap that sum.
  g.stripes = part_size / stripe_bytes + (part_size % stripe_bytes != 0 ? 1 : 0);
  return g;
}

std::string EncodeEccHeader(const EccGeometry& g) {
  ByteWriter w;
  w.Bytes(std::string_view(kEccMagic, 8));
  w.U32(kFormatVersion);
  w.U8(static_cast<uint8_t>(g.code));
  w.U8(static_cast<uint8_t>(g.k));
  w.U8(static_cast<uint8_t>(g.m));
  w.U8(0);
  w.U32(kEccShardSize);
  w.U64(g.part_size);
  w.U64(g.stripes);
  w.U32(Crc32c(w.data().data(), w.data().size()));
  return std::move(w.data());
}

Result<EccGeometry> DecodeEccHeader(std::string_view bytes, const std::string& origin) {
  auto corrupt = [&](const char* why) {
    return Error(Code::kCorrupt, "ECC sidecar '{}': {}", origin, why);
  };
  if (bytes.size() < kEccHeaderSize) return corrupt("truncated header");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + kEccHeaderSize - 4, 4);
  if (Crc32c(bytes.data(), kEccHeaderSize - 4) != stored) return corrupt("header checksum mismatch");
  ByteReader r(bytes.substr(0, kEccHeaderSize - 4));
  if (r.Bytes(8) != std::string(kEccMagic, 8)) return corrupt("bad magic");
  if (r.U32() != kFormatVersion) return corrupt("unknown format version");
  EccGeometry g;
  uint8_t code = r.U8();
  if (code != static_cast<uint8_t>(RsCodeId::kRs36_32) &&
      code != static_cast<uint8_t>(RsCodeId::kRs19_16)) {
    return corrupt("unknown code");
  }
  g.code = static_cast<RsCodeId>(code);
  g.k = r.U8();
  g.m = r.U8();
  // Written as zero: a header has one encoding only.
  if (r.U8() != 0) return corrupt("reserved byte is not zero");
  uint32_t shard = r.U32();
  g.part_size = r.U64();
  g.stripes = r.U64();
  if (!r.ok()) return corrupt("truncated header");
  RsCode rs(g.code);
  if (g.k != rs.k() || g.m != rs.m() || shard != kEccShardSize) return corrupt("bad geometry");
  if (g.stripes != EccGeometryFor(rs, g.part_size).stripes) return corrupt("bad stripe count");
  return g;
}

}  // namespace cairn
