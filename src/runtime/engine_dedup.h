// The engine's deduplication ([dedup]; docs/dedup.md): plans each version's
// pages with dedup/planner.h, writes the plan as the rank's part file in
// its paged form (format/page_table.h), and on restart reads such copies
// back, resolving every reference — to a page of the same copy, of another
// rank's copy of the same version, or of an older version, fetched from the
// rank that stores it — into a staged image of the regions that phase two
// of the restore copies in. Every page placed is checked against its
// digest; a reference that cannot be resolved fails the copy, never fills
// it with other bytes.
// Thread-safety: EngineDedup is used from the application's thread only.
#ifndef CAIRN_RUNTIME_ENGINE_DEDUP_H_
#define CAIRN_RUNTIME_ENGINE_DEDUP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"
#include "dedup/page_hash.h"
#include "dedup/planner.h"
#include "format/manifest.h"
#include "format/page_table.h"
#include "runtime/pages_writer.h"
#include "runtime/part_io.h"
#include "storage/tier.h"

namespace cairn {

// The planner's options for [dedup] settings.
DedupOptions DedupOptionsFor(const DedupSettings& settings);

// Pages of one protected region written since version `since_version` of
// the checkpoint it goes into next (transparent mode's dirty-page
// tracking; Engine::NoteChangedPages): runs of page indices, pages of
// `page_size` bytes counted from `base`, the region's first byte then.
struct ChangedPages {
  struct Run {
    uint64_t first = 0;
    uint64_t count = 0;
  };
  int64_t since_version = -1;
  const void* base = nullptr;
  uint64_t page_size = 4096;
  std::vector<Run> runs;  // ascending, disjoint
};
// By region id.
using ChangedPagesByRegion = std::map<int, ChangedPages>;

// One flag per page of the view of `regions` (sorted by id; pages of
// `page_size`): false only for a page that a note says was not written
// since `previous_version`, whose region sat at the same address with this
// page whole at the same index of the view of `previous_regions` (that
// version's). Empty when no page is clean: every page is hashed.
// engine_dedup_changed.cc.
std::vector<bool> ChangedPageMask(const std::vector<Region>& regions,
                                  const std::vector<Region>& previous_regions, uint32_t page_size,
                                  const ChangedPagesByRegion& notes,
                                  std::optional<int64_t> previous_version);

class EngineDedup {
 public:
  explicit EngineDedup(const DedupSettings& settings);

  // Collective: plans `version` of checkpoint `name` over `regions` (sorted
  // by id) and agrees, over all ranks, on the older versions the job's
  // pages refer to. Pages that `changed` says were not written since the
  // previous version of `name` keep its digests without being hashed
  // (ChangedPageMask). Each name has its own previous version: versions of
  // one name never refer to another's. A failure on one rank is every
  // rank's. With `stream_to`, the part file is written there while the
  // pages are hashed, when the plan takes no collective step
  // (StoredPageSink) and the name's last version of the same kind (full,
  // or referring to an older one) stored nearly every page
  // (a file is streamed into a slot as long as the longest it could be:
  // cutting a slot and growing it again costs page faults, so a version
  // expected to be much shorter is written at its exact size after it is
  // planned); WritePart on that tier then only finishes it. The caller has
  // removed any earlier copy of the version there.
  Status Plan(Comm& comm, const std::string& name, const std::vector<Region>& regions,
              int64_t version, const ChangedPagesByRegion& changed = {},
              Tier* stream_to = nullptr);
  // Whether Plan wrote this version's pages into `tier` as it planned.
  bool StreamedInto(const Tier& tier, int64_t version) const;
  // The current plan. REQUIRES: Plan succeeded.
  const DedupPlan& plan() const { return *plan_; }
  // Whether the planned version is written as a plain part (its plan is
  // `whole`: the last planned version saved too little), not by WritePart.
  bool WritesWhole() const { return plan_ && plan_->whole; }
  // Older versions any rank's pages of the planned version refer to,
  // ascending (the manifest's references, which retention keeps).
  const std::vector<int64_t>& references() const { return references_; }

  // Writes the planned version as this rank's part file on `tier` (or
  // finishes the one Plan streamed there) and commits it; its manifest
  // entry. REQUIRES: Plan succeeded for version, !WritesWhole(), and the
  // regions have not changed since.
  Result<FileEntry> WritePart(Tier& tier, const std::string& name, int64_t version, int rank,
                              int nranks);

  // The most bytes this rank's pages file of `regions` can take
  // (PagesHeader::LongestFileSize: every page stored, every record as long
  // as a reference's): the size of the memory tier's reusable slots in this
  // mode, as a plain part's is without it, for a name of any length. A
  // file is created that long and cut to what it holds.
  uint64_t FullPartBytes(const std::vector<Region>& regions, int rank, int nranks) const;

  // The planned version is committed everywhere: the next may refer to it.
  void Committed(int rank);
  // The next version of every name is full (a failed checkpoint, or a
  // restart).
  void Forget();

 private:
  // What the next version of one checkpoint name is planned against.
  struct NameState {
    explicit NameState(const DedupOptions& options) : planner(options) {}
    DedupPlanner planner;
    std::vector<Region> committed_regions;  // of the planner's previous version
    // Bytes of the pages the last committed full version stored, and the
    // last that referred to an older one (incremental modes): what the
    // next version of each kind is expected to store.
    std::optional<uint64_t> stored_bytes_full;
    std::optional<uint64_t> stored_bytes_referring;
  };

  PagesHeader HeaderFor(const std::string& name, int64_t version, int rank, int nranks,
                        const std::vector<Region>& regions, std::vector<PageRecord> records) const;

  DedupSettings settings_;
  std::map<std::string, NameState> names_;
  NameState* planned_ = nullptr;  // the name of the plan
  std::vector<Region> regions_;  // of the plan
  PageView view_;  // of the plan
  std::optional<DedupPlan> plan_;
  std::vector<int64_t> references_;
  std::unique_ptr<PagesFileWriter> streamed_;  // written while planned, not finished
};

// One rank's paged part file, checked and then read page by page: Load
// reads and decodes its header and streams the whole file once through a
// bounded buffer to check the block CRCs of its manifest entry; the pages
// are read when they are needed, each checked against its digest. Holds
// the open file and the page table, never the stored bytes, so a restore
// needs no memory in proportion to the copies it reads.
class PagedCopy {
 public:
  // kCorrupt naming the file if anything fails its check.
  static Result<std::unique_ptr<PagedCopy>> Load(const Tier& tier, const std::string& name,
                                                 int64_t version, const FileEntry& entry);
  // The same from `file`, the copy's part file or its bytes rebuilt from
  // the ECC sidecar.
  static Result<std::unique_ptr<PagedCopy>> Load(std::unique_ptr<ReadableFile> file,
                                                 const std::string& name, int64_t version,
                                                 const FileEntry& entry);
  const PagesHeader& header() const { return header_; }
  const std::vector<uint32_t>& lengths() const { return lengths_; }
  // The index of a shareable stored page with this digest in this copy.
  std::optional<size_t> Find(const PageDigest& digest) const;
  // Reads the stored pages first .. first + count - 1 (each kData, one
  // after the other in the file) into dst, checking each against its
  // digest; kCorrupt naming the file and the page otherwise.
  Status ReadPages(size_t first, size_t count, uint8_t* dst) const;

 private:
  PagesHeader header_;
  std::unique_ptr<ReadableFile> file_;
  std::vector<uint32_t> lengths_;
  std::vector<uint64_t> data_offset_;  // per page; meaningful for kData pages
  std::unordered_map<PageDigest, size_t, PageDigestHash> shareable_;
};

// Whether the part file `entry` of a copy is in the paged form.
bool IsPagedPart(const Tier& tier, const std::string& name, int64_t version,
                 const FileEntry& entry);

// kMismatch naming the first difference if the copy's regions are not
// `regions` (sorted by id).
Status CheckPagedRegions(const PagesHeader& header, const std::vector<Region>& regions);

// This rank's checked copy of an older (or the same) version, for
// references; kNotFound or the copy's error if it has none usable.
using PagedCopyLoader = std::function<Result<const PagedCopy*>(int64_t version)>;

// Collective: fills `image` (the regions' bytes, region after region) from
// `mine` (null when this rank has no usable copy: it still serves and asks
// nothing) and the references it holds, fetching pages from their ranks
// and serving theirs from this rank's copies through `load`. Every page
// from elsewhere is checked against its digest. Returns this rank's
// outcome, after taking part in every exchange (the caller agrees).
Status ResolvePagedImage(Comm& comm, const PagedCopy* mine, const PagedCopyLoader& load,
                         std::vector<uint8_t>* image);

// Phase two of a restore from a resolved image: copies it into the regions.
std::unique_ptr<StagedPart> StagedImage(std::vector<uint8_t> image);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_ENGINE_DEDUP_H_
