// scr.cc — the SCR C API (include/compat/scr/scr.h) over Cairn's public C
// API. Every checkpoint dataset is one version of the Cairn checkpoint
// "scr" (version = SCR dataset id); its name and flags travel in a small
// record protected as Cairn region 0, its files as Cairn routed files.
// Output-only datasets go straight to their path under the prefix.
#include "scr.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
#include "compat/scr/scr_config.h"
#include "compat/scr/scr_index.h"

namespace cairn_compat {
namespace {

constexpr char kPeer[] = "SCR";
constexpr char kCheckpointName[] = "scr";
constexpr int kRecordRegion = 0;

// What a checkpoint version says about its dataset (Cairn region 0).
struct DatasetRecord {
  int32_t id = 0;
  int32_t flags = 0;
  char name[SCR_MAX_FILENAME] = {};
};

// A file of the open phase: where the application writes (or reads) it,
// where SCR_FLAG_OUTPUT says it must end up, and whether the routed path is
// Cairn's (a cached file) or the file's own (output only, SCR_CACHE_BYPASS).
struct RoutedFile {
  std::string routed;
  std::string final_path;
  bool cached = true;
};

class ScrClient {
 public:
  ~ScrClient() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
  }

  Status Init();
  Status Finalize();
  Status RouteFile(const char* name, char* file);
  Status HaveRestart(int* flag, char* name);
  Status StartRestart(char* name);
  Status CompleteRestart(bool valid);
  Status NeedCheckpoint(int* flag);
  Status StartOutput(const char* name, int flags);
  Status CompleteOutput(bool valid);
  Status Current(const char* name);
  Status Drop(const char* name);
  Status Delete(const char* name);

 private:
  enum class State { kIdle, kOutput, kRestart };

  Result<bool> AllTrue(bool mine);
  Status PublishOutputFiles();
  void DiscardRoutedFiles();
  bool RoutesToOwnPath() const;
  Status CheckNoSharedFile();
  Status IndexDataset();
  Result<int> NewestUsableCheckpoint();
  Result<int> LiveDataset(const char* name) const;
  void DeleteFilesAndEmptyDirs(const std::vector<std::string>& files) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  ScrOptions options_;
  ScrIndex index_;
  State state_ = State::kIdle;
  DatasetRecord record_;          // protected as region 0
  int next_id_ = 1;
  long need_checkpoint_calls_ = 0;
  std::vector<RoutedFile> routed_;  // this phase's files
  // Restart: the newest version still to try, the fetched one, and whether
  // a restart already succeeded (then Have_restart says no).
  int restart_limit_ = -1;
  int fetched_version_ = -1;
  bool restarted_ = false;
};

Result<bool> ScrClient::AllTrue(bool mine) {
  int in = mine ? 1 : 0, all = 0;
  if (MPI_Allreduce(&in, &all, 1, MPI_INT, MPI_MIN, comm_) != MPI_SUCCESS) {
    return Status::Error("MPI_Allreduce of the valid flags failed");
  }
  return all == 1;
}

// SCR_Config's parameters: set before SCR_Init, read by it.
ScrConfigStore& AppParams() {
  static ScrConfigStore params;
  return params;
}

Status ScrClient::Init() {
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (!mpi_up) return Status::Error("MPI_Init must be called before SCR_Init");
  auto options = ReadScrOptions(AppParams());
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  // Every rank enters cairn_init, also one whose configuration failed, so
  // that no rank waits for it; the bad value fails cairn_init everywhere.
  if (!options.ok()) options_.cairn.Set("tiers.memory.capacity", std::string("invalid: see SCR config"));
  else options_ = std::move(*options);
  Status st = options_.cairn.Init(comm_);
  if (!options.ok()) return options.status();
  if (!st.ok()) return st;
  st = CairnError(cairn_protect(kRecordRegion, &record_, 1, sizeof record_), "cairn_protect");
  if (!st.ok()) return st;
  index_ = ScrIndex(options_.cairn.StateDir() + "/scr-index.json", comm_);
  st = index_.Load();
  if (!st.ok()) return st;
  int newest = cairn_restart_test(kCheckpointName, -1);
  if (newest < 0 && cairn_last_error() != CAIRN_SUCCESS) {
    return CairnError(cairn_last_error(), "cairn_restart_test");
  }
  // Ids never repeat, also after failed or dropped datasets.
  next_id_ = std::max(newest, index_.max_id()) + 1;
  if (index_.current()) restart_limit_ = *index_.current();
  return Status();
}

Status ScrClient::Finalize() {
  if (state_ != State::kIdle) ReportError(kPeer, "SCR_Finalize inside an open output or restart phase");
  return CairnError(cairn_finalize(), "cairn_finalize");
}

Status ScrClient::RouteFile(const char* name, char* file) {
  if (name == nullptr || name[0] == '\0' || file == nullptr) return Status::Error("name or file is NULL or empty");
  if (std::strlen(name) >= SCR_MAX_FILENAME) {
    return Status::Error(std::string("file name '") + name + "' is longer than SCR_MAX_FILENAME");
  }
  std::string final_path = AbsolutePath(name);
  if (state_ == State::kIdle) {
    // Outside a phase SCR hands the name back.
    std::snprintf(file, SCR_MAX_FILENAME, "%s", name);
    return Status();
  }
  if (RoutesToOwnPath()) {
    // Written (or read) where it belongs, since nothing of it is cached.
    if (state_ == State::kOutput) {
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(final_path).parent_path(), ec);
      if (ec) return Status::Error("cannot create the directory of '" + final_path + "': " + ec.message());
    } else if (access(final_path.c_str(), R_OK) != 0) {
      return Status::Error("'" + final_path + "' of dataset '" + record_.name +
                           "' (written with SCR_CACHE_BYPASS) cannot be read");
    }
    std::snprintf(file, SCR_MAX_FILENAME, "%s", final_path.c_str());
    // These files join the index (SCR_Delete removes them).
    routed_.push_back(RoutedFile{final_path, final_path, /*cached=*/false});
    return Status();
  }
  std::string logical = RoutedFileName(final_path);
  int rc = cairn_route_file(logical.c_str(), file, SCR_MAX_FILENAME);
  if (rc < 0) return CairnError(rc, "cairn_route_file for '" + final_path + "'");
  if (state_ == State::kRestart && access(file, R_OK) != 0) {
    return Status::Error("'" + final_path + "' is not a file of dataset '" + record_.name + "'");
  }
  routed_.push_back(RoutedFile{file, final_path});
  return Status();
}

Status ScrClient::HaveRestart(int* flag, char* name) {
  if (flag == nullptr) return Status::Error("flag is NULL");
  *flag = 0;
  if (state_ != State::kIdle) return Status::Error("called inside an open output or restart phase");
  if (restarted_) return Status();
  auto newest = NewestUsableCheckpoint();
  if (!newest.ok()) return newest.status();
  int version = *newest;
  if (version < 0) return Status();
  // Fetch now: the dataset's name is inside the version.
  int rc = cairn_restart(kCheckpointName, version);
  if (rc < 0) return CairnError(rc, "cairn_restart of dataset " + std::to_string(version));
  fetched_version_ = rc;
  *flag = 1;
  if (name != nullptr) std::snprintf(name, SCR_MAX_FILENAME, "%s", record_.name);
  return Status();
}

// The newest checkpoint at or below restart_limit_ that every rank can
// recover and the index does not mark failed or dropped, or -1.
Result<int> ScrClient::NewestUsableCheckpoint() {
  for (int limit = restart_limit_;;) {
    int version = cairn_restart_test(kCheckpointName, limit);
    if (version < 0) {
      if (cairn_last_error() != CAIRN_SUCCESS) return CairnError(cairn_last_error(), "cairn_restart_test");
      return -1;
    }
    if (index_.Usable(version)) return version;
    if (version == 0) return -1;
    limit = version - 1;
  }
}

Status ScrClient::StartRestart(char* name) {
  if (state_ != State::kIdle || fetched_version_ < 0) {
    return Status::Error("no restart is available (call SCR_Have_restart first)");
  }
  state_ = State::kRestart;
  if (name != nullptr) std::snprintf(name, SCR_MAX_FILENAME, "%s", record_.name);
  return Status();
}

Status ScrClient::CompleteRestart(bool valid) {
  if (state_ != State::kRestart) return Status::Error("no restart phase is open (SCR_Start_restart)");
  state_ = State::kIdle;
  // Read by now; left in the routing directory they would join the next
  // checkpoint.
  DiscardRoutedFiles();
  auto all = AllTrue(valid);
  if (!all.ok()) return all.status();
  int version = fetched_version_;
  fetched_version_ = -1;
  if (!*all) {
    // As SCR: this dataset is marked failed in the index, for this run and
    // the next ones; Have_restart offers the next older.
    restart_limit_ = version - 1;
    Status marked = index_.MarkFailed(version);
    if (!marked.ok()) return marked;
    return Status::Error("a rank could not read dataset '" + std::string(record_.name) + "' (id " +
                         std::to_string(version) + "); the next SCR_Have_restart offers an older one");
  }
  restarted_ = true;
  return Status();
}

Status ScrClient::NeedCheckpoint(int* flag) {
  if (flag == nullptr) return Status::Error("flag is NULL");
  *flag = 0;
  if (state_ != State::kIdle) return Status::Error("called inside an open output or restart phase");
  ++need_checkpoint_calls_;
  // Every rank counts the same calls: the answer agrees without a message.
  const int interval = options_.checkpoint_interval;
  if (interval > 0 && need_checkpoint_calls_ % interval == 0) *flag = 1;
  if (options_.checkpoint_seconds > 0) {
    int due = cairn_should_checkpoint();  // collective, same answer everywhere
    if (due < 0) return CairnError(due, "cairn_should_checkpoint");
    if (due == 1) *flag = 1;
  }
  return Status();
}

Status ScrClient::StartOutput(const char* name, int flags) {
  if (state_ != State::kIdle) return Status::Error("an output or restart phase is already open");
  if ((flags & ~(SCR_FLAG_CHECKPOINT | SCR_FLAG_OUTPUT)) != 0) {
    return Status::Error("unknown flags " + std::to_string(flags));
  }
  int id = next_id_++;
  std::string dataset = name == nullptr || name[0] == '\0' ? "scr.dataset." + std::to_string(id) : name;
  if (dataset.size() >= SCR_MAX_FILENAME || dataset.find('/') != std::string::npos) {
    return Status::Error("dataset name '" + dataset + "' must be shorter than SCR_MAX_FILENAME, without '/'");
  }
  record_ = DatasetRecord{};
  record_.id = id;
  record_.flags = flags;
  std::snprintf(record_.name, sizeof record_.name, "%s", dataset.c_str());
  routed_.clear();
  state_ = State::kOutput;
  return Status();
}

void ScrClient::DiscardRoutedFiles() {
  for (const auto& f : routed_) {
    if (f.cached) unlink(f.routed.c_str());
  }
  routed_.clear();
}

// Whether the open phase's files are at their own paths: an output-only
// dataset's, and a checkpoint's written, or being restarted, with
// SCR_CACHE_BYPASS.
bool ScrClient::RoutesToOwnPath() const {
  if (state_ == State::kOutput) {
    return !(record_.flags & SCR_FLAG_CHECKPOINT) || options_.cache_bypass;
  }
  auto dataset = index_.datasets().find(fetched_version_);
  return state_ == State::kRestart && dataset != index_.datasets().end() && dataset->second.bypass;
}

// Collective. Cairn caches each rank's files apart, so a file that several
// ranks write together (SCR's shared-file mode) cannot be cached: it is
// refused, naming SCR_CACHE_BYPASS, before any version is made of it.
Status ScrClient::CheckNoSharedFile() {
  std::vector<std::string> mine;
  for (const auto& f : routed_) {
    if (f.cached) mine.push_back(f.final_path);
  }
  auto all = GatherStrings(mine, comm_);
  if (!all.ok()) return all.status();
  std::sort(all->begin(), all->end());
  auto shared = std::adjacent_find(all->begin(), all->end());
  std::string name = shared != all->end() ? *shared : "";
  BroadcastString(&name, comm_);
  if (name.empty()) return Status();
  return Status::Error("'" + name + "' was routed by more than one rank: Cairn caches each rank's "
                       "files apart, so a file shared by ranks needs SCR_CACHE_BYPASS=1 (written "
                       "at its own path under the prefix)");
}

// A checkpoint that is also output: its cached files are copied to their
// paths under the prefix before Cairn takes them into the version.
Status ScrClient::PublishOutputFiles() {
  for (const auto& f : routed_) {
    if (!f.cached) continue;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(f.final_path).parent_path(), ec);
    if (!ec) {
      std::filesystem::copy_file(f.routed, f.final_path,
                                 std::filesystem::copy_options::overwrite_existing, ec);
    }
    if (ec) return Status::Error("cannot copy '" + f.routed + "' to '" + f.final_path + "': " + ec.message());
  }
  return Status();
}

Status ScrClient::CompleteOutput(bool valid) {
  if (state_ != State::kOutput) return Status::Error("no output phase is open (SCR_Start_output)");
  state_ = State::kIdle;
  bool checkpoint = record_.flags & SCR_FLAG_CHECKPOINT;
  if (checkpoint) {
    Status unshared = CheckNoSharedFile();
    if (!unshared.ok()) {
      DiscardRoutedFiles();
      return unshared;
    }
  }
  Status published;
  if (valid && checkpoint && (record_.flags & SCR_FLAG_OUTPUT)) published = PublishOutputFiles();
  if (!published.ok()) ReportError(kPeer, published.message());
  auto all = AllTrue(valid && published.ok());
  if (!all.ok()) return all.status();
  if (!*all) {
    if (checkpoint) DiscardRoutedFiles();
    return Status::Error("dataset '" + std::string(record_.name) +
                         "' discarded: a rank completed it with valid = 0");
  }
  if (checkpoint) {
    Status st = CairnError(cairn_checkpoint(kCheckpointName, record_.id),
                           "cairn_checkpoint of dataset '" + std::string(record_.name) + "'");
    if (!st.ok()) {
      routed_.clear();
      return st;
    }
  }
  return IndexDataset();
}

// Enters the completed dataset in the index, with every rank's output
// files (for SCR_Delete); a new checkpoint supersedes SCR_Current's mark.
Status ScrClient::IndexDataset() {
  const bool bypass = (record_.flags & SCR_FLAG_CHECKPOINT) && options_.cache_bypass;
  std::vector<std::string> mine;
  if ((record_.flags & SCR_FLAG_OUTPUT) || bypass) {
    for (const auto& f : routed_) mine.push_back(f.final_path);
  }
  routed_.clear();
  auto files = GatherStrings(mine, comm_);
  if (!files.ok()) return files.status();
  // A shared file is listed once.
  std::sort(files->begin(), files->end());
  files->erase(std::unique(files->begin(), files->end()), files->end());
  Status st = index_.Add(record_.id, ScrDataset{record_.name, record_.flags, false, false, *files, bypass});
  if (st.ok() && (record_.flags & SCR_FLAG_CHECKPOINT)) {
    // Also in this run: the next restart starts from the newest again.
    restart_limit_ = -1;
    st = index_.ClearCurrent();
  }
  return st;
}

Result<int> ScrClient::LiveDataset(const char* name) const {
  if (name == nullptr || name[0] == '\0') return Status::Error("the dataset name is NULL or empty");
  auto id = index_.Find(name);
  if (!id) return Status::Error(std::string("no dataset named '") + name + "' in the index");
  return *id;
}

Status ScrClient::Current(const char* name) {
  if (state_ != State::kIdle) return Status::Error("called inside an open output or restart phase");
  auto id = LiveDataset(name);
  if (!id.ok()) return id.status();
  if (!(index_.datasets().at(*id).flags & SCR_FLAG_CHECKPOINT)) {
    return Status::Error(std::string("dataset '") + name + "' is not a checkpoint");
  }
  // SCR accepts only a checkpoint it can fetch; dropping the newer ones
  // for one that cannot be restored would leave the job nothing to restart.
  int restorable = cairn_restart_test(kCheckpointName, *id);
  if (restorable < 0 && cairn_last_error() != CAIRN_SUCCESS) {
    return CairnError(cairn_last_error(), "cairn_restart_test");
  }
  if (restorable != *id) {
    return Status::Error(std::string("checkpoint '") + name + "' (id " + std::to_string(*id) +
                         ") can no longer be restored on every rank; nothing was changed");
  }
  // The next restart starts from it; the checkpoints after it are dropped,
  // as SCR deletes them from its cache.
  restart_limit_ = *id;
  restarted_ = false;
  return index_.SetCurrent(*id);
}

Status ScrClient::Drop(const char* name) {
  if (state_ != State::kIdle) return Status::Error("called inside an open output or restart phase");
  auto id = LiveDataset(name);
  if (!id.ok()) return id.status();
  return index_.Drop(*id);
}

void ScrClient::DeleteFilesAndEmptyDirs(const std::vector<std::string>& files) const {
  namespace fs = std::filesystem;
  const fs::path prefix = fs::path(options_.prefix).lexically_normal();
  for (const auto& file : files) {
    std::error_code ec;
    fs::remove(file, ec);
    // Directories left empty, up to (not including) the prefix, as SCR.
    for (fs::path dir = fs::path(file).parent_path().lexically_normal();
         dir != prefix && dir.string().rfind(prefix.string(), 0) == 0; dir = dir.parent_path()) {
      if (!fs::is_empty(dir, ec) || ec || !fs::remove(dir, ec)) break;
    }
  }
}

// SCR deletes the dataset's files from the prefix and the cache: a
// checkpoint's Cairn version goes from every tier too.
Status ScrClient::Delete(const char* name) {
  if (state_ != State::kIdle) return Status::Error("called inside an open output or restart phase");
  auto id = LiveDataset(name);
  if (!id.ok()) return id.status();
  if (index_.datasets().at(*id).flags & SCR_FLAG_CHECKPOINT) {
    Status st = CairnError(cairn_delete_version(kCheckpointName, *id),
                           "cairn_delete_version of dataset '" + std::string(name) + "'");
    if (!st.ok()) return st;
  }
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank == 0) DeleteFilesAndEmptyDirs(index_.datasets().at(*id).files);
  return index_.Drop(*id);
}

std::unique_ptr<ScrClient> g_client;  // SCR's API is per process

int Report(const std::string& call, const Status& st) {
  if (st.ok()) return SCR_SUCCESS;
  ReportError(kPeer, call + ": " + st.message());
  return SCR_FAILURE;
}

// SCR_Config: a set or unset (only before SCR_Init) changes the stored
// parameters; a query returns the value SCR would use, or nullopt.
Result<std::optional<std::string>> Configure(const char* config, bool initialized) {
  if (config == nullptr) return Status::Error("config is NULL");
  ScrConfigStore trial = AppParams();
  auto query = trial.Apply(config);
  if (!query.ok()) return query.status();
  if (*query) return LookupScrParam(**query, AppParams());
  if (initialized) {
    return Status::Error(std::string("'") + config + "': parameters are set before SCR_Init");
  }
  AppParams() = std::move(trial);
  return std::optional<std::string>();
}

template <typename Body>
int WithClient(const char* call, Body body) {
  if (!g_client) return Report(call, Status::Error("SCR is not initialized"));
  return Report(call, body(*g_client));
}

}  // namespace
}  // namespace cairn_compat

using cairn_compat::g_client;
using cairn_compat::ScrClient;
using cairn_compat::WithClient;

#define SCR_EXPORT extern "C" __attribute__((visibility("default")))

SCR_EXPORT int SCR_Init(void) {
  if (g_client) return cairn_compat::Report("SCR_Init", cairn_compat::Status::Error("already initialized"));
  auto client = std::make_unique<ScrClient>();
  auto st = client->Init();
  if (st.ok()) g_client = std::move(client);
  return cairn_compat::Report("SCR_Init", st);
}

SCR_EXPORT int SCR_Finalize(void) {
  int rc = WithClient("SCR_Finalize", [](ScrClient& c) { return c.Finalize(); });
  g_client.reset();
  return rc;
}

SCR_EXPORT int SCR_Route_file(const char* name, char* file) {
  return WithClient("SCR_Route_file", [&](ScrClient& c) { return c.RouteFile(name, file); });
}

SCR_EXPORT int SCR_Have_restart(int* flag, char* name) {
  return WithClient("SCR_Have_restart", [&](ScrClient& c) { return c.HaveRestart(flag, name); });
}

SCR_EXPORT int SCR_Start_restart(char* name) {
  return WithClient("SCR_Start_restart", [&](ScrClient& c) { return c.StartRestart(name); });
}

SCR_EXPORT int SCR_Complete_restart(int valid) {
  return WithClient("SCR_Complete_restart", [&](ScrClient& c) { return c.CompleteRestart(valid != 0); });
}

SCR_EXPORT int SCR_Need_checkpoint(int* flag) {
  return WithClient("SCR_Need_checkpoint", [&](ScrClient& c) { return c.NeedCheckpoint(flag); });
}

SCR_EXPORT int SCR_Start_checkpoint(void) {
  return WithClient("SCR_Start_checkpoint",
                    [](ScrClient& c) { return c.StartOutput(nullptr, SCR_FLAG_CHECKPOINT); });
}

SCR_EXPORT int SCR_Complete_checkpoint(int valid) {
  return WithClient("SCR_Complete_checkpoint", [&](ScrClient& c) { return c.CompleteOutput(valid != 0); });
}

SCR_EXPORT int SCR_Start_output(const char* name, int flags) {
  return WithClient("SCR_Start_output", [&](ScrClient& c) { return c.StartOutput(name, flags); });
}

SCR_EXPORT int SCR_Complete_output(int valid) {
  return WithClient("SCR_Complete_output", [&](ScrClient& c) { return c.CompleteOutput(valid != 0); });
}

SCR_EXPORT int SCR_Current(const char* name) {
  return WithClient("SCR_Current", [&](ScrClient& c) { return c.Current(name); });
}

SCR_EXPORT int SCR_Drop(const char* name) {
  return WithClient("SCR_Drop", [&](ScrClient& c) { return c.Drop(name); });
}

SCR_EXPORT int SCR_Delete(const char* name) {
  return WithClient("SCR_Delete", [&](ScrClient& c) { return c.Delete(name); });
}

SCR_EXPORT const char* SCR_Config(const char* config) {
  auto value = cairn_compat::Configure(config, g_client != nullptr);
  if (!value.ok()) {
    cairn_compat::Report("SCR_Config", value.status());
    return nullptr;
  }
  // A query's value is the caller's to free(), as in SCR.
  return *value ? strdup((*value)->c_str()) : nullptr;
}

SCR_EXPORT const char* SCR_Configf(const char* format, ...) {
  if (format == nullptr) return SCR_Config(nullptr);
  va_list args;
  va_start(args, format);
  char* text = nullptr;
  int n = vasprintf(&text, format, args);
  va_end(args);
  if (n < 0) {
    cairn_compat::Report("SCR_Configf", cairn_compat::Status::Error("cannot format the parameter"));
    return nullptr;
  }
  const char* value = SCR_Config(text);
  free(text);
  return value;
}

SCR_EXPORT char* SCR_Get_version(void) {
  // SCR's API level this layer serves, and the Cairn behind it.
  static char version[64];
  int v = cairn_version();
  std::snprintf(version, sizeof version, "3.0 (Cairn %d.%d.%d)", v / 10000, v / 100 % 100, v % 100);
  return version;
}

SCR_EXPORT int SCR_Should_exit(int* flag) {
  return WithClient("SCR_Should_exit", [&](ScrClient&) {
    if (flag == nullptr) return cairn_compat::Status::Error("flag is NULL");
    *flag = 0;
    return cairn_compat::Status();
  });
}
