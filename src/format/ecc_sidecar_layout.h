// The bytes of an ECC sidecar, `rNNNNNN.part.ecc`: its header, the stripe
// geometry it describes and the layout of each stripe record (parity shards,
// then per-shard CRC32Cs). docs/format.md "ECC sidecar" is the reference;
// what the sidecar is for, and how a part is repaired from it, is
// runtime/ecc_sidecar.h.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_ECC_SIDECAR_LAYOUT_H_
#define CAIRN_FORMAT_ECC_SIDECAR_LAYOUT_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/status.h"
#include "codec/rs_code.h"

namespace cairn {

inline constexpr char kEccMagic[8] = {'C', 'A', 'I', 'R', 'N', 'E', 'C', 'C'};
// One shard: a page, so that a zeroed or lost page costs one symbol per
// codeword (a shard may hold several small regions packed together).
inline constexpr uint32_t kEccShardSize = 4096;
inline constexpr uint32_t kEccHeaderSize = 40;

// "r000003.part.ecc"
std::string EccSidecarName(int rank);

// What a sidecar's header says: the code, and the stripes of k data shards
// of kEccShardSize bytes that cut the part file (the last one padded with
// zeros, conceptually).
struct EccGeometry {
  RsCodeId code = RsCodeId::kRs36_32;
  int k = 0;
  int m = 0;
  uint64_t part_size = 0;
  uint64_t stripes = 0;

  // A stripe record: m parity shards, then k + m CRC32Cs.
  uint64_t RecordBytes() const {
    return static_cast<uint64_t>(m) * kEccShardSize + 4ull * static_cast<uint64_t>(k + m);
  }
  uint64_t RecordOffset(uint64_t stripe) const { return kEccHeaderSize + stripe * RecordBytes(); }
  uint64_t FileSize() const { return RecordOffset(stripes); }
  // Where stripe s's data shards start in the part file.
  uint64_t StripeBegin(uint64_t stripe) const {
    return stripe * static_cast<uint64_t>(k) * kEccShardSize;
  }
  // Parity shard p (0..m-1) inside a record.
  uint64_t ParityOffset(int p) const { return static_cast<uint64_t>(p) * kEccShardSize; }
  // The CRC32C of shard j inside a record: data shards 0..k-1, then parity
  // shards k..k+m-1. Little-endian hosts only, as format/bytes.h.
  uint32_t ShardCrc(const uint8_t* record, int j) const {
    uint32_t crc;
    std::memcpy(&crc, record + CrcOffset(j), sizeof crc);
    return crc;
  }
  void SetShardCrc(uint8_t* record, int j, uint32_t crc) const {
    std::memcpy(record + CrcOffset(j), &crc, sizeof crc);
  }

 private:
  uint64_t CrcOffset(int j) const {
    return static_cast<uint64_t>(m) * kEccShardSize + 4ull * static_cast<uint64_t>(j);
  }
};

// The geometry of a sidecar for a part file of part_size bytes.
EccGeometry EccGeometryFor(const RsCode& code, uint64_t part_size);

std::string EncodeEccHeader(const EccGeometry& geometry);
// kCorrupt naming origin (the sidecar's path) if the header is short, fails
// its CRC, or disagrees with itself (magic, version, code, k, m, shard size,
// stripe count).
Result<EccGeometry> DecodeEccHeader(std::string_view bytes, const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_FORMAT_ECC_SIDECAR_LAYOUT_H_
