#include "format/parity_layout.h"

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {
namespace {

// Largest CRC block a header may claim; anything larger is not ours.
constexpr uint32_t kMaxParityBlockSize = 1u << 24;

Status Corrupt(const std::string& origin, const std::string& why) {
  return Error(Code::kCorrupt, "parity file '{}': {}", origin, why);
}

// The fixed fields' checks, before any length is trusted.
Status CheckFixedFields(const ParityHeader& h, uint32_t members, uint32_t reserved,
                        const std::string& origin) {
  const auto scheme = static_cast<uint8_t>(h.scheme);
  if (scheme < 1 || scheme > 3) return Corrupt(origin, fmt::format("unknown scheme {}", scheme));
  if (members < 2 || members > kMaxParityMembers) {
    return Corrupt(origin, fmt::format("{} members (2 to {})", members, kMaxParityMembers));
  }
  if (h.index >= members) {
    return Corrupt(origin, fmt::format("member {} of a group of {}", h.index, members));
  }
  const bool single_row = h.scheme != ParityScheme::kRs;
  if (h.parity_rows < 1 || h.parity_rows >= members || (single_row && h.parity_rows != 1)) {
    return Corrupt(origin, fmt::format("{} parity rows for {} with {} members", h.parity_rows,
                                       ParitySchemeName(h.scheme), members));
  }
  if (h.block_size == 0 || h.block_size > kMaxParityBlockSize) {
    return Corrupt(origin, fmt::format("block size {}", h.block_size));
  }
  if (reserved != 0) return Corrupt(origin, "reserved bytes are not zero");
  return Status::Ok();
}

// Reads `count` CRCs, refusing counts the remaining bytes cannot hold
// (so that a forged count never allocates more than the file).
bool ReadCrcs(ByteReader& in, uint64_t count, std::vector<uint32_t>* out) {
  if (count > in.remaining() / 4) return false;
  out->resize(static_cast<size_t>(count));
  for (auto& crc : *out) crc = in.U32();
  return in.ok();
}

}  // namespace

const char* ParitySchemeName(ParityScheme scheme) {
  switch (scheme) {
    case ParityScheme::kPartner: return "partner";
    case ParityScheme::kXor: return "xor";
    case ParityScheme::kRs: return "rs";
  }
  return "?";
}

std::string ParityFileName(int rank) { return RankFilePrefix(rank) + "parity"; }

std::string EncodeParityHeader(const ParityHeader& h) {
  ByteWriter out;
  out.Bytes(std::string_view(kParityMagic, sizeof kParityMagic));
  out.U16(kParityFormatVersion);
  out.U8(static_cast<uint8_t>(h.scheme));
  out.U8(static_cast<uint8_t>(h.parity_rows));
  out.U32(h.group);
  out.U32(h.index);
  out.U32(static_cast<uint32_t>(h.members.size()));
  out.U32(h.block_size);
  out.U32(0);  // reserved
  out.I64(h.version);
  out.U64(h.chunk_size);
  for (const ParityMember& m : h.members) {
    out.U32(m.rank);
    out.U32(m.node);
    out.U64(m.part_size);
  }
  for (const ParityMember& m : h.members) {
    for (uint32_t crc : m.part_crcs) out.U32(crc);
  }
  for (const ParityMember& m : h.members) {
    for (uint32_t crc : m.parity_crcs) out.U32(crc);
  }
  out.U32(Crc32c(out.data().data(), out.data().size()));
  return std::move(out.data());
}

Result<ParityHeader> DecodeParityHeader(std::string_view bytes, const std::string& origin,
                                        uint64_t* header_bytes) {
  ByteReader in(bytes);
  ParityHeader h;
  if (in.Bytes(sizeof kParityMagic) != std::string_view(kParityMagic, sizeof kParityMagic)) {
    return Corrupt(origin, in.ok() ? "bad magic" : "truncated header");
  }
  const uint16_t version = in.U16();
  h.scheme = static_cast<ParityScheme>(in.U8());
  h.parity_rows = in.U8();
  h.group = in.U32();
  h.index = in.U32();
  const uint32_t members = in.U32();
  h.block_size = in.U32();
  const uint32_t reserved = in.U32();
  h.version = in.I64();
  h.chunk_size = in.U64();
  if (!in.ok()) return Corrupt(origin, "truncated header");
  if (version != kParityFormatVersion) {
    return Corrupt(origin, fmt::format("format version {} (this build reads {})", version,
                                       kParityFormatVersion));
  }
  CAIRN_RETURN_IF_ERROR(CheckFixedFields(h, members, reserved, origin));
  h.members.resize(members);
  for (ParityMember& m : h.members) {
    m.rank = in.U32();
    m.node = in.U32();
    m.part_size = in.U64();
  }
  for (ParityMember& m : h.members) {
    if (!ReadCrcs(in, h.BlocksOf(m.part_size), &m.part_crcs)) {
      return Corrupt(origin, "truncated header");
    }
  }
  const uint64_t parity_crcs = h.RowBlocks();
  for (ParityMember& m : h.members) {
    if (parity_crcs > in.remaining() / 4 / h.parity_rows ||
        !ReadCrcs(in, h.parity_rows * parity_crcs, &m.parity_crcs)) {
      return Corrupt(origin, "truncated header");
    }
  }
  const size_t covered = in.position();
  const uint32_t stored = in.U32();
  if (!in.ok()) return Corrupt(origin, "truncated header");
  if (Crc32c(bytes.data(), covered) != stored) return Corrupt(origin, "header fails its CRC32C");
  *header_bytes = in.position();
  return h;
}

std::vector<uint32_t> BlockCrcs(std::span<const uint8_t> bytes, uint32_t block_size) {
  std::vector<uint32_t> crcs;
  crcs.reserve(bytes.size() / block_size + 1);
  for (size_t off = 0; off < bytes.size(); off += block_size) {
    crcs.push_back(Crc32c(bytes.data() + off, std::min<size_t>(block_size, bytes.size() - off)));
  }
  return crcs;
}

int64_t FirstBadBlock(std::span<const uint8_t> bytes, uint32_t block_size,
                      const std::vector<uint32_t>& crcs) {
  size_t block = 0;
  for (size_t off = 0; off < bytes.size(); off += block_size, ++block) {
    const size_t n = std::min<size_t>(block_size, bytes.size() - off);
    if (block >= crcs.size() || Crc32c(bytes.data() + off, n) != crcs[block]) {
      return static_cast<int64_t>(block);
    }
  }
  return block == crcs.size() ? -1 : static_cast<int64_t>(block);
}

}  // namespace cairn
