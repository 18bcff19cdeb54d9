// fti_client.cc — FtiClient's set-up, protection, checkpoints (FTI_Checkpoint,
// FTI_Snapshot's schedule), HDF5 metadata checks and shutdown.
#include "compat/fti/fti_client.h"

#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "cairn/cairn.h"

namespace cairn_compat {
namespace {

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

}  // namespace

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
  int newest = cairn_restart_test(kFtiCheckpointName, -1);
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
  Status st = journal_.Record(kFtiCheckpointName, id, LayoutOf(variables_));
  if (!st.ok()) return st;
  st = CairnError(cairn_checkpoint_flags(kFtiCheckpointName, id, flags),
                         "cairn_checkpoint of checkpoint " + std::to_string(id));
  // Level 4 is on the global file system when FTI_Checkpoint returns.
  if (st.ok() && level == 4) st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  return st;
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
    st = CairnError(cairn_delete(kFtiCheckpointName), "cairn_delete");
    if (st.ok()) st = journal_.Remove(kFtiCheckpointName);
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

}  // namespace cairn_compat
