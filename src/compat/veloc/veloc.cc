// veloc.cc — the VeloC C API (include/compat/veloc/veloc.h) over Cairn's
// public C API. One client per process, as in VeloC; each call maps to the
// Cairn calls in docs/compat.md. Errors are printed with their cause and
// returned as VELOC_FAILURE.
#include "veloc.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
#include "compat/common/layout_journal.h"
#include "compat/common/regions.h"
#include "compat/veloc/veloc_config.h"

namespace cairn_compat {
namespace {

constexpr char kPeer[] = "VeloC";

// VeloC names: letters, digits and '_' (VeloC's validate_name).
Status CheckNameAndVersion(const char* name, int version) {
  if (name == nullptr || name[0] == '\0') return Status::Error("checkpoint name is empty");
  for (const char* p = name; *p; ++p) {
    if (!std::isalnum(static_cast<unsigned char>(*p)) && *p != '_') {
      return Status::Error(std::string("checkpoint name '") + name +
                           "' may contain only letters, digits and '_'");
    }
  }
  if (version < 0) return Status::Error("version " + std::to_string(version) + " is negative");
  return Status();
}

// The ids a selective call picks out of `regions` (VELOC_CKPT_* and
// VELOC_RECOVER_* share their values). A listed id not among them is an
// error unless `unknown_ids_ok` (recovery, where VeloC walks the version's
// regions and ignores other ids).
Result<std::set<int>> SelectIds(const Regions& regions, int mode, const int* ids, int id_count,
                                bool unknown_ids_ok = false) {
  std::set<int> listed;
  if (mode != VELOC_CKPT_ALL) {
    if (id_count < 0 || (id_count > 0 && ids == nullptr)) {
      return Status::Error("the id list is NULL or its length negative");
    }
    for (int i = 0; i < id_count; ++i) {
      if (!regions.count(ids[i]) && !unknown_ids_ok) {
        return Status::Error("region id " + std::to_string(ids[i]) + " is not protected");
      }
      listed.insert(ids[i]);
    }
  }
  std::set<int> chosen;
  for (const auto& [id, region] : regions) {
    bool in_list = listed.count(id) != 0;
    if (mode == VELOC_CKPT_ALL || (mode == VELOC_CKPT_SOME && in_list) ||
        (mode == VELOC_CKPT_REST && !in_list)) {
      chosen.insert(id);
    }
  }
  if (mode != VELOC_CKPT_ALL && mode != VELOC_CKPT_SOME && mode != VELOC_CKPT_REST) {
    return Status::Error("mode " + std::to_string(mode) + " is not VELOC_CKPT_ALL/SOME/REST");
  }
  return chosen;
}

// VeloC's region groups: VELOC_Mem_protect fills the default group,
// VELOC_Region_protect a group named after a checkpoint, which a checkpoint
// or restart of that name uses instead of the default one when it is not
// empty (VeloC's client_impl_t::get_current_ckpt_regions).
constexpr char kDefaultGroup[] = "default";

class VelocClient {
 public:
  ~VelocClient() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
  }

  Status Init(MPI_Comm comm, const char* cfg_file, const std::string& path_suffix);
  Status Finalize(bool drain);

  Status Protect(const std::string& group, int id, void* ptr, size_t count, size_t base_size);
  Status Unprotect(const std::string& group, int id);
  Status Clear(const std::string& group);
  Status RouteFile(const char* original, char* routed);
  Status Cleanup(const char* name);

  Status CheckpointBegin(const char* name, int version);
  Status CheckpointSelective(int mode, const int* ids, int id_count);
  Status CheckpointEnd(bool success);

  Result<int> RestartTest(const char* name, int needed_version);
  Status RestartBegin(const char* name, int version, bool in_place);
  Status RecoverSelective(int mode, const int* ids, int id_count);
  Result<int> RecoverSize(int id) const;
  Status RestartEnd();

 private:
  // The group a checkpoint or restart of `name` uses.
  const Regions& RegionsFor(const std::string& name) const;
  Status SyncDefaultGroup();
  Result<bool> AllRanksSucceeded(bool success);
  Status CommitCheckpoint(const std::string& name, int version, const Regions& chosen);
  Status FetchStaged(const std::string& name, int version, const Layout& stored, bool guessed);
  void RemoveFiles(std::vector<std::string>* paths);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::map<std::string, Regions> groups_;
  CairnRegions cairn_;
  LayoutJournal journal_;
  bool has_persistent_ = false;

  struct Phase {
    bool active = false;
    std::string name;
    int version = -1;
    std::set<int> ids;                // checkpoint: regions to save
    std::vector<std::string> routed;  // files routed in this phase
  };
  Phase checkpoint_;
  Phase restart_;
  std::string last_phase_name_;  // the checkpoint VELOC_Route_file routes to between phases
  // Restart phase: the version's regions, restored into buffers of ours
  // until Recover copies them out, or (VELOC_Restart of a version shaped as
  // the protected regions) straight into the application's memory.
  StagedVersion staged_;
  Layout restored_layout_;
  bool in_place_ = false;
};

Status VelocClient::Init(MPI_Comm comm, const char* cfg_file, const std::string& path_suffix) {
  if (cfg_file == nullptr) return Status::Error("the configuration file name is NULL");
  auto settings = TranslateVelocConfig(cfg_file, path_suffix);
  // A rank whose file is unreadable still joins cairn_init (it fails there
  // too), so that no rank waits for it in a collective.
  CairnSettings fallback(kPeer);
  CairnSettings& use = settings.ok() ? *settings : fallback;
  if (!settings.ok()) use.Set("tiers.memory.capacity", std::string("invalid: see VeloC config"));
  int rank = 0;
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_dup(comm, &comm_);
    MPI_Comm_rank(comm_, &rank);
  }
  Status st = use.Init(comm);
  if (!settings.ok()) return settings.status();
  has_persistent_ = use.keys().count("tiers.pfs.path") != 0;
  journal_ = LayoutJournal(use.StateDir() + "/veloc", rank);
  return st;
}

Status VelocClient::Finalize(bool drain) {
  if (drain) {
    Status st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
    if (!st.ok()) ReportError(kPeer, st.message());
  }
  return CairnError(cairn_finalize(), "cairn_finalize");
}

const Regions& VelocClient::RegionsFor(const std::string& name) const {
  static const Regions kNone;
  auto named = groups_.find(name);
  if (named != groups_.end() && !named->second.empty()) return named->second;
  auto fallback = groups_.find(kDefaultGroup);
  return fallback == groups_.end() ? kNone : fallback->second;
}

// Cairn holds the default group between phases: its memory slots are
// reserved at protect time, not at the first checkpoint.
Status VelocClient::SyncDefaultGroup() { return cairn_.Sync(groups_[kDefaultGroup]); }

Status VelocClient::Protect(const std::string& group, int id, void* ptr, size_t count,
                            size_t base_size) {
  if (id < 0) return Status::Error("region id " + std::to_string(id) + " is negative");
  groups_[group][id] = Region{ptr, Shape{count, base_size}};
  return group == kDefaultGroup ? SyncDefaultGroup() : Status();
}

Status VelocClient::Unprotect(const std::string& group, int id) {
  if (groups_[group].erase(id) == 0) {
    return Status::Error("region " + std::to_string(id) + " of group '" + group + "' is not protected");
  }
  return group == kDefaultGroup ? SyncDefaultGroup() : Status();
}

Status VelocClient::Clear(const std::string& group) {
  groups_[group].clear();
  return group == kDefaultGroup ? SyncDefaultGroup() : Status();
}

// VeloC routes a checkpoint's file to one path per checkpoint name, rank
// and version (<scratch>/<name>-<rank>-<version>.dat), whatever the
// original name and working directory: a program may read back under
// another name than it wrote, from another directory (VeloC's own
// heatdis_file.c writes "ckpt_%d_%d" and reads "ckpt-%d_%d"). Cairn's
// routed files are per rank and version already, so the name is the
// checkpoint's. Versions written before this rule are found under the
// encoded absolute path of the original.
Status VelocClient::RouteFile(const char* original, char* routed) {
  if (original == nullptr || routed == nullptr) return Status::Error("original or routed is NULL");
  Phase* phase = checkpoint_.active ? &checkpoint_ : restart_.active ? &restart_ : nullptr;
  const std::string& name = phase != nullptr ? phase->name : last_phase_name_;
  if (name.empty()) return Status::Error("no checkpoint or restart has begun, so no file to route to");
  auto route = [&](const std::string& logical) {
    int rc = cairn_route_file(logical.c_str(), routed, VELOC_MAX_NAME);
    return rc < 0 ? CairnError(rc, std::string("cairn_route_file for '") + original + "'") : Status();
  };
  Status st = route(name + ".dat");
  if (st.ok() && restart_.active && access(routed, F_OK) != 0) {
    const std::string by_name = routed;
    st = route(RoutedFileName(AbsolutePath(original)));
    if (st.ok() && access(routed, F_OK) != 0) std::snprintf(routed, VELOC_MAX_NAME, "%s", by_name.c_str());
  }
  if (!st.ok()) return st;
  if (phase != nullptr && std::find(phase->routed.begin(), phase->routed.end(), routed) == phase->routed.end()) {
    phase->routed.emplace_back(routed);
  }
  return Status();
}

// VeloC removes the scratch copies of `name` and keeps the persistent ones.
// Cairn cannot drop one tier's copies through its API: with a persistent
// directory, the copies there are completed (and Cairn releases the memory
// tier's at finalize, since a lower tier holds them); without one, scratch
// held the only copies, and they are deleted as VeloC would.
Status VelocClient::Cleanup(const char* name) {
  Status st = CheckNameAndVersion(name, 0);
  if (!st.ok()) return st;
  if (has_persistent_) return CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  st = CairnError(cairn_delete(name), std::string("cairn_delete of '") + name + "'");
  if (st.ok()) st = journal_.Remove(name);
  return st;
}

Status VelocClient::CheckpointBegin(const char* name, int version) {
  if (checkpoint_.active || restart_.active) {
    return Status::Error("a checkpoint or restart phase is already open");
  }
  Status st = CheckNameAndVersion(name, version);
  if (!st.ok()) return st;
  checkpoint_ = Phase{true, name, version, {}, {}};
  last_phase_name_ = name;
  return Status();
}

Status VelocClient::CheckpointSelective(int mode, const int* ids, int id_count) {
  if (!checkpoint_.active) return Status::Error("no checkpoint phase is open (VELOC_Checkpoint_begin)");
  auto chosen = SelectIds(RegionsFor(checkpoint_.name), mode, ids, id_count);
  if (!chosen.ok()) return chosen.status();
  checkpoint_.ids.insert(chosen->begin(), chosen->end());
  return Status();
}

Result<bool> VelocClient::AllRanksSucceeded(bool success) {
  int mine = success ? 1 : 0, all = mine;
  if (comm_ != MPI_COMM_NULL &&
      MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS) {
    return Status::Error("MPI_Allreduce of the success flags failed");
  }
  return all == 1;
}

void VelocClient::RemoveFiles(std::vector<std::string>* paths) {
  for (const auto& p : *paths) unlink(p.c_str());
  paths->clear();
}

// Saves `chosen` (and the routed files) as the version, its layout recorded
// first so that a restart can tell the stored sizes.
Status VelocClient::CommitCheckpoint(const std::string& name, int version, const Regions& chosen) {
  Status st = journal_.Record(name, version, LayoutOf(chosen));
  if (st.ok()) st = cairn_.Sync(chosen);
  if (st.ok()) st = CairnError(cairn_checkpoint(name.c_str(), version), "cairn_checkpoint");
  Status back = SyncDefaultGroup();
  return st.ok() ? back : st;
}

Status VelocClient::CheckpointEnd(bool success) {
  if (!checkpoint_.active) return Status::Error("no checkpoint phase is open (VELOC_Checkpoint_begin)");
  Phase phase = checkpoint_;
  checkpoint_ = Phase{};
  auto all = AllRanksSucceeded(success);
  if (!all.ok()) return all.status();
  if (!*all) {
    // No rank commits a version some rank could not write; its files must
    // not slip into the next version either.
    RemoveFiles(&phase.routed);
    return Status::Error("checkpoint '" + phase.name + "' version " + std::to_string(phase.version) +
                         " not committed: a rank ended it with success = 0");
  }
  // Only the regions picked by VELOC_Checkpoint_mem/_selective are saved.
  Regions chosen;
  for (const auto& [id, r] : RegionsFor(phase.name)) {
    if (phase.ids.count(id)) chosen[id] = r;
  }
  return CommitCheckpoint(phase.name, phase.version, chosen);
}

Result<int> VelocClient::RestartTest(const char* name, int needed_version) {
  Status st = CheckNameAndVersion(name, needed_version);
  if (!st.ok()) return st;
  int v = cairn_restart_test(name, needed_version == 0 ? -1 : needed_version);
  if (v < 0 && cairn_last_error() != CAIRN_SUCCESS) {
    return Status::Error(std::string("cairn_restart_test: ") + cairn_error_message(CAIRN_LAST_ERROR));
  }
  return v;
}

Status VelocClient::FetchStaged(const std::string& name, int version, const Layout& stored,
                                bool guessed) {
  const Regions& between_phases = groups_[kDefaultGroup];
  Status st = staged_.Fetch(cairn_, name, version, stored, between_phases);
  if (!st.ok() && guessed && !stored.empty() && staged_.restore_error() == CAIRN_E_MISMATCH) {
    // No journal and not shaped as the protected regions: a files-only
    // version (no VELOC_Checkpoint_mem). Fetch its files; a later Recover
    // says that there is no memory to recover.
    st = staged_.Fetch(cairn_, name, version, Layout{}, between_phases);
  }
  return st;
}

Status VelocClient::RestartBegin(const char* name, int version, bool in_place) {
  if (checkpoint_.active || restart_.active) {
    return Status::Error("a checkpoint or restart phase is already open");
  }
  Status st = CheckNameAndVersion(name, version);
  if (!st.ok()) return st;
  auto recorded = journal_.Find(name, version);
  if (!recorded.ok()) return recorded.status();
  Layout stored = *recorded ? **recorded : LayoutOf(RegionsFor(name));
  const Regions& app = RegionsFor(name);
  staged_.Clear();
  // VELOC_Restart of a version shaped as the protected regions restores in
  // place (no copy); otherwise through buffers of ours, copied out by
  // VELOC_Recover_* (regions protected later, larger, or some of them).
  in_place_ = in_place && stored == LayoutOf(app);
  if (in_place_) {
    st = cairn_.Sync(app);
    int restore_error = CAIRN_SUCCESS;
    if (st.ok()) {
      st = RestoreExactly(name, version);
      restore_error = cairn_last_error();
    }
    Status back = SyncDefaultGroup();
    if (st.ok()) st = back;
    if (!st.ok() && !*recorded && restore_error == CAIRN_E_MISMATCH) {
      // No journal: perhaps a files-only version (below).
      in_place_ = false;
      st = FetchStaged(name, version, stored, true);
    }
  } else {
    st = FetchStaged(name, version, stored, !*recorded);
  }
  if (!st.ok()) return st;
  restored_layout_ = in_place_ ? stored : staged_.layout();
  restart_ = Phase{true, name, version, {}, {}};
  last_phase_name_ = name;
  return Status();
}

Status VelocClient::RecoverSelective(int mode, const int* ids, int id_count) {
  if (!restart_.active) return Status::Error("no restart phase is open (VELOC_Restart_begin)");
  if (restored_layout_.empty()) {
    return Status::Error("version " + std::to_string(restart_.version) + " of '" + restart_.name +
                         "' holds no memory regions (it was written without VELOC_Checkpoint_mem)");
  }
  // As VeloC: the ids are those of the version; each one recovered must be
  // protected now, at least as large as what was saved.
  Regions saved;
  for (const auto& [id, shape] : restored_layout_) saved[id] = Region{nullptr, shape};
  auto chosen = SelectIds(saved, mode, ids, id_count, /*unknown_ids_ok=*/true);
  if (!chosen.ok()) return chosen.status();
  if (in_place_) return Status();
  const Regions& app = RegionsFor(restart_.name);
  for (int id : *chosen) {
    auto target = app.find(id);
    const std::vector<char>* bytes = staged_.Find(id);
    if (target == app.end()) {
      return Status::Error("region " + std::to_string(id) + " of version " +
                           std::to_string(restart_.version) + " is not protected");
    }
    if (target->second.shape.bytes() < bytes->size()) {
      return Status::Error("protected region " + std::to_string(id) + " is " +
                           std::to_string(target->second.shape.bytes()) + " bytes, version " +
                           std::to_string(restart_.version) + " holds " +
                           std::to_string(bytes->size()));
    }
    if (!bytes->empty()) std::memcpy(target->second.ptr, bytes->data(), bytes->size());
  }
  return Status();
}

Result<int> VelocClient::RecoverSize(int id) const {
  if (!restart_.active) return Status::Error("no restart phase is open (VELOC_Restart_begin)");
  auto it = restored_layout_.find(id);
  if (it == restored_layout_.end()) {
    return Status::Error("version " + std::to_string(restart_.version) + " of '" + restart_.name +
                         "' holds no region " + std::to_string(id));
  }
  if (it->second.bytes() > static_cast<size_t>(INT_MAX)) {
    return Status::Error("region " + std::to_string(id) + " is " + std::to_string(it->second.bytes()) +
                         " bytes, more than VELOC_Recover_size's int can say");
  }
  return static_cast<int>(it->second.bytes());
}

Status VelocClient::RestartEnd() {
  if (!restart_.active) return Status::Error("no restart phase is open (VELOC_Restart_begin)");
  // The files the application read are part of the version it restored;
  // left in the routing directory they would join the next checkpoint.
  RemoveFiles(&restart_.routed);
  restart_ = Phase{};
  staged_.Clear();
  restored_layout_.clear();
  return Status();
}

std::unique_ptr<VelocClient> g_client;  // VeloC's API is per process

int Report(const Status& st) {
  if (st.ok()) return VELOC_SUCCESS;
  ReportError(kPeer, st.message());
  return VELOC_FAILURE;
}

// Runs `body` on the client, or fails when VELOC_Init has not been called.
template <typename Body>
int WithClient(const char* call, Body body) {
  if (!g_client) return Report(Status::Error(std::string(call) + ": VeloC is not initialized"));
  Status st = body(*g_client);
  if (!st.ok()) return Report(Status::Error(std::string(call) + ": " + st.message()));
  return VELOC_SUCCESS;
}

int InitClient(MPI_Comm comm, const char* cfg_file, const std::string& suffix) {
  if (g_client) return Report(Status::Error("VELOC_Init: VeloC is already initialized"));
  auto client = std::make_unique<VelocClient>();
  Status st = client->Init(comm, cfg_file, suffix);
  if (!st.ok()) return Report(Status::Error("VELOC_Init: " + st.message()));
  g_client = std::move(client);
  return VELOC_SUCCESS;
}

}  // namespace
}  // namespace cairn_compat

using cairn_compat::g_client;
using cairn_compat::Status;
using cairn_compat::VelocClient;
using cairn_compat::WithClient;

#define VELOC_EXPORT extern "C" __attribute__((visibility("default")))

VELOC_EXPORT int VELOC_Init(MPI_Comm comm, const char* cfg_file) {
  return cairn_compat::InitClient(comm, cfg_file, "");
}

VELOC_EXPORT int VELOC_Init_single(unsigned int id, const char* cfg_file) {
  return cairn_compat::InitClient(MPI_COMM_NULL, cfg_file, "/single-" + std::to_string(id));
}

VELOC_EXPORT int VELOC_Finalize(int drain) {
  int rc = WithClient("VELOC_Finalize", [&](VelocClient& c) { return c.Finalize(drain != 0); });
  g_client.reset();
  return rc;
}

VELOC_EXPORT int VELOC_Mem_protect(int id, void* ptr, size_t count, size_t base_size) {
  return WithClient("VELOC_Mem_protect", [&](VelocClient& c) {
    return c.Protect(cairn_compat::kDefaultGroup, id, ptr, count, base_size);
  });
}

VELOC_EXPORT int VELOC_Region_protect(int id, void* ptr, size_t count, size_t base_size,
                                      const char* name) {
  return WithClient("VELOC_Region_protect", [&](VelocClient& c) {
    if (name == nullptr) return Status::Error("the region group name is NULL");
    return c.Protect(name, id, ptr, count, base_size);
  });
}

VELOC_EXPORT int VELOC_Mem_unprotect(int id) {
  return WithClient("VELOC_Mem_unprotect",
                    [&](VelocClient& c) { return c.Unprotect(cairn_compat::kDefaultGroup, id); });
}

VELOC_EXPORT int VELOC_Region_unprotect(int id, const char* name) {
  return WithClient("VELOC_Region_unprotect", [&](VelocClient& c) {
    if (name == nullptr) return Status::Error("the region group name is NULL");
    return c.Unprotect(name, id);
  });
}

VELOC_EXPORT int VELOC_Mem_clear(void) {
  return WithClient("VELOC_Mem_clear",
                    [&](VelocClient& c) { return c.Clear(cairn_compat::kDefaultGroup); });
}

VELOC_EXPORT int VELOC_Region_clear(const char* name) {
  return WithClient("VELOC_Region_clear", [&](VelocClient& c) {
    if (name == nullptr) return Status::Error("the region group name is NULL");
    return c.Clear(name);
  });
}

VELOC_EXPORT int VELOC_Cleanup(const char* name) {
  return WithClient("VELOC_Cleanup", [&](VelocClient& c) { return c.Cleanup(name); });
}

VELOC_EXPORT int VELOC_Route_file(const char* original, char* routed) {
  return WithClient("VELOC_Route_file", [&](VelocClient& c) { return c.RouteFile(original, routed); });
}

VELOC_EXPORT int VELOC_Checkpoint_begin(const char* name, int version) {
  return WithClient("VELOC_Checkpoint_begin",
                    [&](VelocClient& c) { return c.CheckpointBegin(name, version); });
}

VELOC_EXPORT int VELOC_Checkpoint_selective(int mode, int* ids, int id_count) {
  return WithClient("VELOC_Checkpoint_selective",
                    [&](VelocClient& c) { return c.CheckpointSelective(mode, ids, id_count); });
}

VELOC_EXPORT int VELOC_Checkpoint_mem(void) {
  return WithClient("VELOC_Checkpoint_mem",
                    [&](VelocClient& c) { return c.CheckpointSelective(VELOC_CKPT_ALL, nullptr, 0); });
}

VELOC_EXPORT int VELOC_Checkpoint_end(int success) {
  return WithClient("VELOC_Checkpoint_end", [&](VelocClient& c) { return c.CheckpointEnd(success != 0); });
}

VELOC_EXPORT int VELOC_Checkpoint_wait(void) {
  return WithClient("VELOC_Checkpoint_wait", [&](VelocClient&) {
    return cairn_compat::CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  });
}

// Cairn's API has no test of the background drains that does not wait:
// this waits for them, so a polling loop ends at its first call.
VELOC_EXPORT int VELOC_Checkpoint_finished(void) { return VELOC_Checkpoint_wait(); }

VELOC_EXPORT int VELOC_Checkpoint(const char* name, int version) {
  int rc = VELOC_Checkpoint_wait();
  if (rc == VELOC_SUCCESS) rc = VELOC_Checkpoint_begin(name, version);
  if (rc == VELOC_SUCCESS) rc = VELOC_Checkpoint_mem();
  // end is collective: reached even when mem failed, with success = 0.
  int end = g_client ? VELOC_Checkpoint_end(rc == VELOC_SUCCESS) : VELOC_FAILURE;
  return rc == VELOC_SUCCESS ? end : rc;
}

VELOC_EXPORT int VELOC_Restart_test(const char* name, int needed_version) {
  int version = VELOC_FAILURE;
  WithClient("VELOC_Restart_test", [&](VelocClient& c) {
    auto v = c.RestartTest(name, needed_version);
    if (!v.ok()) return v.status();
    version = *v < 0 ? VELOC_FAILURE : *v;
    return Status();
  });
  return version;
}

VELOC_EXPORT int VELOC_Restart_begin(const char* name, int version) {
  return WithClient("VELOC_Restart_begin",
                    [&](VelocClient& c) { return c.RestartBegin(name, version, false); });
}

VELOC_EXPORT int VELOC_Recover_selective(int mode, int* ids, int id_count) {
  return WithClient("VELOC_Recover_selective",
                    [&](VelocClient& c) { return c.RecoverSelective(mode, ids, id_count); });
}

VELOC_EXPORT int VELOC_Recover_size(int id) {
  int size = VELOC_FAILURE;
  WithClient("VELOC_Recover_size", [&](VelocClient& c) {
    auto bytes = c.RecoverSize(id);
    if (!bytes.ok()) return bytes.status();
    size = *bytes;
    return Status();
  });
  return size;
}

VELOC_EXPORT int VELOC_Recover_mem(void) {
  return VELOC_Recover_selective(VELOC_RECOVER_ALL, nullptr, 0);
}

VELOC_EXPORT int VELOC_Restart_end(int success) {
  // VeloC returns success whatever the flag; the flag only tells the
  // library how the application's own reads went.
  return WithClient("VELOC_Restart_end", [&](VelocClient& c) { return c.RestartEnd(); });
}

VELOC_EXPORT int VELOC_Restart(const char* name, int version) {
  int rc = WithClient("VELOC_Restart", [&](VelocClient& c) {
    Status st = c.RestartBegin(name, version, true);
    if (st.ok()) st = c.RecoverSelective(VELOC_RECOVER_ALL, nullptr, 0);
    Status end = c.RestartEnd();
    return st.ok() ? end : st;
  });
  return rc;
}
