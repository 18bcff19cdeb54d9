// Encoding and rebuild of the parts of a redundancy group over Comm: the
// data moves between the members' ranks (MPI point to point), never through
// a shared directory. Encode turns every member's part into the parity rows
// it must store (StripeLayout, groups.h): partner a copy of a neighbour's
// part, xor one row of XOR parity (ISA-L xor_gen), rs `parity` rows of
// Reed-Solomon parity (ISA-L ec_encode_data_update over a Cauchy matrix).
// Parts of different sizes are padded to the group's largest. Rebuild
// recomputes the parts and parity rows members lost, from the survivors,
// and checks each rebuilt part block by block against the CRC32Cs recorded
// at encode time before handing it back. docs/redundancy.md has the costs.
// Thread-safety: the calls are collective over the comm and use it; call
// them from the comm's thread.
#ifndef CAIRN_REDUNDANCY_GROUP_CODEC_H_
#define CAIRN_REDUNDANCY_GROUP_CODEC_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"
#include "format/parity_layout.h"
#include "redundancy/combiner.h"
#include "redundancy/groups.h"

namespace cairn {

// What one member stores: the header (format/parity_layout.h) and its
// parity rows, row p at p * header.chunk_size.
struct GroupParity {
  ParityHeader header;
  AlignedBuffer rows;

  std::span<const uint8_t> Row(uint32_t p) const {
    return rows.span().subspan(p * header.chunk_size, header.chunk_size);
  }
};

// Pieces and parity rows move in slices of this many bytes, in the encode
// and in the rebuild (a multiple of kCombineAlign and of the CRC32C block,
// so that per-slice block CRC32Cs add up to a row's): large enough that the
// per-message cost vanishes, small enough that a slice stays in cache
// between its arrival, its combine and its departure, and that the ranks of
// a ring overlap one another's combining with their transfers. 2 MiB: at 4
// ranks x 64 MiB on 2 cores, interleaved runs put rs at 0.93-1.13 x its
// baseline with 2 MiB, 1.06-1.27 with 4 MiB and 1.18-1.33 with 16 MiB.
inline constexpr uint64_t kSliceBytes = uint64_t{2} << 20;

// Encodes versions one after another, keeping its working buffers (and
// the caller's parity rows) from one version to the next, so that their
// pages are faulted in once, as the memory tier keeps its slots. The ring
// moves and combines the pieces slice by slice (kSliceBytes): a slice
// is combined, passed on and checksummed while it is still in cache, and
// only a slice that crosses the end of the part is copied.
class GroupEncoder {
 public:
  // comm and plan must outlive the encoder. REQUIRES: plan formed for
  // comm's topology with settings.
  GroupEncoder(Comm* comm, const GroupPlan* plan, const RedundancySettings& settings)
      : comm_(comm), plan_(plan), settings_(settings) {}

  // Collective over comm (every rank is in a group of plan). Encodes this
  // rank's part for checkpoint `version` into *out, reusing out->rows when
  // it has the size needed. kComm if a transfer fails; the same error on
  // every rank is not guaranteed (the caller agrees, Comm::Agree).
  // REQUIRES: part stays valid during the call.
  Status Encode(int64_t version, std::span<const uint8_t> part, GroupParity* out);

 private:
  // The ring; fills out_rows (row-major) and the block CRC32Cs of each
  // stored row, row after row, into row_crcs.
  Status EncodeRing(std::span<const uint8_t> part, uint64_t chunk, AlignedBuffer& out_rows,
                    std::vector<uint32_t>* row_crcs);

  Comm* comm_;
  const GroupPlan* plan_;
  RedundancySettings settings_;
  // The partial parity arriving from the left and the one passed right
  // swap roles at every step, stored slice-major (the rows of slice s side
  // by side, so that one message carries them); the scratches hold a padded
  // slice of the part: one being combined, one being sent.
  AlignedBuffer partial_[2];
  AlignedBuffer scratch_[2];
};

// A one-off GroupEncoder::Encode, for callers that encode once.
Result<GroupParity> EncodeGroupParity(Comm& comm, const GroupPlan& plan,
                                      const RedundancySettings& settings, int64_t version,
                                      std::span<const uint8_t> part);

// What a rank still holds of a version: its part (nullopt: lost) and its
// parity (null: lost). Both are checked before use: the part against the
// CRC32Cs of the group's header, the parity against its own.
struct LocalCopy {
  std::optional<std::span<const uint8_t>> part;
  const GroupParity* parity = nullptr;
};

struct RebuildOutcome {
  std::optional<std::vector<uint8_t>> part;  // this rank's part, when rebuilt
  std::optional<GroupParity> parity;          // this rank's parity, when rebuilt
  int parts_rebuilt = 0;                      // in the whole job
  int parities_rebuilt = 0;                   // in the whole job
};

// Collective over comm. Rebuilds every lost or corrupt part and parity of
// `version` from the group's survivors; the outcome holds this rank's share.
// Errors, the same on every rank: kCorrupt naming the groups, lost ranks
// and nodes when a group lost more than its scheme survives (and what it
// survives), when no member of a group that lost a part has a valid
// header, or when members' headers disagree; kMismatch when the parity was
// written by other groups or another scheme; kComm if a transfer fails.
// A rebuilt part that fails its CRC32C is kCorrupt: wrong bytes are never
// returned.
Result<RebuildOutcome> RebuildGroupParts(Comm& comm, const GroupPlan& plan,
                                         const RedundancySettings& settings, int64_t version,
                                         const LocalCopy& local);

}  // namespace cairn

#endif  // CAIRN_REDUNDANCY_GROUP_CODEC_H_
