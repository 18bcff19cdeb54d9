// fti_client.h — one process's FTI instance over Cairn's public C API
// (FTI's API is per process: fti.cc holds the one instance its exported
// calls use). Checkpoint id = version of the Cairn checkpoint "fti"; levels
// map to Cairn as docs/compat.md says. The recovery of a checkpoint found at
// FTI_Init is in fti_recovery.cc, the rest in fti_client.cc.
// Thread-safety: none; FTI's calls come from the application's thread.
#ifndef CAIRN_COMPAT_FTI_FTI_CLIENT_H_
#define CAIRN_COMPAT_FTI_FTI_CLIENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/common/cairn_settings.h"
#include "compat/common/layout_journal.h"
#include "compat/common/regions.h"
#include "compat/fti/fti_config.h"
#include "fti.h"

namespace cairn_compat {

inline constexpr char kFtiPeer[] = "FTI";
inline constexpr char kFtiCheckpointName[] = "fti";

class FtiClient {
 public:
  Status Init(const char* config_file, MPI_Comm comm);
  int status() const { return recovery_pending_ ? 1 : 0; }
  Result<fti_id_t> InitType(int size);
  Status Protect(int id, void* ptr, int64_t count, fti_id_t type);
  Status Checkpoint(int id, int level);
  Result<bool> Recover();
  Result<bool> Snapshot();
  Status Finalize();
  // Ends this instance as an interrupted run ends: transfers finished, the
  // checkpoints kept (FTI_Init called again without FTI_Finalize).
  Status EndKeepingCheckpoints();

  // Stored sizes and variable-by-variable recovery (FTI_GetStoredSize,
  // FTI_Realloc, FTI_RecoverVar*), from the checkpoint being recovered.
  Result<int64_t> StoredSize(int id);
  Result<void*> Realloc(int id, void* ptr);
  Status RecoverVarInit();
  Status RecoverVar(int id);
  Status RecoverVarFinalize();

  // HDF5 layout metadata (FTI_InitGroup, FTI_DefineDataset, composite
  // types): checked as FTI checks it, then without effect on what is stored.
  Status InitGroup(FTIT_H5Group* group, const char* name, FTIT_H5Group* parent);
  Status DefineDataset(int id, int rank, const int64_t* dims, const char* name);
  Status AddField(fti_id_t composite, fti_id_t field, int64_t offset, int64_t elements);
  void WarnHdf5Once(bool hdf5_only_call);

 private:
  int DueLevel();
  Result<Shape> StoredShape(int id);
  Result<Layout> StoredLayout(int version);
  Result<bool> FetchPending(bool may_restore_in_place);
  Status CopyAllStaged();
  Result<bool> RecoverNewest();
  void Recovered(int version);
  Status Shutdown();

  FtiOptions options_;
  std::map<fti_id_t, size_t> type_sizes_ = {
      {FTI_CHAR, sizeof(char)},  {FTI_SHRT, sizeof(short)},  {FTI_INTG, sizeof(int)},
      {FTI_LONG, sizeof(long)},  {FTI_UCHR, sizeof(unsigned char)},
      {FTI_USHT, sizeof(unsigned short)}, {FTI_UINT, sizeof(unsigned)},
      {FTI_ULNG, sizeof(unsigned long)}, {FTI_SFLT, sizeof(float)}, {FTI_DBLE, sizeof(double)},
      {FTI_LDBE, sizeof(long double)}};
  bool recovery_pending_ = false;  // FTI_Status()
  int recoverable_version_ = -1;   // newest at FTI_Init, while recovery_pending_
  int recovered_version_ = -1;     // the checkpoint this run recovered, if any
  Regions variables_;              // FTI_Protect'ed
  CairnRegions cairn_;
  LayoutJournal journal_;
  // The pending checkpoint, fetched once by the first recover call on this
  // rank (FetchPending); a failed fetch is kept and not retried.
  StagedVersion staged_;
  bool staged_ready_ = false;
  std::optional<Status> fetch_failure_;
  bool var_recovery_open_ = false;    // FTI_RecoverVarInit .. Finalize
  bool var_recovery_failed_ = false;  // some FTI_RecoverVar of it failed
  std::vector<std::string> group_names_ = {""};  // by group id; 0: the root
  bool warned_hdf5_ = false;
  bool warned_level_[5] = {};
  double start_seconds_ = 0;
  int snapshot_count_ = 0;       // checkpoints FTI_Snapshot took (its ids)
  int next_due_minutes_[5] = {};  // per level, minutes after init
};

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_FTI_FTI_CLIENT_H_
