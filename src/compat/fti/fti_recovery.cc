// fti_recovery.cc — FtiClient's recovery of the checkpoint found at
// FTI_Init (FTI_Recover, FTI_RecoverVar*, FTI_GetStoredSize, FTI_Realloc).
#include <cstdlib>
#include <cstring>
#include <string>

#include "cairn/cairn.h"
#include "compat/fti/fti_client.h"

namespace cairn_compat {

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
    st = RestoreExactly(kFtiCheckpointName, recoverable_version_);
  } else if (st.ok()) {
    st = staged_.Fetch(cairn_, kFtiCheckpointName, recoverable_version_, *layout, variables_);
  } else {
    // This rank's journal is unreadable, but the others restart: restore
    // into what is protected, so that this rank joins the collective.
    (void)RestoreExactly(kFtiCheckpointName, recoverable_version_);
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
  int newest = cairn_restart_test(kFtiCheckpointName, -1);
  if (newest < 0) {
    if (cairn_last_error() != CAIRN_SUCCESS) return CairnError(cairn_last_error(), "cairn_restart_test");
    return false;
  }
  int rc = cairn_restart(kFtiCheckpointName, newest);
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
  auto recorded = journal_.Find(kFtiCheckpointName, version);
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

}  // namespace cairn_compat
