// layout_journal.h — which regions (ids, counts, element sizes) each version
// of a checkpoint holds on this rank, kept beside Cairn's tiers by the peer
// layers (docs/compat.md, "Stored sizes").
//
// Cairn restores a version only into regions shaped as it was written, and
// its public API does not say what those shapes were. VeloC and FTI programs
// may ask for them after a restart began (VELOC_Recover_size,
// FTI_GetStoredSize, FTI_Realloc), so the layer records them itself: one
// small text file per checkpoint name and rank, rewritten atomically (temporary
// file, fsync, rename) whenever the layout changes. A version's layout is the
// newest record at or below it. Recording version v drops the records above
// it: a run that restarted from an older version replaces that timeline, as
// Cairn's retention does.
//
// File format (docs/compat.md): one line per record,
//   <version> <id>:<count>:<elem_size> ...
// Not thread-safe.
#ifndef CAIRN_COMPAT_COMMON_LAYOUT_JOURNAL_H_
#define CAIRN_COMPAT_COMMON_LAYOUT_JOURNAL_H_

#include <map>
#include <optional>
#include <string>

#include "compat/common/outcome.h"
#include "compat/common/regions.h"

namespace cairn_compat {

class LayoutJournal {
 public:
  LayoutJournal() = default;
  // Files go to `dir` (created private, 0700, on first record) as
  // "<name>.r<rank>.layout".
  LayoutJournal(std::string dir, int rank) : dir_(std::move(dir)), rank_(rank) {}

  // Records that `version` of `name` holds `layout`, before that version is
  // written (a record of a version that then fails is replaced by the next).
  Status Record(const std::string& name, int version, const Layout& layout);
  // The layout of `version` of `name`; nullopt when nothing is recorded at
  // or below it (a checkpoint written before the layer kept journals).
  Result<std::optional<Layout>> Find(const std::string& name, int version) const;
  // Forgets `name` (its checkpoints were deleted).
  Status Remove(const std::string& name);

 private:
  using Records = std::map<int, Layout>;  // version -> layout
  std::string PathOf(const std::string& name) const;
  Result<Records> Load(const std::string& name) const;
  Status Store(const std::string& name, const Records& records) const;

  std::string dir_;
  int rank_ = 0;
};

// The journal's text for `records`, and back (errors name `origin` and the
// line). Exposed for the unit test.
std::string FormatLayoutRecords(const std::map<int, Layout>& records);
Result<std::map<int, Layout>> ParseLayoutRecords(const std::string& text, const std::string& origin);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_COMMON_LAYOUT_JOURNAL_H_
