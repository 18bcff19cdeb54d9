// veloc.cc — the VeloC C API (include/compat/veloc/veloc.h) over Cairn's
// public C API. One client per process, as in VeloC; each call maps to the
// Cairn calls in docs/compat.md. Errors are printed with their cause and
// returned as VELOC_FAILURE.
#include "veloc.h"

#include <unistd.h>

#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
#include "compat/veloc/veloc_config.h"

namespace cairn_compat {
namespace {

constexpr char kPeer[] = "VeloC";

struct Region {
  void* ptr = nullptr;
  size_t count = 0;
  size_t base_size = 0;
  size_t bytes() const { return count * base_size; }
};

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

// The ids a selective call picks out of the registered ones.
Result<std::set<int>> SelectIds(const std::map<int, Region>& regions, int mode, const int* ids,
                                int id_count) {
  std::set<int> listed;
  if (mode != VELOC_CKPT_ALL) {
    if (id_count < 0 || (id_count > 0 && ids == nullptr)) {
      return Status::Error("the id list is NULL or its length negative");
    }
    for (int i = 0; i < id_count; ++i) {
      if (!regions.count(ids[i])) {
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

class VelocClient {
 public:
  ~VelocClient() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
  }

  Status Init(MPI_Comm comm, const char* cfg_file, const std::string& path_suffix);
  Status Finalize(bool drain);

  Status Protect(int id, void* ptr, size_t count, size_t base_size);
  Status Unprotect(int id);
  Status Clear();
  Status RouteFile(const char* original, char* routed);

  Status CheckpointBegin(const char* name, int version);
  Status CheckpointSelective(int mode, const int* ids, int id_count);
  Status CheckpointEnd(bool success);

  Result<int> RestartTest(const char* name, int needed_version);
  Status RestartBegin(const char* name, int version, bool in_place);
  Status RecoverSelective(int mode, const int* ids, int id_count);
  Status RestartEnd();

 private:
  // Gives Cairn the application's own pointers for `ids`, none for the rest.
  Status ProtectOnly(const std::set<int>& ids);
  Result<bool> AllRanksSucceeded(bool success);
  Status FetchVersion(const std::string& name, int version);
  void RemoveFiles(std::vector<std::string>* paths);

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::map<int, Region> regions_;

  struct Phase {
    bool active = false;
    std::string name;
    int version = -1;
    std::set<int> ids;                // checkpoint: regions to save
    std::vector<std::string> routed;  // files routed in this phase
  };
  Phase checkpoint_;
  Phase restart_;
  // Restart phase: what Cairn restored, per region, until Recover copies it.
  std::map<int, std::vector<char>> staged_;
  bool memory_restored_ = false;  // the version had the registered regions
  bool in_place_ = false;         // restored straight into the app's memory
};

Status VelocClient::Init(MPI_Comm comm, const char* cfg_file, const std::string& path_suffix) {
  if (cfg_file == nullptr) return Status::Error("the configuration file name is NULL");
  auto settings = TranslateVelocConfig(cfg_file, path_suffix);
  // A rank whose file is unreadable still joins cairn_init (it fails there
  // too), so that no rank waits for it in a collective.
  CairnSettings fallback(kPeer);
  CairnSettings& use = settings.ok() ? *settings : fallback;
  if (!settings.ok()) use.Set("tiers.memory.capacity", std::string("invalid: see VeloC config"));
  if (comm != MPI_COMM_NULL) MPI_Comm_dup(comm, &comm_);
  Status st = use.Init(comm);
  if (!settings.ok()) return settings.status();
  return st;
}

Status VelocClient::Finalize(bool drain) {
  if (drain) {
    Status st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
    if (!st.ok()) ReportError(kPeer, st.message());
  }
  return CairnError(cairn_finalize(), "cairn_finalize");
}

Status VelocClient::Protect(int id, void* ptr, size_t count, size_t base_size) {
  Status st = CairnError(cairn_protect(id, ptr, count, base_size), "cairn_protect");
  if (st.ok()) regions_[id] = Region{ptr, count, base_size};
  return st;
}

Status VelocClient::Unprotect(int id) {
  Status st = CairnError(cairn_unprotect(id), "cairn_unprotect");
  if (st.ok()) regions_.erase(id);
  return st;
}

Status VelocClient::Clear() {
  while (!regions_.empty()) {
    Status st = Unprotect(regions_.begin()->first);
    if (!st.ok()) return st;
  }
  return Status();
}

Status VelocClient::RouteFile(const char* original, char* routed) {
  if (original == nullptr || routed == nullptr) return Status::Error("original or routed is NULL");
  std::string logical = RoutedFileName(AbsolutePath(original));
  int rc = cairn_route_file(logical.c_str(), routed, VELOC_MAX_NAME);
  if (rc < 0) return CairnError(rc, std::string("cairn_route_file for '") + original + "'");
  if (checkpoint_.active) checkpoint_.routed.emplace_back(routed);
  if (restart_.active) restart_.routed.emplace_back(routed);
  return Status();
}

Status VelocClient::CheckpointBegin(const char* name, int version) {
  if (checkpoint_.active || restart_.active) {
    return Status::Error("a checkpoint or restart phase is already open");
  }
  Status st = CheckNameAndVersion(name, version);
  if (!st.ok()) return st;
  checkpoint_ = Phase{true, name, version, {}, {}};
  return Status();
}

Status VelocClient::CheckpointSelective(int mode, const int* ids, int id_count) {
  if (!checkpoint_.active) return Status::Error("no checkpoint phase is open (VELOC_Checkpoint_begin)");
  auto chosen = SelectIds(regions_, mode, ids, id_count);
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

Status VelocClient::ProtectOnly(const std::set<int>& ids) {
  for (const auto& [id, r] : regions_) {
    int rc = ids.count(id) ? cairn_protect(id, r.ptr, r.count, r.base_size) : cairn_unprotect(id);
    if (rc < 0 && rc != CAIRN_E_NOT_FOUND) return CairnError(rc, "cairn_protect");
  }
  return Status();
}

void VelocClient::RemoveFiles(std::vector<std::string>* paths) {
  for (const auto& p : *paths) unlink(p.c_str());
  paths->clear();
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
  Status st = ProtectOnly(phase.ids);
  if (st.ok()) st = CairnError(cairn_checkpoint(phase.name.c_str(), phase.version), "cairn_checkpoint");
  std::set<int> every;
  for (const auto& [id, r] : regions_) every.insert(id);
  Status back = ProtectOnly(every);
  return st.ok() ? back : st;
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

// cairn_restart of exactly `version`; a fallback to an older one is an
// error here, since the application asked for this version's files.
Status VelocClient::FetchVersion(const std::string& name, int version) {
  int rc = cairn_restart(name.c_str(), version);
  if (rc < 0) return CairnError(rc, "cairn_restart of '" + name + "' version " + std::to_string(version));
  if (rc != version) {
    return Status::Error("version " + std::to_string(version) + " of '" + name +
                         "' is not recoverable; Cairn restored version " + std::to_string(rc) +
                         " instead (VELOC_Restart_test names the newest recoverable one)");
  }
  return Status();
}

Status VelocClient::RestartBegin(const char* name, int version, bool in_place) {
  if (checkpoint_.active || restart_.active) {
    return Status::Error("a checkpoint or restart phase is already open");
  }
  Status st = CheckNameAndVersion(name, version);
  if (!st.ok()) return st;
  // Staged: Cairn fills buffers of ours, and Recover copies out only the
  // regions asked for; in place (VELOC_Restart): the app's memory directly.
  staged_.clear();
  if (!in_place) {
    for (const auto& [id, r] : regions_) {
      auto& buf = staged_[id];
      buf.resize(r.bytes());
      // Same count and element size as the region: Cairn matches both.
      st = CairnError(cairn_protect(id, buf.data(), r.count, r.base_size), "cairn_protect");
      if (!st.ok()) break;
    }
  }
  if (st.ok()) st = FetchVersion(name, version);
  memory_restored_ = st.ok() && !regions_.empty();
  if (!st.ok() && !regions_.empty() && cairn_last_error() == CAIRN_E_MISMATCH) {
    // A files-only version (no VELOC_Checkpoint_mem): fetch its files, and
    // let a later Recover say that there is no memory to recover.
    std::set<int> none;
    st = ProtectOnly(none);
    if (st.ok()) st = FetchVersion(name, version);
  }
  std::set<int> every;
  for (const auto& [id, r] : regions_) every.insert(id);
  Status back = ProtectOnly(every);
  if (!st.ok()) staged_.clear();
  if (st.ok()) st = back;
  if (st.ok()) {
    restart_ = Phase{true, name, version, {}, {}};
    in_place_ = in_place;
  }
  return st;
}

Status VelocClient::RecoverSelective(int mode, const int* ids, int id_count) {
  if (!restart_.active) return Status::Error("no restart phase is open (VELOC_Restart_begin)");
  if (!memory_restored_) {
    return Status::Error("version " + std::to_string(restart_.version) + " of '" + restart_.name +
                         "' holds no memory regions matching the protected ones (ids, sizes)");
  }
  auto chosen = SelectIds(regions_, mode, ids, id_count);
  if (!chosen.ok()) return chosen.status();
  if (in_place_) return Status();
  for (int id : *chosen) {
    const auto& buf = staged_[id];
    std::memcpy(regions_[id].ptr, buf.data(), buf.size());
  }
  return Status();
}

Status VelocClient::RestartEnd() {
  if (!restart_.active) return Status::Error("no restart phase is open (VELOC_Restart_begin)");
  // The files the application read are part of the version it restored;
  // left in the routing directory they would join the next checkpoint.
  RemoveFiles(&restart_.routed);
  restart_ = Phase{};
  staged_.clear();
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
  return WithClient("VELOC_Mem_protect",
                    [&](VelocClient& c) { return c.Protect(id, ptr, count, base_size); });
}

VELOC_EXPORT int VELOC_Mem_unprotect(int id) {
  return WithClient("VELOC_Mem_unprotect", [&](VelocClient& c) { return c.Unprotect(id); });
}

VELOC_EXPORT int VELOC_Mem_clear(void) {
  return WithClient("VELOC_Mem_clear", [&](VelocClient& c) { return c.Clear(); });
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
