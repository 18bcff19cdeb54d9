// scr_index.h — the SCR layer's index of datasets, as SCR keeps
// <prefix>/.scr/index.scr: what each dataset id is called, its flags, its
// output files, whether a restart from it failed or the application dropped
// it, and the dataset SCR_Current marked. It outlives the run, so that a
// dataset found bad is not offered again by the next run's SCR_Have_restart
// (docs/compat.md, "SCR index").
//
// Rank 0 reads and writes the file (JSON, written atomically: temporary
// file, fsync, rename); every rank holds the same copy, since every change
// comes from a collective SCR call with the same arguments everywhere.
// Not thread-safe.
#ifndef CAIRN_COMPAT_SCR_SCR_INDEX_H_
#define CAIRN_COMPAT_SCR_SCR_INDEX_H_

#include <mpi.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/common/outcome.h"

namespace cairn_compat {

struct ScrDataset {
  std::string name;
  int flags = 0;
  bool failed = false;   // a restart from it failed (SCR_Complete_restart(0))
  bool dropped = false;  // SCR_Drop / SCR_Delete, or superseded by SCR_Current
  std::vector<std::string> files;  // files at their paths under the prefix, all ranks
  // A checkpoint written with SCR_CACHE_BYPASS: its files are `files`, at
  // their paths, not in Cairn's version. Absent in older indexes: false.
  bool bypass = false;
};

class ScrIndex {
 public:
  ScrIndex() = default;
  ScrIndex(std::string path, MPI_Comm comm) : path_(std::move(path)), comm_(comm) {}

  // Collective: rank 0 reads the file (none yet: empty), every rank gets it.
  Status Load();

  // Collective changes, each saved by rank 0 before it returns.
  Status Add(int id, ScrDataset dataset);
  Status MarkFailed(int id);
  Status Drop(int id);
  // Marks `id` current and drops the checkpoint datasets after it (SCR
  // deletes them from its cache); the next restart starts from it.
  Status SetCurrent(int id);
  Status ClearCurrent();

  const std::map<int, ScrDataset>& datasets() const { return datasets_; }
  std::optional<int> current() const { return current_; }
  // The id of the newest live (not dropped) dataset called `name`.
  std::optional<int> Find(const std::string& name) const;
  // False for datasets that failed or were dropped: not to restart from.
  bool Usable(int id) const;
  int max_id() const { return datasets_.empty() ? 0 : datasets_.rbegin()->first; }

  // The index as JSON text, and back (errors name `origin`). For the test.
  std::string ToJson() const;
  Status FromJson(const std::string& text, const std::string& origin);

 private:
  Status Save() const;

  std::string path_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::map<int, ScrDataset> datasets_;
  std::optional<int> current_;
};

// Collective: rank 0's *text on every rank.
void BroadcastString(std::string* text, MPI_Comm comm);

// Collective: every rank's `mine` strings, in rank order, on rank 0 (other
// ranks get an empty list).
Result<std::vector<std::string>> GatherStrings(const std::vector<std::string>& mine, MPI_Comm comm);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_SCR_SCR_INDEX_H_
