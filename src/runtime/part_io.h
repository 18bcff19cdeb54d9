// Moving a rank's checkpoint bytes between application memory and tiers,
// with a CRC32C on every block: writing a part file from protected regions,
// reading it back into them, and copying committed files between tiers
// (the drain), verifying every block on the way so that damage is never
// propagated. Thread-safety: free functions; callers serialize per file.
#ifndef CAIRN_RUNTIME_PART_IO_H_
#define CAIRN_RUNTIME_PART_IO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "format/part.h"
#include "storage/tier.h"

namespace cairn {

// A protected region of application memory.
struct Region {
  int id = 0;
  void* ptr = nullptr;
  uint64_t count = 0;
  uint64_t elem_size = 0;
  uint64_t bytes() const { return count * elem_size; }
};

// The part header describing `regions` (sorted by id), laid out.
PartHeader MakePartHeader(const std::string& name, int64_t version, int rank, int nranks,
                          const std::vector<Region>& regions);

// Sees every byte of a part file in file order, in pieces of any length,
// while the file is written (the ECC sidecar's encoder: it then reads each
// piece while the copy has it in cache, instead of in a second pass over
// application memory).
class PartObserver {
 public:
  virtual ~PartObserver() = default;
  virtual Status Add(const uint8_t* data, uint64_t n) = 0;
};

// Appends n bytes to `file` while adding them to `sum`, in pieces small
// enough to stay in cache: into a mapped memory-tier slot the copy and the
// CRC are one pass with streaming stores (the bytes are not read again
// soon), elsewhere the CRC of a piece, then its Append.
Status AppendChecksummed(WritableFile& file, ExtentChecksummer& sum, const uint8_t* data,
                         uint64_t n);
// Writes and commits the part file; returns its manifest entry. `observer`
// (may be null) sees every byte written, the padding included; a failure
// of its Add fails the write.
Result<FileEntry> WritePart(Tier& tier, const PartHeader& header,
                            const std::vector<Region>& regions,
                            PartObserver* observer = nullptr);

// Hands `observer` the bytes WritePart(header, regions) would write, without
// writing anything.
Status ObservePart(const PartHeader& header, const std::vector<Region>& regions,
                   PartObserver& observer);

// Copies the file at `source` (outside any tier: a routed file) into the
// version as `file` and returns its entry (one extent: the whole file).
Result<FileEntry> WriteRoutedFile(Tier& tier, const std::string& name, int64_t version,
                                  const std::string& file, const std::string& logical,
                                  const std::string& source);

// Reads the header of a committed part file and checks it against its
// entry: the block CRCs of the header extent, then what it describes.
Result<PartHeader> ReadPartHeader(const Tier& tier, const std::string& name, int64_t version,
                                  const FileEntry& entry);
// As ReadPartHeader, from a whole part file held in memory (one repaired
// from its ECC sidecar); `origin` names it in errors.
Result<PartHeader> PartHeaderFromBuffer(const std::vector<uint8_t>& bytes, const std::string& name,
                                        int64_t version, const FileEntry& entry,
                                        const std::string& origin);

// kMismatch naming the first difference, if the regions differ from header's.
Status CheckRegionsMatch(const PartHeader& header, const std::vector<Region>& regions);

// A restore runs in two phases so that a failed restart leaves application
// memory untouched on every rank (cairn.h): phase one checks every byte of
// this rank's copy without writing application memory (StagePart), the
// ranks agree that all of them succeeded, and only then phase two copies the
// regions in (StagedPart::CopyInto).

// A part whose every block phase one has checked, and what phase two
// copies from.
class StagedPart {
 public:
  virtual ~StagedPart() = default;
  // Phase two: copies the part's regions into application memory. From a
  // memory tier or a buffer it cannot fail; from a device the part is read
  // again and checked again, and fails if the copy changed or the device
  // failed since phase one (the regions may then hold part of it).
  // REQUIRES: regions are those phase one checked the part against.
  virtual Status CopyInto(const std::vector<Region>& regions) const = 0;
};

// Phase one from a tier: checks every block of every extent of the part
// file against `entry` (header and regions).
//  - Memory tier: the file is mapped read-only and its pages entered in the
//    mapping at once; the blocks are checked in place, and phase two copies
//    from the mapping, read-only for the life of the StagedPart, without
//    checking again. No copy is made in phase one, and no buffer held.
//  - Device: the file is read and checked; its pages stay in the page
//    cache, so that phase two, which reads and checks it again, reads them
//    from memory.
// REQUIRES: ReadPartHeader(entry) succeeded and CheckRegionsMatch(that
// header, regions).ok().
Result<std::unique_ptr<StagedPart>> StagePart(const Tier& tier, const std::string& name,
                                              int64_t version, const FileEntry& entry);

// Phase one from a part file held in memory (one repaired from its ECC
// sidecar): checks the header, that its regions are the protected ones
// (kMismatch if not) and every block; `origin` names it in errors. The
// StagedPart copies from `bytes`, which must outlive it.
Result<std::unique_ptr<StagedPart>> StagePartBuffer(const std::vector<uint8_t>& bytes,
                                                    const std::string& name, int64_t version,
                                                    const FileEntry& entry,
                                                    const std::vector<Region>& regions,
                                                    const std::string& origin);

// Writes `bytes`, the whole content of the file `entry` describes, to `to`
// as that file, after checking every block of it; commits it.
Status WriteVerifiedBuffer(Tier& to, const std::string& name, int64_t version,
                           const FileEntry& entry, const std::vector<uint8_t>& bytes);

// Copies a committed file to `dest_path` (outside any tier), verifying it.
Status CopyOutVerified(const Tier& tier, const std::string& name, int64_t version,
                       const FileEntry& entry, Env* env, const std::string& dest_path);

// Copies a committed file from one tier to another (same name and version),
// verifying every block against `entry`; commits it on `to`.
Status CopyBetweenTiers(const Tier& from, Tier& to, const std::string& name, int64_t version,
                        const FileEntry& entry);

// Reads every block of a committed file and checks it (cairn verify).
Status VerifyFile(const Tier& tier, const std::string& name, int64_t version,
                  const FileEntry& entry);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_PART_IO_H_
