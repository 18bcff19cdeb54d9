// Software chipkill for the memory tier: a parity sidecar `rNNNNNN.part.ecc`
// next to a memory-tier part file (docs/format.md "ECC sidecar").
//
// The part file is cut into stripes of k data shards of kEccShardSize bytes
// (the last stripe padded with zeros, conceptually: the padding is never
// stored); the sidecar holds, per stripe, the m parity shards of the paper's
// code laid out across shards (RsCode: byte i of every shard is codeword i)
// and a CRC32C of every data and parity shard. One corrupted shard is thus
// one symbol per codeword, as one failed DRAM chip is:
//   - shards whose CRC32C mismatches are erasures, up to m rebuilt per stripe
//     (RsCode::Rebuild, ISA-L erasure decoding);
//   - with no CRC mismatch, the syndromes (RsCode::Correct) still locate and
//     correct a single bad shard whose CRC happens to match;
//   - anything else is uncorrectable: the copy is discarded and the caller
//     uses the next tier's copy.
// The part file format is unchanged; the sidecar is listed in the manifest
// as a FileKind::kParity entry with its own block CRCs.
//
// Repair works on a private buffer, never in place: the tier file stays as
// it was (a drain or another reader running at the same time never sees a
// half-repaired file, and a repair that goes wrong cannot make a copy worse),
// and the damaged path is rare enough that the extra memory is acceptable.
// Thread-safety: free functions; RsCode objects are immutable.
#ifndef CAIRN_RUNTIME_ECC_SIDECAR_H_
#define CAIRN_RUNTIME_ECC_SIDECAR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "codec/rs_code.h"
#include "format/manifest.h"
#include "format/part.h"
#include "runtime/part_io.h"
#include "storage/tier.h"

namespace cairn {

inline constexpr char kEccMagic[8] = {'C', 'A', 'I', 'R', 'N', 'E', 'C', 'C'};
// One shard: a page, so that a zeroed or lost page costs one symbol per
// codeword; divides kRegionAlign, so a shard never straddles two regions.
inline constexpr uint32_t kEccShardSize = 4096;
inline constexpr uint32_t kEccHeaderSize = 40;

// "r000003.part.ecc"
std::string EccSidecarName(int rank);

// The code of an ecc mode: RS(36,32) for normal, RS(19,16) for strong;
// nullopt for none.
std::optional<RsCodeId> EccCodeFor(EccMode mode);

// Writes and commits the sidecar of the part file that `header` and
// `regions` describe (WritePart's input), reading the data straight from
// application memory; returns its manifest entry (kind kParity, one extent).
// REQUIRES: EccCodeFor(mode).has_value().
Result<FileEntry> WriteEccSidecar(Tier& tier, const PartHeader& header,
                                  const std::vector<Region>& regions, EccMode mode);

// The manifest's kParity entry, or null.
const FileEntry* FindParityEntry(const Manifest& manifest);

// As CheckCopy, but the part file may have the wrong size (a truncated part
// can still be rebuilt): for the repair path only. The manifest must list a
// sidecar, and every file but the part must be present with its size.
Result<Manifest> CheckCopyForRepair(const Tier& tier, const std::string& name, int64_t version,
                                    int rank, int nranks);

struct RepairedPart {
  std::vector<uint8_t> bytes;     // the part file, exactly entry.size bytes
  uint64_t shards_corrected = 0;  // (stripe, shard) pairs repaired
  uint64_t stripes_repaired = 0;
};

// Reads the part file `part` and its sidecar `parity` from tier and repairs
// the part in a private buffer, stripe by stripe. Succeeds only if every
// block CRC of `part` matches afterwards (so a repaired part is bit-exact);
// kCorrupt naming the first uncorrectable stripe otherwise.
Result<RepairedPart> RepairPart(const Tier& tier, const std::string& name, int64_t version,
                                const FileEntry& part, const FileEntry& parity);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_ECC_SIDECAR_H_
