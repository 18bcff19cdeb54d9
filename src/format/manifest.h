// The manifest: the record that makes one rank's copy of a version complete
// on a tier. It is written last (after every file it lists is durable) and
// lists each file with its size and the CRC32C of every kBlockSize block of
// each checked extent, so every byte read back can be verified.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_MANIFEST_H_
#define CAIRN_FORMAT_MANIFEST_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "codec/copy_crc32c.h"
#include "format/layout.h"
#include "format/parity_layout.h"

namespace cairn {

inline constexpr char kManifestMagic[8] = {'C', 'A', 'I', 'R', 'N', 'M', 'A', 'N'};
// Version 2 added run_id, version 3 the redundancy record and references,
// version 4 the time the copy became ECC-protected; older manifests are
// still read (run_id 0, no redundancy, ecc_protected as DecodeManifest says).
inline constexpr uint32_t kManifestFormatVersion = 4;
// The longest manifest a reader accepts. A manifest holds 4 bytes of CRC
// per 64 KiB block of its files, so this covers 4 TiB per rank; a longer
// file is damage (or planted) and is refused before it is read into memory.
inline constexpr uint64_t kMaxManifestBytes = uint64_t{256} << 20;

// A byte range of a file and the CRC32C of each kBlockSize block in it.
struct Extent {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::vector<uint32_t> crcs;
};

// kParity: a memory-tier part's ECC sidecar (docs/format.md "ECC sidecar");
// it stays on the tier that wrote it: drains leave it out.
// kRedundancy: the rank's share of its redundancy group's parity
// (rNNNNNN.parity, format/parity_layout.h); node-local tiers only.
enum class FileKind : uint8_t { kPart = 0, kRouted = 1, kParity = 2, kRedundancy = 3 };

struct FileEntry {
  FileKind kind = FileKind::kPart;
  std::string name;     // file name inside the version directory
  std::string logical;  // for routed files, the application's name
  uint64_t size = 0;
  std::vector<Extent> extents;
};

struct Manifest {
  std::string name;
  int64_t version = 0;
  int32_t rank = 0;
  int32_t nranks = 0;
  // The run (one cairn_init of a job, the same on every rank) that wrote the
  // copy; drains keep it. The ranks of one version must all come from one
  // run: a version number reused by a later run, or by a job of another
  // size in the same directory, never mixes with the older copies.
  uint64_t run_id = 0;
  double created = 0;  // wall-clock seconds since the epoch
  std::vector<FileEntry> files;
  // Cross-node redundancy (docs/redundancy.md): set exactly when files
  // list a kRedundancy file. The manifest is rewritten with it only after
  // every member of every group has committed its parity, so a copy whose
  // manifest says so is protected; one that does not, is not (yet).
  struct Redundancy {
    ParityScheme scheme = ParityScheme::kXor;
    uint32_t group = 0;        // the group's number in the job
    uint32_t members = 0;      // ranks in the group
    uint32_t parity_rows = 0;  // rows each member stores
  };
  std::optional<Redundancy> redundancy;
  // Deduplication (docs/dedup.md): the older versions whose copies the
  // pages of this version refer to, on any rank of the job (the same list
  // in every rank's manifest), ascending. Retention keeps them while this
  // version is kept. Format 3; empty in older manifests.
  std::vector<int64_t> references;
  // The memory tier's ECC (docs/ecc.md): when this copy became protected
  // by its sidecar, wall-clock seconds since the epoch; 0 when it is not.
  // Set exactly when files list a kParity sidecar: the sidecar is encoded
  // after the copy commits, and the manifest is rewritten with both once
  // the sidecar is committed whole, so a sidecar a manifest does not list
  // is never used. Format 4; a format 3 manifest that lists a sidecar (then
  // written before the manifest) reads as protected at `created`.
  double ecc_protected = 0;

  std::string Encode() const;
  uint64_t DataBytes() const;  // sum of file sizes
};

Result<Manifest> DecodeManifest(const std::string& bytes, const std::string& origin);

// Computes block CRCs of an extent incrementally, in any chunking.
class ExtentChecksummer {
 public:
  explicit ExtentChecksummer(uint64_t offset) { extent_.offset = offset; }
  void Update(const void* data, size_t n);
  // Update, while copying the bytes to dst in the same pass over them
  // (CopyWithCrc32c, with `stores`). REQUIRES: the ranges do not overlap.
  void CopyAndUpdate(void* dst, const void* src, size_t n, CopyStores stores);
  // Adds the next n bytes, whose CRC `crc(at, take, crc)` computes piece
  // by piece (the `take` bytes at offset `at` into them, continuing from
  // crc; no piece crosses a block), for callers that do more in the same
  // pass over them (a copy, a hash).
  template <typename PieceCrc>
  void AddPieces(size_t n, const PieceCrc& crc);
  Extent Finish();

  // How far the extent has come, to go back to when the bytes added after
  // it are dropped (RewindTo).
  struct Mark {
    uint64_t length;
    size_t blocks;
    uint32_t crc;
    uint64_t in_block;
  };
  Mark mark() const { return {extent_.length, extent_.crcs.size(), crc_, in_block_}; }
  void RewindTo(const Mark& mark);

 private:
  Extent extent_;
  uint32_t crc_ = 0;
  uint64_t in_block_ = 0;
};

template <typename PieceCrc>
void ExtentChecksummer::AddPieces(size_t n, const PieceCrc& crc) {
  extent_.length += n;
  for (size_t done = 0; done < n;) {
    size_t take = std::min<uint64_t>(n - done, kBlockSize - in_block_);
    crc_ = crc(done, take, crc_);
    in_block_ += take;
    done += take;
    if (in_block_ == kBlockSize) {
      extent_.crcs.push_back(crc_);
      crc_ = 0;
      in_block_ = 0;
    }
  }
}

// Verifies `data`, which holds bytes [offset, offset + n) of the extent's
// file, against every block of `extent` that lies wholly inside that range.
// Blocks are checked only once whole: callers hand in block-aligned pieces.
Status VerifyExtentRange(const Extent& extent, uint64_t offset, const void* data, size_t n,
                         const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_FORMAT_MANIFEST_H_
