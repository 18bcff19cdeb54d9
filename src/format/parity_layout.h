// The bytes of a redundancy parity file, `rNNNNNN.parity`: a header that
// describes the whole group (every member's rank, node, part size, the
// CRC32Cs of its part and of its parity, block by block), then the parity
// rows this member stores. Every member's header carries the whole table, so
// that a member that lost everything gets it back from any survivor and
// can check what is rebuilt. docs/format.md "Parity file" is the reference;
// what the parity is and how it is made is redundancy/group_codec.h.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_PARITY_LAYOUT_H_
#define CAIRN_FORMAT_PARITY_LAYOUT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace cairn {

inline constexpr char kParityMagic[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'A', 'R'};
inline constexpr uint16_t kParityFormatVersion = 1;
// Bytes of the fixed fields before the member table.
inline constexpr uint64_t kParityFixedHeaderSize = 48;
// GF(2^8) codes have at most 256 symbols per codeword: a group of more
// members could not be a Reed-Solomon stripe.
inline constexpr uint32_t kMaxParityMembers = 255;

// Stored values: never renumber.
enum class ParityScheme : uint8_t { kPartner = 1, kXor = 2, kRs = 3 };
const char* ParitySchemeName(ParityScheme scheme);  // "partner", "xor", "rs"

// "r000003.parity"
std::string ParityFileName(int rank);

struct ParityMember {
  uint32_t rank = 0;        // in the job's communicator
  uint32_t node = 0;        // (virtual) node at encode time
  uint64_t part_size = 0;   // bytes of its part, unpadded
  std::vector<uint32_t> part_crcs;    // CRC32C of each block of its part
  std::vector<uint32_t> parity_crcs;  // of each block of each of its parity rows, row-major
};

struct ParityHeader {
  ParityScheme scheme = ParityScheme::kXor;
  uint32_t parity_rows = 1;  // rows this (and every) member stores
  uint32_t group = 0;        // the group's number in the job
  uint32_t index = 0;        // this file's member: members[index]
  int64_t version = 0;       // the checkpoint version the parity protects
  uint64_t chunk_size = 0;   // bytes per parity row
  uint32_t block_size = 0;   // bytes per CRC32C block (format/layout.h kBlockSize)
  std::vector<ParityMember> members;

  uint64_t RowBlocks() const { return BlocksOf(chunk_size); }
  uint64_t BlocksOf(uint64_t bytes) const {
    return bytes / block_size + (bytes % block_size != 0 ? 1 : 0);
  }
  uint64_t RowsBytes() const { return parity_rows * chunk_size; }
};

// The header, its CRC32C last. REQUIRES: every member's CRC lists have the
// lengths BlocksOf(part_size) and parity_rows * RowBlocks().
std::string EncodeParityHeader(const ParityHeader& header);

// Decodes the header at the start of `bytes` (the file, or at least its
// header) and sets *header_bytes to its length: the rows follow. kCorrupt
// naming origin (the file's path) if it is short, fails its CRC, or
// disagrees with itself (magic, version, scheme, rows, members, index,
// block size, reserved bytes).
Result<ParityHeader> DecodeParityHeader(std::string_view bytes, const std::string& origin,
                                        uint64_t* header_bytes);

// CRC32C of each block_size block of bytes (the last may be shorter).
std::vector<uint32_t> BlockCrcs(std::span<const uint8_t> bytes, uint32_t block_size);
// The first block of bytes whose CRC32C differs from crcs, or -1 when all
// match. REQUIRES: crcs.size() == number of blocks of bytes.
int64_t FirstBadBlock(std::span<const uint8_t> bytes, uint32_t block_size,
                      const std::vector<uint32_t>& crcs);

}  // namespace cairn

#endif  // CAIRN_FORMAT_PARITY_LAYOUT_H_
