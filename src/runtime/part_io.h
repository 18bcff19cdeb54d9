// Moving a rank's checkpoint bytes between application memory and tiers,
// with a CRC32C on every block: writing a part file from protected regions,
// reading it back into them, and copying committed files between tiers
// (the drain), verifying every block on the way so that damage is never
// propagated. Thread-safety: free functions; callers serialize per file.
#ifndef CAIRN_RUNTIME_PART_IO_H_
#define CAIRN_RUNTIME_PART_IO_H_

#include <cstdint>
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

// Writes and commits the part file; returns its manifest entry.
Result<FileEntry> WritePart(Tier& tier, const PartHeader& header,
                            const std::vector<Region>& regions);

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
// this rank's copy without writing application memory, the ranks agree that
// all of them succeeded, and only then phase two copies the regions in.

// Phase one from a tier: reads the whole part file and checks every block
// of every extent against `entry` (header and regions). From a device the
// pages stay in the page cache, so that phase two reads them from memory.
// REQUIRES: ReadPartHeader(entry) succeeded and CheckRegionsMatch(that
// header, regions).ok().
Status VerifyPart(const Tier& tier, const std::string& name, int64_t version,
                  const FileEntry& entry);

// Phase two from a tier: reads the part's regions into application memory,
// checking every block again on the way (the file is read anew, so it is
// checked anew; it fails only if the copy changed or the device failed
// since VerifyPart). The header is not read again.
// REQUIRES: VerifyPart(entry) succeeded.
Status ReadPartInto(const Tier& tier, const std::string& name, int64_t version,
                    const FileEntry& entry, const std::vector<Region>& regions);

// Phase one from a part file held in memory (one repaired from its ECC
// sidecar): checks the header, that its regions are the protected ones
// (kMismatch if not) and every block; `origin` names it in errors.
Status VerifyPartBuffer(const std::vector<uint8_t>& bytes, const std::string& name,
                        int64_t version, const FileEntry& entry,
                        const std::vector<Region>& regions, const std::string& origin);

// Phase two from a buffer: copies the regions into application memory.
// Cannot fail. REQUIRES: VerifyPartBuffer(bytes, ...) succeeded.
void CopyPartBufferInto(const std::vector<uint8_t>& bytes, const FileEntry& entry,
                        const std::vector<Region>& regions);

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
