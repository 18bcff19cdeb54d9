// Cross-node redundancy in the engine (docs/redundancy.md "Engine
// integration"): after a version commits on a node-local tier, the
// redundancy groups encode it and each member commits its parity file
// beside its copy; before a restart, what lost nodes held is rebuilt from
// the survivors and written back to the lost ranks' node-local tier.
//
// What is protected is a copy's *payload*: its part and routed files, in
// manifest order, then its manifest as it was committed (without the
// redundancy record), then that manifest's length (docs/format.md
// "Redundancy payload"). So a rank that lost everything gets its whole copy
// back, manifest included, and every file is checked against the CRC32Cs of
// that manifest before it is written.
//
// Thread-safety: ProtectVersion runs on one thread at a time (the flusher's,
// or the application's with redundancy.sync or without MPI_THREAD_MULTIPLE)
// over encode_comm(); RebuildVersion on the application thread over the
// job's comm. Tiers are thread-safe; the engine pins what is being encoded.
#ifndef CAIRN_RUNTIME_ENGINE_REDUNDANCY_H_
#define CAIRN_RUNTIME_ENGINE_REDUNDANCY_H_

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"
#include "format/manifest.h"
#include "redundancy/group_codec.h"
#include "redundancy/groups.h"
#include "storage/tier.h"

namespace cairn {

// What one rebuild did, the same on every rank.
struct RebuildSummary {
  int64_t version = -1;    // the version rebuilt (-1: none needed or possible)
  int parts_rebuilt = 0;   // in the whole job
  int parities_rebuilt = 0;
  std::string scheme;      // "partner", "xor", "rs"
  // This rank's own: bytes it wrote back to its node-local tier (0 when it
  // lost nothing), for the SSD wear ledger.
  uint64_t bytes_written_here = 0;
};

class EngineRedundancy {
 public:
  // Collective over job_comm. Forms the groups from every rank's (virtual)
  // node; null when redundancy.scheme is none. kConfig (the same on every
  // rank) naming the keys and the node count when the topology cannot hold
  // the groups. Background encoding needs a comm of its own for the
  // flusher thread (Comm::DupForThread); without one (MPI below
  // MPI_THREAD_MULTIPLE) parity is encoded inside the checkpoint call.
  static Result<std::unique_ptr<EngineRedundancy>> Open(Comm& job_comm,
                                                        const RedundancySettings& settings);

  const RedundancySettings& settings() const { return settings_; }
  const GroupPlan& plan() const { return plan_; }
  // Whether ProtectVersion runs on the flusher thread (else in the call).
  bool background() const { return background_; }
  // The comm ProtectVersion uses: the flusher's own, or the job's.
  Comm& encode_comm() { return own_comm_ ? *own_comm_ : job_comm_; }

  // Collective over encode_comm(), every rank for the same versions in the
  // same order. Encodes this rank's committed copy of (name, version) on
  // tier t with its group, commits the parity file beside it, and, once
  // every rank has, rewrites the manifest to list the parity and the
  // redundancy record. A rank that cannot read its copy makes every rank
  // skip the version (the same error everywhere); the version then stays
  // committed without redundancy. The bytes this rank wrote to t (parity
  // file and manifest), which wear an SSD as a part does. REQUIRES: the
  // copy is pinned.
  Result<uint64_t> ProtectVersion(Tier& t, const std::string& name, int64_t version);

  // Collective over the job's comm. Rebuilds (name, version) for the ranks
  // that have no usable node-local copy of it (`have_copy` false) or whose
  // copy fails its CRC32Cs, from their groups' survivors, and writes each
  // rebuilt copy, parity included, to `write_back` (this rank's fastest
  // node-local tier). Errors, the same on every rank: the rebuild's
  // (naming the lost ranks and nodes and what the scheme survives), or the
  // write-back's. REQUIRES: tiers[k] null where disabled.
  Result<RebuildSummary> RebuildVersion(const std::array<Tier*, kTierKinds>& tiers,
                                        Tier* write_back, const std::string& name,
                                        int64_t version);

 private:
  EngineRedundancy(Comm& job_comm, std::unique_ptr<Comm> own_comm,
                   const RedundancySettings& settings, GroupPlan plan);
  // Commits header + rows as this rank's parity file of the version; its
  // manifest entry.
  Result<FileEntry> WriteParityFile(Tier& t, const std::string& name, int64_t version,
                                    const GroupParity& parity);
  // The manifest that lists the parity file and the redundancy record.
  Manifest ProtectedManifest(const Manifest& committed, const FileEntry& parity_file,
                             const ParityHeader& header) const;

  Comm& job_comm_;
  std::unique_ptr<Comm> own_comm_;  // the flusher's, when background
  RedundancySettings settings_;
  GroupPlan plan_;
  bool background_ = false;
  // Its buffers outlive one version, so their pages are faulted in once;
  // so does the payload read back for the encode.
  std::unique_ptr<GroupEncoder> encoder_;
  GroupParity parity_;
  AlignedBuffer payload_;
};

// The payload of a committed copy (see above): its part and routed files,
// each checked block by block as read, then the manifest without its
// redundancy record, then the manifest's length (8 bytes, little-endian).
// kCorrupt naming the file when a block fails its CRC32C.
Result<std::vector<uint8_t>> ReadRedundancyPayload(const Tier& t, const Manifest& m);
// The same into *buffer (reallocated only when too small; aligned, so the
// encode combines the part where it lies): the payload's bytes in it.
Result<std::span<const uint8_t>> ReadRedundancyPayload(const Tier& t, const Manifest& m,
                                                       AlignedBuffer* buffer);
// Whether this rank's copy of (name, version) on tier t is whole: its
// manifest and files there (CheckCopy) and every byte of the files the
// payload protects matching its CRC32Cs. A copy that fails is one its
// group rebuilds. The cause (kNotFound, kCorrupt naming the file) if not.
Status CheckIntactCopy(const Tier& t, const std::string& name, int64_t version, int rank,
                       int nranks);
// This rank's parity file of copy m on tier t (the manifest's kRedundancy
// entry), checked whole (its CRC32Cs, its header, its size); kNotFound when
// the manifest lists none, kCorrupt naming the file otherwise.
Result<GroupParity> ReadParityFile(const Tier& t, const Manifest& m);
// The manifest a payload ends with, and the files before it; kCorrupt when
// the payload does not parse or its files do not match the manifest.
Result<Manifest> PayloadManifest(const std::vector<uint8_t>& payload, const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_ENGINE_REDUNDANCY_H_
