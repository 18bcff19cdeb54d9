// fti.cc — the FTI C API (include/compat/fti/fti.h) over Cairn's public C
// API. Checkpoint id = version of the Cairn checkpoint "fti"; levels map to
// Cairn (docs/compat.md): 1 wherever [placement] puts it, 2 and 3 the same
// with the job's partner or Reed-Solomon groups (the SSD tier when there
// are none), 4 the SSD tier and then the global directory before the call
// returns.
#include "fti.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
#include "compat/common/layout_journal.h"
#include "compat/common/regions.h"
#include "compat/fti/fti_config.h"

#define FTI_EXPORT_DATA __attribute__((visibility("default")))

extern "C" {
FTI_EXPORT_DATA MPI_Comm FTI_COMM_WORLD = MPI_COMM_NULL;
// Predefined type ids; their sizes are in FtiClient::type_sizes_.
FTI_EXPORT_DATA fti_id_t FTI_CHAR = 0, FTI_SHRT = 1, FTI_INTG = 2, FTI_LONG = 3, FTI_UCHR = 4,
                         FTI_USHT = 5, FTI_UINT = 6, FTI_ULNG = 7, FTI_SFLT = 8, FTI_DBLE = 9,
                         FTI_LDBE = 10;
}

namespace cairn_compat {
namespace {

constexpr char kPeer[] = "FTI";
constexpr char kCheckpointName[] = "fti";

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

Status FtiClient::Init(const char* config_file, MPI_Comm comm) {
  if (config_file == nullptr) return Status::Error("the configuration file name is NULL");
  auto options = ReadFtiConfig(config_file);
  if (FTI_COMM_WORLD != MPI_COMM_NULL) MPI_Comm_free(&FTI_COMM_WORLD);  // a failed FTI_Init's
  MPI_Comm_dup(comm, &FTI_COMM_WORLD);
  // A rank whose file failed still joins cairn_init, which then fails
  // everywhere, instead of leaving the others waiting.
  if (!options.ok()) options_.cairn.Set("tiers.memory.capacity", std::string("invalid: see FTI config"));
  else options_ = std::move(*options);
  Status st = options_.cairn.Init(FTI_COMM_WORLD);
  if (!options.ok()) return options.status();
  if (!st.ok()) return st;
  int newest = cairn_restart_test(kCheckpointName, -1);
  if (newest < 0 && cairn_last_error() != CAIRN_SUCCESS) {
    return CairnError(cairn_last_error(), "cairn_restart_test");
  }
  recovery_pending_ = newest >= 0;
  recoverable_version_ = newest;
  int rank = 0;
  MPI_Comm_rank(FTI_COMM_WORLD, &rank);
  journal_ = LayoutJournal(options_.cairn.StateDir() + "/fti", rank);
  start_seconds_ = MPI_Wtime();
  for (int level = 1; level <= 4; ++level) next_due_minutes_[level] = options_.interval_minutes[level];
  return Status();
}

Result<fti_id_t> FtiClient::InitType(int size) {
  if (size <= 0) return Status::Error("type size " + std::to_string(size) + " is not positive");
  fti_id_t id = static_cast<fti_id_t>(type_sizes_.size());
  type_sizes_[id] = static_cast<size_t>(size);
  return id;
}

Status FtiClient::Protect(int id, void* ptr, int64_t count, fti_id_t type) {
  auto size = type_sizes_.find(type);
  if (size == type_sizes_.end()) return Status::Error("type " + std::to_string(type) + " is not known (FTI_InitType)");
  if (count < 0) return Status::Error("count " + std::to_string(count) + " of variable " + std::to_string(id) + " is negative");
  if (id < 0) return Status::Error("variable id " + std::to_string(id) + " is negative");
  variables_[id] = Region{ptr, Shape{static_cast<size_t>(count), size->second}};
  return cairn_.Sync(variables_);
}

// The level FTI writes for `level` (FTIT_level), or 0 for none: FTI itself
// writes FTI_L1_DCP..FTI_L3_DCP as levels 1..3, and FTI_L4_DCP and
// FTI_L4_H5_SINGLE as level 4 in another format (differential blocks, one
// HDF5 file). Cairn writes whole versions in its own format at either.
int BaseLevel(int level) {
  if (level >= FTI_L1 && level <= FTI_L4) return level;
  if (level >= FTI_L1_DCP && level <= FTI_L4_DCP) return level - FTI_L4;
  if (level == FTI_L4_H5_SINGLE) return FTI_L4;
  return 0;
}

Status FtiClient::Checkpoint(int id, int requested_level) {
  const int level = BaseLevel(requested_level);
  if (level == 0) {
    return Status::Error("level " + std::to_string(requested_level) + " is not one of FTI's " +
                         std::to_string(FTI_MIN_LEVEL_ID) + ".." + std::to_string(FTI_MAX_LEVEL_ID));
  }
  // Levels 2 and 3 are the node-local copy plus the job's cross-node
  // redundancy (ckpt_l2 / ckpt_l3); without it, a durable SSD copy.
  const bool across_nodes = !options_.cairn.redundancy().empty();
  if ((level == 2 || level == 3) && !across_nodes && !warned_level_[level]) {
    warned_level_[level] = true;
    int rank = 0;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::fprintf(stderr, "FTI (Cairn): warning: level %d checkpoints go to the SSD tier: no "
                   "cross-node redundancy is configured (ckpt_l2 / ckpt_l3 > 0 on at least 2 "
                   "nodes)\n", level);
    }
  }
  unsigned flags = level == 1 || (level < 4 && across_nodes) ? 0u : CAIRN_CHECKPOINT_DURABLE;
  // The variables' shapes first: a restarted run may ask for them
  // (FTI_GetStoredSize, FTI_Realloc) before it protects anything.
  Status st = journal_.Record(kCheckpointName, id, LayoutOf(variables_));
  if (!st.ok()) return st;
  st = CairnError(cairn_checkpoint_flags(kCheckpointName, id, flags),
                         "cairn_checkpoint of checkpoint " + std::to_string(id));
  // Level 4 is on the global file system when FTI_Checkpoint returns.
  if (st.ok() && level == 4) st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  return st;
}

// Every recover entry point (FTI_Recover, FTI_RecoverVarInit and
// FTI_RecoverVar, FTI_Snapshot) gets the checkpoint found at FTI_Init from
// this one collective cairn_restart, the first time any of them runs on this
// rank; later calls read the staged copy without communicating. FTI recovers
// from files that FTI_Init put in place, so its programs mix the entry points
// across ranks and retry after FTI_Realloc (FTI's diffSizes test): a
// collective per call would leave the ranks in different collectives.
// Staging buffers shaped by the stored layout always fit, so the restart
// succeeds or fails alike on every rank whatever the application protected.
// Returns true when it restored in place instead: allowed for FTI_Recover,
// when the protected variables are exactly the stored ones (no extra copy).
Result<bool> FtiClient::FetchPending(bool may_restore_in_place) {
  if (staged_ready_) return false;
  if (fetch_failure_) return *fetch_failure_;
  auto layout = StoredLayout(recoverable_version_);
  Status st = layout.ok() ? Status() : layout.status();
  bool in_place = st.ok() && may_restore_in_place && *layout == LayoutOf(variables_);
  if (in_place) {
    st = RestoreExactly(kCheckpointName, recoverable_version_);
  } else if (st.ok()) {
    st = staged_.Fetch(cairn_, kCheckpointName, recoverable_version_, *layout, variables_);
  } else {
    // This rank's journal is unreadable, but the others restart: restore
    // into what is protected, so that this rank joins the collective.
    (void)RestoreExactly(kCheckpointName, recoverable_version_);
  }
  if (!st.ok()) {
    fetch_failure_ = st;
    return st;
  }
  staged_ready_ = !in_place;
  return in_place;
}

// FTI_Recover restores every variable or none: FTI first checks that the
// protected variables are the stored ones, of the stored sizes.
Status FtiClient::CopyAllStaged() {
  const Layout& stored = staged_.layout();
  const std::string checkpoint = "checkpoint " + std::to_string(recoverable_version_);
  for (const auto& [id, shape] : stored) {
    auto var = variables_.find(id);
    if (var == variables_.end()) {
      return Status::Error(checkpoint + " holds variable " + std::to_string(id) +
                           ", which is not protected (FTI_Protect)");
    }
    if (var->second.shape.bytes() != shape.bytes()) {
      return Status::Error("variable " + std::to_string(id) + " is " +
                           std::to_string(var->second.shape.bytes()) + " bytes, " + checkpoint +
                           " holds " + std::to_string(shape.bytes()) +
                           " (FTI_Realloc gives it the stored size)");
    }
  }
  for (const auto& [id, var] : variables_) {
    if (!stored.count(id)) {
      return Status::Error("variable " + std::to_string(id) + " is protected but " + checkpoint +
                           " does not hold it");
    }
  }
  for (const auto& [id, var] : variables_) {
    const std::vector<char>* bytes = staged_.Find(id);
    if (!bytes->empty()) std::memcpy(var.ptr, bytes->data(), bytes->size());
  }
  return Status();
}

Result<bool> FtiClient::Recover() {
  if (var_recovery_open_) return Status::Error("a variable recovery is open (FTI_RecoverVarFinalize first)");
  if (!recovery_pending_) return RecoverNewest();
  auto in_place = FetchPending(/*may_restore_in_place=*/true);
  if (!in_place.ok()) return in_place.status();
  if (!*in_place) {
    Status st = CopyAllStaged();
    if (!st.ok()) return st;  // still pending, as in FTI: FTI_Realloc, then again
  }
  Recovered(recoverable_version_);
  return true;
}

// FTI_Recover with nothing pending from FTI_Init: the newest checkpoint of
// this run (FTI's "live" recovery). Collective on every rank.
Result<bool> FtiClient::RecoverNewest() {
  int newest = cairn_restart_test(kCheckpointName, -1);
  if (newest < 0) {
    if (cairn_last_error() != CAIRN_SUCCESS) return CairnError(cairn_last_error(), "cairn_restart_test");
    return false;
  }
  int rc = cairn_restart(kCheckpointName, newest);
  if (rc < 0) return CairnError(rc, "cairn_restart of checkpoint " + std::to_string(newest));
  Recovered(rc);
  return true;
}

void FtiClient::Recovered(int version) {
  recovery_pending_ = false;
  recovered_version_ = version;
  staged_.Clear();
  staged_ready_ = false;
  snapshot_count_ = version + 1;
}

// The variables checkpoint `version` holds on this rank: as recorded, or,
// for a checkpoint written without a journal, as protected now.
Result<Layout> FtiClient::StoredLayout(int version) {
  auto recorded = journal_.Find(kCheckpointName, version);
  if (!recorded.ok()) return recorded.status();
  return *recorded ? **recorded : LayoutOf(variables_);
}

Result<Shape> FtiClient::StoredShape(int id) {
  if (!variables_.count(id)) {
    return Status::Error("variable " + std::to_string(id) + " is not protected (FTI_Protect)");
  }
  // As in FTI, the stored sizes stay known after the recovery.
  int version = recovery_pending_ ? recoverable_version_ : recovered_version_;
  if (version < 0) return Status::Error("no checkpoint is being recovered or was recovered");
  auto layout = StoredLayout(version);
  if (!layout.ok()) return layout.status();
  auto it = layout->find(id);
  if (it == layout->end()) {
    return Status::Error("checkpoint " + std::to_string(version) + " holds no variable " +
                         std::to_string(id));
  }
  return it->second;
}

Result<int64_t> FtiClient::StoredSize(int id) {
  auto shape = StoredShape(id);
  if (!shape.ok()) return shape.status();
  return static_cast<int64_t>(shape->bytes());
}

Result<void*> FtiClient::Realloc(int id, void* ptr) {
  if (!recovery_pending_) return Status::Error("no checkpoint is being recovered (FTI_Status() is 0)");
  auto shape = StoredShape(id);
  if (!shape.ok()) return shape.status();
  if (shape->bytes() == 0) return Status::Error("variable " + std::to_string(id) + " was stored empty");
  void* grown = std::realloc(ptr, shape->bytes());
  if (grown == nullptr) {
    return Status::Error("cannot allocate " + std::to_string(shape->bytes()) + " bytes for variable " +
                         std::to_string(id));
  }
  // Protected again with the stored count of its own element size.
  Region& var = variables_[id];
  var.ptr = grown;
  var.shape.count = shape->bytes() / var.shape.elem_size;
  Status st = cairn_.Sync(variables_);
  if (!st.ok()) return st;
  return grown;
}

Status FtiClient::RecoverVarInit() {
  if (var_recovery_open_) return Status();
  if (!recovery_pending_) return Status::Error("no checkpoint is being recovered (FTI_Status() is 0)");
  auto in_place = FetchPending(/*may_restore_in_place=*/false);
  if (!in_place.ok()) return in_place.status();
  var_recovery_open_ = true;
  var_recovery_failed_ = false;
  return Status();
}

Status FtiClient::RecoverVar(int id) {
  Status st = RecoverVarInit();  // FTI_RecoverVar alone starts the recovery, as in FTI
  if (!st.ok()) return st;
  const std::vector<char>* bytes = staged_.Find(id);
  auto var = variables_.find(id);
  if (bytes == nullptr) {
    st = Status::Error("checkpoint " + std::to_string(recoverable_version_) + " holds no variable " +
                       std::to_string(id));
  } else if (var == variables_.end()) {
    st = Status::Error("variable " + std::to_string(id) + " is not protected");
  } else if (var->second.shape.bytes() < bytes->size()) {
    st = Status::Error("variable " + std::to_string(id) + " is " +
                       std::to_string(var->second.shape.bytes()) + " bytes, checkpoint " +
                       std::to_string(recoverable_version_) + " holds " +
                       std::to_string(bytes->size()) + " (FTI_Realloc gives it the stored size)");
  } else if (!bytes->empty()) {
    std::memcpy(var->second.ptr, bytes->data(), bytes->size());
  }
  var_recovery_failed_ |= !st.ok();
  return st;
}

Status FtiClient::RecoverVarFinalize() {
  if (!var_recovery_open_) return Status::Error("no variable recovery is open (FTI_RecoverVarInit)");
  var_recovery_open_ = false;
  // After a failed FTI_RecoverVar the checkpoint stays pending (FTI never
  // resets FTI_Status here), so that the program can FTI_Realloc and
  // recover again; a recovery without failure ends.
  if (!var_recovery_failed_) Recovered(recoverable_version_);
  return Status();
}

void FtiClient::WarnHdf5Once(bool hdf5_only_call) {
  // Composite types describe protected structs for FTI's POSIX output as
  // well: only HDF5 output asked for (ckpt_io = 5) or a call that only
  // shapes HDF5 files (groups, datasets) goes unmet.
  if (warned_hdf5_ || (!hdf5_only_call && !options_.hdf5_output)) return;
  warned_hdf5_ = true;
  int rank = 0;
  MPI_Comm_rank(FTI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::fprintf(stderr, "FTI (Cairn): warning: HDF5 groups, datasets and composite types are "
                 "accepted but Cairn writes no HDF5 files: variables are stored as bytes\n");
  }
}

Status FtiClient::InitGroup(FTIT_H5Group* group, const char* name, FTIT_H5Group* parent) {
  if (group == nullptr || name == nullptr) return Status::Error("group or name is NULL");
  if (std::strlen(name) >= FTI_BUFS) return Status::Error(std::string("group name '") + name + "' is too long");
  int parent_id = parent == nullptr ? 0 : parent->id;
  if (parent_id < 0 || parent_id >= static_cast<int>(group_names_.size())) {
    return Status::Error("parent group " + std::to_string(parent_id) + " is not initialized");
  }
  std::string full = group_names_[parent_id] + "/" + name;
  for (const auto& existing : group_names_) {
    if (existing == full) return Status::Error("group '" + full + "' already exists");
  }
  WarnHdf5Once(/*hdf5_only_call=*/true);
  group->id = static_cast<int>(group_names_.size());
  group->childrenNo = 0;
  std::snprintf(group->name, FTI_BUFS, "%s", name);
  std::snprintf(group->fullName, FTI_BUFS, "%s", full.c_str());
  group_names_.push_back(full);
  if (parent != nullptr && parent->childrenNo < FTI_BUFS) parent->childrenID[parent->childrenNo++] = group->id;
  return Status();
}

Status FtiClient::DefineDataset(int id, int rank, const int64_t* dims, const char* name) {
  auto var = variables_.find(id);
  if (var == variables_.end()) return Status::Error("variable " + std::to_string(id) + " is not protected (FTI_Protect first)");
  if (rank > 32 || rank < 0) return Status::Error("rank " + std::to_string(rank) + " is not 0..32");
  if (rank > 0 && dims == nullptr) return Status::Error("dimLength is NULL with rank > 0");
  int64_t elements = 1;
  for (int d = 0; d < rank; ++d) elements *= dims[d];
  if (rank > 0 && static_cast<size_t>(elements) != var->second.shape.count) {
    return Status::Error("dataset '" + std::string(name ? name : "") + "' has " + std::to_string(elements) +
                         " elements, variable " + std::to_string(id) + " has " +
                         std::to_string(var->second.shape.count));
  }
  WarnHdf5Once(/*hdf5_only_call=*/true);
  return Status();
}

Status FtiClient::AddField(fti_id_t composite, fti_id_t field, int64_t offset, int64_t elements) {
  auto whole = type_sizes_.find(composite);
  auto part = type_sizes_.find(field);
  if (whole == type_sizes_.end() || part == type_sizes_.end()) {
    return Status::Error("type " + std::to_string(whole == type_sizes_.end() ? composite : field) +
                         " is not known");
  }
  if (offset < 0 || elements < 0 ||
      static_cast<size_t>(offset) + part->second * static_cast<size_t>(elements) > whole->second) {
    return Status::Error("the field at offset " + std::to_string(offset) + " does not fit type " +
                         std::to_string(composite) + " of " + std::to_string(whole->second) + " bytes");
  }
  WarnHdf5Once(/*hdf5_only_call=*/false);
  return Status();
}

// The highest level whose interval has passed (FTI_Snapshot's rule), or -1;
// the elapsed minutes are the slowest rank's, so every rank agrees.
int FtiClient::DueLevel() {
  // fast_forward: FTI's minutes pass that many times faster.
  const double seconds = (MPI_Wtime() - start_seconds_) * options_.fast_forward;
  int mine = static_cast<int>(seconds / 60), minutes = mine;
  MPI_Allreduce(&mine, &minutes, 1, MPI_INT, MPI_MAX, FTI_COMM_WORLD);
  int level = -1;
  for (int l = 1; l <= 4; ++l) {
    int interval = options_.interval_minutes[l];
    if (interval > 0 && minutes >= next_due_minutes_[l]) {
      level = l;
      while (next_due_minutes_[l] <= minutes) next_due_minutes_[l] += interval;
    }
  }
  return level;
}

Result<bool> FtiClient::Snapshot() {
  if (var_recovery_open_) return Status::Error("a variable recovery is open (FTI_RecoverVarFinalize first)");
  if (recovery_pending_) {
    auto recovered = Recover();
    if (!recovered.ok()) return recovered.status();
    if (!*recovered) return Status::Error("no checkpoint can be recovered");
    return false;
  }
  int level = DueLevel();
  if (level < 0) return false;
  Status st = Checkpoint(snapshot_count_, level);
  if (!st.ok()) return st;
  ++snapshot_count_;
  return true;
}

Status FtiClient::Finalize() {
  Status st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  // A run that ends cleanly needs no restart: FTI removes its checkpoints.
  if (st.ok() && !options_.keep_last_checkpoint) {
    st = CairnError(cairn_delete(kCheckpointName), "cairn_delete");
    if (st.ok()) st = journal_.Remove(kCheckpointName);
  }
  Status done = Shutdown();
  return st.ok() ? done : st;
}

Status FtiClient::EndKeepingCheckpoints() {
  Status st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  Status done = Shutdown();
  return st.ok() ? done : st;
}

Status FtiClient::Shutdown() {
  Status done = CairnError(cairn_finalize(), "cairn_finalize");
  // FTI_COMM_WORLD is FTI_Init's duplicate: it ends with FTI.
  if (FTI_COMM_WORLD != MPI_COMM_NULL) MPI_Comm_free(&FTI_COMM_WORLD);
  return done;
}

std::unique_ptr<FtiClient> g_client;  // FTI's API is per process

int Report(const std::string& call, const Status& st, int ok_code = FTI_SCES) {
  if (st.ok()) return ok_code;
  ReportError(kPeer, call + ": " + st.message());
  return FTI_NSCS;
}

FtiClient* Client(const char* call) {
  if (!g_client) Report(call, Status::Error("FTI is not initialized"));
  return g_client.get();
}

}  // namespace
}  // namespace cairn_compat

using cairn_compat::Client;
using cairn_compat::Report;

#define FTI_EXPORT extern "C" __attribute__((visibility("default")))

FTI_EXPORT int FTI_Init(const char* configFile, MPI_Comm globalComm) {
  // FTI_Init again without FTI_Finalize starts FTI over (FTI's "live
  // restart", corner case 4): the running instance ends as an interrupted
  // run would, keeping its checkpoints, so the new one finds them
  // (FTI_Status() == 1) and the program can FTI_Recover. Its protected
  // variables are forgotten, as FTI forgets them.
  if (cairn_compat::g_client) {
    cairn_compat::Status ended = cairn_compat::g_client->EndKeepingCheckpoints();
    cairn_compat::g_client.reset();
    if (!ended.ok()) {
      // Every rank goes on to the new instance's collective init, which
      // reports whatever the failure left behind.
      cairn_compat::ReportError(cairn_compat::kPeer,
                                "FTI_Init: ending the running instance: " + ended.message());
    }
  }
  auto client = std::make_unique<cairn_compat::FtiClient>();
  auto st = client->Init(configFile, globalComm);
  if (st.ok()) cairn_compat::g_client = std::move(client);
  return Report("FTI_Init", st);
}

FTI_EXPORT int FTI_Status(void) {
  auto* c = Client("FTI_Status");
  return c ? c->status() : FTI_NSCS;
}

FTI_EXPORT int FTI_InitType(fti_id_t* type, int size) {
  auto* c = Client("FTI_InitType");
  if (!c) return FTI_NSCS;
  if (type == nullptr) return Report("FTI_InitType", cairn_compat::Status::Error("type is NULL"));
  auto id = c->InitType(size);
  if (!id.ok()) return Report("FTI_InitType", id.status());
  *type = *id;
  return FTI_SCES;
}

FTI_EXPORT int FTI_Protect(int id, void* ptr, int64_t count, fti_id_t tid) {
  auto* c = Client("FTI_Protect");
  return c ? Report("FTI_Protect", c->Protect(id, ptr, count, tid)) : FTI_NSCS;
}

FTI_EXPORT int FTI_Checkpoint(int id, int level) {
  auto* c = Client("FTI_Checkpoint");
  return c ? Report("FTI_Checkpoint", c->Checkpoint(id, level), FTI_DONE) : FTI_NSCS;
}

FTI_EXPORT int FTI_Recover(void) {
  auto* c = Client("FTI_Recover");
  if (!c) return FTI_NSCS;
  auto recovered = c->Recover();
  if (!recovered.ok()) {
    Report("FTI_Recover", recovered.status());
    return FTI_NREC;
  }
  return *recovered ? FTI_SCES : FTI_NREC;
}

FTI_EXPORT int FTI_Snapshot(void) {
  auto* c = Client("FTI_Snapshot");
  if (!c) return FTI_NSCS;
  auto taken = c->Snapshot();
  if (!taken.ok()) return Report("FTI_Snapshot", taken.status());
  return *taken ? FTI_DONE : FTI_SCES;
}

FTI_EXPORT int FTI_Finalize(void) {
  auto* c = Client("FTI_Finalize");
  if (!c) return FTI_NSCS;
  int rc = Report("FTI_Finalize", c->Finalize());
  cairn_compat::g_client.reset();
  return rc;
}

FTI_EXPORT int64_t FTI_GetStoredSize(int id) {
  auto* c = Client("FTI_GetStoredSize");
  if (!c) return 0;
  auto size = c->StoredSize(id);
  if (!size.ok()) {
    Report("FTI_GetStoredSize", size.status());
    return 0;  // FTI's "unknown"
  }
  return *size;
}

FTI_EXPORT void* FTI_Realloc(int id, void* ptr) {
  auto* c = Client("FTI_Realloc");
  if (!c) return ptr;
  auto grown = c->Realloc(id, ptr);
  if (!grown.ok()) {
    Report("FTI_Realloc", grown.status());
    return ptr;  // as FTI: the old buffer stays valid
  }
  return *grown;
}

FTI_EXPORT int FTI_RecoverVarInit(void) {
  auto* c = Client("FTI_RecoverVarInit");
  return c ? Report("FTI_RecoverVarInit", c->RecoverVarInit()) : FTI_NSCS;
}

FTI_EXPORT int FTI_RecoverVar(int id) {
  auto* c = Client("FTI_RecoverVar");
  return c ? Report("FTI_RecoverVar", c->RecoverVar(id)) : FTI_NSCS;
}

FTI_EXPORT int FTI_RecoverVarFinalize(void) {
  auto* c = Client("FTI_RecoverVarFinalize");
  return c ? Report("FTI_RecoverVarFinalize", c->RecoverVarFinalize()) : FTI_NSCS;
}

FTI_EXPORT int FTI_InitGroup(FTIT_H5Group* h5group, const char* name, FTIT_H5Group* parent) {
  auto* c = Client("FTI_InitGroup");
  return c ? Report("FTI_InitGroup", c->InitGroup(h5group, name, parent)) : FTI_NSCS;
}

FTI_EXPORT int FTI_RenameGroup(FTIT_H5Group* h5group, const char* name) {
  if (!Client("FTI_RenameGroup")) return FTI_NSCS;
  if (h5group == nullptr || name == nullptr || std::strlen(name) >= FTI_BUFS) {
    return Report("FTI_RenameGroup", cairn_compat::Status::Error("group or name is NULL or too long"));
  }
  std::snprintf(h5group->name, FTI_BUFS, "%s", name);
  return FTI_SCES;
}

FTI_EXPORT int FTI_DefineDataset(int id, int rank, int64_t* dimLength, const char* name,
                                 FTIT_H5Group* h5group) {
  auto* c = Client("FTI_DefineDataset");
  return c ? Report("FTI_DefineDataset", c->DefineDataset(id, rank, dimLength, name)) : FTI_NSCS;
}

FTI_EXPORT fti_id_t FTI_InitCompositeType(const char* name, size_t size, FTIT_H5Group* h5g) {
  auto* c = Client("FTI_InitCompositeType");
  if (!c) return FTI_NSCS;
  if (size > static_cast<size_t>(INT32_MAX)) {
    return Report("FTI_InitCompositeType", cairn_compat::Status::Error("size is too large"));
  }
  auto id = c->InitType(static_cast<int>(size));
  if (!id.ok()) return Report("FTI_InitCompositeType", id.status());
  c->WarnHdf5Once(/*hdf5_only_call=*/false);
  return *id;
}

FTI_EXPORT int FTI_AddScalarField(fti_id_t id, const char* name, fti_id_t fid, int64_t offset) {
  auto* c = Client("FTI_AddScalarField");
  return c ? Report("FTI_AddScalarField", c->AddField(id, fid, offset, 1)) : FTI_NSCS;
}

FTI_EXPORT int FTI_AddVectorField(fti_id_t id, const char* name, fti_id_t tid, int64_t offset,
                                  int ndims, int64_t* dim_sizes) {
  auto* c = Client("FTI_AddVectorField");
  if (!c) return FTI_NSCS;
  if (ndims < 0 || (ndims > 0 && dim_sizes == nullptr)) {
    return Report("FTI_AddVectorField", cairn_compat::Status::Error("ndims < 0 or dim_sizes is NULL"));
  }
  int64_t elements = 1;
  for (int d = 0; d < ndims; ++d) elements *= dim_sizes[d];
  return Report("FTI_AddVectorField", c->AddField(id, tid, offset, elements));
}
