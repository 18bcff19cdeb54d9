// Software chipkill for the memory tier: a parity sidecar `rNNNNNN.part.ecc`
// next to a memory-tier part file (docs/format.md "ECC sidecar"; its bytes:
// format/ecc_sidecar_layout.h).
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
// Repair never writes the tier file: a drain or another reader running at
// the same time never sees a half-repaired file, and a repair that goes
// wrong cannot make a copy worse. It runs one stripe at a time in a buffer of
// one stripe (k shards) and one sidecar record, checking the part's block
// CRCs as the repaired bytes stream past; only RepairPart, whose caller
// wants the whole part in memory, holds a part-sized buffer (the result).
// Thread-safety: free functions; RsCode locks its own decoder cache.
#ifndef CAIRN_RUNTIME_ECC_SIDECAR_H_
#define CAIRN_RUNTIME_ECC_SIDECAR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "codec/rs_code.h"
#include "format/ecc_sidecar_layout.h"
#include "format/manifest.h"
#include "format/part.h"
#include "runtime/part_io.h"
#include "storage/tier.h"

namespace cairn {

// The code of an ecc mode: RS(36,32) for normal, RS(19,16) for strong;
// nullopt for none.
std::optional<RsCodeId> EccCodeFor(EccMode mode);

// Writes the sidecar of a part file while the part is written: handed to
// WritePart as its observer, it encodes each stripe of k shards as soon as
// the part's bytes for it have been copied (from cache, without a second
// pass over application memory: measured 24.9 -> 15.2 ms per 64 MiB for
// RS(36,32), docs/ecc.md), and appends its record to the sidecar, whose
// file is a parked slot like the part's when one is free.
class EccSidecarWriter final : public PartObserver {
 public:
  // Creates the sidecar file of the part `header` describes.
  // REQUIRES: EccCodeFor(mode).has_value().
  static Result<std::unique_ptr<EccSidecarWriter>> Start(Tier& tier, const PartHeader& header,
                                                         EccMode mode);
  // Creates the sidecar file of rank's part of (name, version), part_size
  // bytes long. REQUIRES: EccCodeFor(mode).has_value().
  static Result<std::unique_ptr<EccSidecarWriter>> Start(Tier& tier, const std::string& name,
                                                         int64_t version, int rank,
                                                         uint64_t part_size, EccMode mode);
  ~EccSidecarWriter() override;
  // The next bytes of the part file, in file order.
  Status Add(const uint8_t* data, uint64_t n) override;
  // Encodes the last stripe (padded with zeros), commits the sidecar and
  // returns its manifest entry (kind kParity, one extent). kInternal if Add
  // saw other than the part's size. Uncommitted, the file is dropped.
  Result<FileEntry> Commit();

 private:
  EccSidecarWriter(RsCode code, const EccGeometry& geometry, std::unique_ptr<PendingFile> pending,
                   FileEntry entry);
  // Encodes one stripe of k shards laid out back to back from `data`.
  Status EncodeStripe(const uint8_t* data);

  RsCode code_;
  EccGeometry geometry_;
  std::unique_ptr<PendingFile> pending_;
  FileEntry entry_;
  ExtentChecksummer sum_{0};          // the sidecar's own block CRCs
  std::vector<uint8_t> stripe_;       // a stripe assembled from pieces
  uint64_t filled_ = 0;               // bytes of stripe_ received
  std::vector<uint8_t> record_;       // parity shards, then shard CRCs
  std::vector<uint8_t*> shards_;      // k data + m parity pointers
  uint64_t seen_ = 0;                 // part bytes received
  uint64_t stripes_written_ = 0;
};

// Writes and commits the sidecar of the part file that `header` and
// `regions` describe (WritePart's input), reading the data from
// application memory; returns its manifest entry. A checkpoint writes the
// sidecar with the part instead (EccSidecarWriter).
// REQUIRES: EccCodeFor(mode).has_value().
Result<FileEntry> WriteEccSidecar(Tier& tier, const PartHeader& header,
                                  const std::vector<Region>& regions, EccMode mode);

// Encodes and commits the sidecar of the committed copy `committed` (its
// manifest, as read from tier) from the part file itself, as the background
// encode does after the commit (docs/ecc.md "What the sidecar costs at
// checkpoint time", item 3):
// the part is read in pieces of a few stripes, each piece checked against
// the part's block CRCs before it is encoded, so parity is never computed
// over bytes that are not the version's. Returns the sidecar's manifest
// entry; the caller lists it in the manifest. kCorrupt naming the part and
// block if the part fails its CRCs (no sidecar is committed then).
// REQUIRES: EccCodeFor(mode).has_value(); the copy is pinned (not deleted
// meanwhile).
Result<FileEntry> EncodeCommittedSidecar(Tier& tier, const Manifest& committed, EccMode mode);

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
// the part stripe by stripe into the returned buffer. Succeeds only if every
// block CRC of `part` matches afterwards (so a repaired part is bit-exact);
// kCorrupt naming the file and the first uncorrectable stripe otherwise.
Result<RepairedPart> RepairPart(const Tier& tier, const std::string& name, int64_t version,
                                const FileEntry& part, const FileEntry& parity);

struct EccRepairCounts {
  uint64_t shards_corrected = 0;  // (stripe, shard) pairs repaired
  uint64_t stripes_repaired = 0;
};

// Receives the repaired part in consecutive pieces, in file order, from
// offset 0 to part.size; a non-OK return stops the repair with that status.
using RepairSink = std::function<Status(uint64_t offset, const uint8_t* data, uint64_t n)>;

// RepairPart without a part-sized buffer: each stripe goes to `sink` as soon
// as it is repaired (a drain appends it to the new copy). A block CRC that
// spans two stripes can only be checked once the second has been repaired,
// so `sink` sees bytes before they are fully checked: unless this returns OK,
// the caller must discard everything `sink` received (an uncommitted
// PendingFile does so by itself).
Result<EccRepairCounts> RepairPartStreaming(const Tier& tier, const std::string& name,
                                            int64_t version, const FileEntry& part,
                                            const FileEntry& parity, const RepairSink& sink);

// What `cairn verify` reports of a damaged part: unlike a repair, the scan
// goes on past an uncorrectable stripe, so it counts all of them.
struct EccScan {
  uint64_t shards_corrected = 0;   // shards the sidecar repairs
  uint64_t stripes_repaired = 0;
  // Shards failing their CRC32C in stripes the code cannot repair. A stripe
  // whose CRCs all match but whose syndromes show more than one bad shard
  // adds to stripes_uncorrectable only: its bad shards cannot be named.
  uint64_t shards_uncorrectable = 0;
  uint64_t stripes_uncorrectable = 0;
  // OK if the repaired part matches every block CRC of its manifest entry;
  // else kCorrupt naming the first uncorrectable stripe or failing block.
  Status status;
};

// Scans the whole part as RepairPart would repair it, holding one stripe.
// An error Result only when the sidecar cannot be used at all (missing,
// wrong size, bad header) or a read fails.
Result<EccScan> ScanPart(const Tier& tier, const std::string& name, int64_t version,
                         const FileEntry& part, const FileEntry& parity);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_ECC_SIDECAR_H_
