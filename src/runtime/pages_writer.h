// PagesFileWriter: writes one rank's pages file (format 2,
// format/page_table.h) on a tier as its plan is made or from a finished
// plan (engine_dedup.h): the preamble, the stored pages as they come (or
// copied ahead of the plan's decision into a mapped file, hashed in the
// same pass), then the header and the trailer, and commits it. Stored
// pages that follow each other in memory go out as one run, copied and
// checksummed in one pass (AppendChecksummed). The file is created at the first byte written,
// `create_bytes` long (its exact size, or as long as it could grow while
// its plan is not known), and ends where the writing ends. The first
// failure is kept and returned by Finish; nothing is written after it.
// Thread-safety: one writer per file, used from one thread.
#ifndef CAIRN_RUNTIME_PAGES_WRITER_H_
#define CAIRN_RUNTIME_PAGES_WRITER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "dedup/page_view.h"
#include "dedup/planner.h"
#include "format/manifest.h"
#include "format/page_table.h"
#include "storage/tier.h"

namespace cairn {

class PagesFileWriter final : public StoredPageSink {
 public:
  PagesFileWriter(Tier* tier, std::string name, int64_t version, std::string file,
                  uint64_t create_bytes);

  Tier* tier() const { return tier_; }
  int64_t version() const { return version_; }

  void Store(const PageView& view, const std::vector<size_t>& pages) override;
  bool CopyAhead(const PageView& view, size_t first, size_t last, const PageHasher* hasher,
                 PageDigest* digests) override;
  // Appends the header (whose kData pages are the ones stored, in order)
  // and the trailer, and commits the file; its manifest entry.
  Result<FileEntry> Finish(const PagesHeader& header);

 private:
  Status Open();
  Status AppendRun(const uint8_t* data, uint64_t n);
  // Copies `bytes` of whole pages of `page` bytes from src to `to`, adding
  // them to the data extent, and hashes each page that a piece of the
  // copy (which ends at a CRC block's end) holds whole, marking it in
  // `hashed`.
  void CopyAndHashRun(uint8_t* to, const uint8_t* src, uint64_t bytes, size_t page,
                      const PageHasher& hasher, PageDigest* digests,
                      std::vector<bool>::iterator hashed);
  // Pages copied ahead (CopyAhead), not stored yet.
  struct Ahead {
    size_t first = 0, last = 0;
    uint64_t bytes = 0;
    ExtentChecksummer::Mark mark{};
  };
  // Keeps the pages copied ahead if `pages` are exactly they, else drops
  // them; whether it kept them.
  bool KeepAhead(const std::vector<size_t>* pages);

  Tier* tier_;
  std::string name_;
  int64_t version_;
  std::string file_;
  uint64_t create_bytes_;
  std::unique_ptr<PendingFile> pending_;
  ExtentChecksummer data_sum_{0};  // the preamble and the stored pages
  uint64_t written_ = 0;
  std::optional<Ahead> ahead_;
  Status status_;
};

}  // namespace cairn

#endif  // CAIRN_RUNTIME_PAGES_WRITER_H_
