// fti.cc — the FTI C API (include/compat/fti/fti.h) over Cairn's public C
// API. Checkpoint id = version of the Cairn checkpoint "fti"; levels map to
// Cairn's tiers (docs/compat.md): 1 wherever [placement] puts it, 2 and 3
// the SSD tier (partner and Reed-Solomon groups are not in this Cairn),
// 4 the SSD tier and then the global directory before the call returns.
#include "fti.h"

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
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

 private:
  int DueLevel();

  FtiOptions options_;
  std::map<fti_id_t, size_t> type_sizes_ = {
      {FTI_CHAR, sizeof(char)},  {FTI_SHRT, sizeof(short)},  {FTI_INTG, sizeof(int)},
      {FTI_LONG, sizeof(long)},  {FTI_UCHR, sizeof(unsigned char)},
      {FTI_USHT, sizeof(unsigned short)}, {FTI_UINT, sizeof(unsigned)},
      {FTI_ULNG, sizeof(unsigned long)}, {FTI_SFLT, sizeof(float)}, {FTI_DBLE, sizeof(double)},
      {FTI_LDBE, sizeof(long double)}};
  bool recovery_pending_ = false;
  bool warned_level_[5] = {};
  double start_seconds_ = 0;
  int snapshot_count_ = 0;       // checkpoints FTI_Snapshot took (its ids)
  int next_due_minutes_[5] = {};  // per level, minutes after init
};

Status FtiClient::Init(const char* config_file, MPI_Comm comm) {
  if (config_file == nullptr) return Status::Error("the configuration file name is NULL");
  auto options = ReadFtiConfig(config_file);
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
  return CairnError(cairn_protect(id, ptr, static_cast<size_t>(count), size->second),
                    "cairn_protect of variable " + std::to_string(id));
}

Status FtiClient::Checkpoint(int id, int level) {
  if (level < 1 || level > 4) return Status::Error("level " + std::to_string(level) + " is not 1..4");
  if ((level == 2 || level == 3) && !warned_level_[level]) {
    warned_level_[level] = true;
    int rank = 0;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::fprintf(stderr, "FTI (Cairn): warning: level %d checkpoints go to the SSD tier "
                   "(cross-node %s is not in this Cairn)\n", level, level == 2 ? "partner copy" : "Reed-Solomon");
    }
  }
  unsigned flags = level == 1 ? 0u : CAIRN_CHECKPOINT_DURABLE;
  Status st = CairnError(cairn_checkpoint_flags(kCheckpointName, id, flags),
                         "cairn_checkpoint of checkpoint " + std::to_string(id));
  // Level 4 is on the global file system when FTI_Checkpoint returns.
  if (st.ok() && level == 4) st = CairnError(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  return st;
}

Result<bool> FtiClient::Recover() {
  int newest = cairn_restart_test(kCheckpointName, -1);
  if (newest < 0) {
    if (cairn_last_error() != CAIRN_SUCCESS) return CairnError(cairn_last_error(), "cairn_restart_test");
    return false;
  }
  int rc = cairn_restart(kCheckpointName, newest);
  if (rc < 0) return CairnError(rc, "cairn_restart of checkpoint " + std::to_string(newest));
  recovery_pending_ = false;
  snapshot_count_ = rc + 1;
  return true;
}

// The highest level whose interval has passed (FTI_Snapshot's rule), or -1;
// the elapsed minutes are the slowest rank's, so every rank agrees.
int FtiClient::DueLevel() {
  int mine = static_cast<int>((MPI_Wtime() - start_seconds_) / 60), minutes = mine;
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
  if (st.ok() && !options_.keep_last_checkpoint) st = CairnError(cairn_delete(kCheckpointName), "cairn_delete");
  Status done = CairnError(cairn_finalize(), "cairn_finalize");
  return st.ok() ? done : st;
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
  if (cairn_compat::g_client) return Report("FTI_Init", cairn_compat::Status::Error("already initialized"));
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
