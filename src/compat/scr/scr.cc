// scr.cc — the SCR C API (include/compat/scr/scr.h) over Cairn's public C
// API. Every checkpoint dataset is one version of the Cairn checkpoint
// "scr" (version = SCR dataset id); its name and flags travel in a small
// record protected as Cairn region 0, its files as Cairn routed files.
// Output-only datasets go straight to their path under the prefix.
#include "scr.h"

#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cairn/cairn.h"
#include "compat/common/cairn_settings.h"
#include "compat/scr/scr_config.h"

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

// A file of the open output phase: where the application writes it, and
// where SCR_FLAG_OUTPUT says it must end up.
struct RoutedFile {
  std::string routed;
  std::string final_path;
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

 private:
  enum class State { kIdle, kOutput, kRestart };

  Result<bool> AllTrue(bool mine);
  Status PublishOutputFiles();
  void DiscardRoutedFiles();

  MPI_Comm comm_ = MPI_COMM_NULL;
  ScrOptions options_;
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

Status ScrClient::Init() {
  int mpi_up = 0;
  MPI_Initialized(&mpi_up);
  if (!mpi_up) return Status::Error("MPI_Init must be called before SCR_Init");
  auto options = ReadScrOptions();
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
  int newest = cairn_restart_test(kCheckpointName, -1);
  if (newest < 0 && cairn_last_error() != CAIRN_SUCCESS) {
    return CairnError(cairn_last_error(), "cairn_restart_test");
  }
  next_id_ = newest < 0 ? 1 : newest + 1;
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
  bool output_only = state_ == State::kOutput && !(record_.flags & SCR_FLAG_CHECKPOINT);
  if (state_ == State::kIdle || output_only) {
    // Outside a phase SCR hands the name back; an output-only dataset is
    // written where it belongs, since nothing of it is cached.
    if (output_only) {
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(final_path).parent_path(), ec);
      if (ec) return Status::Error("cannot create the directory of '" + final_path + "': " + ec.message());
    }
    std::snprintf(file, SCR_MAX_FILENAME, "%s", state_ == State::kIdle ? name : final_path.c_str());
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
  int version = cairn_restart_test(kCheckpointName, restart_limit_);
  if (version < 0) return CairnError(cairn_last_error(), "cairn_restart_test");
  // Fetch now: the dataset's name is inside the version.
  int rc = cairn_restart(kCheckpointName, version);
  if (rc < 0) return CairnError(rc, "cairn_restart of dataset " + std::to_string(version));
  fetched_version_ = rc;
  *flag = 1;
  if (name != nullptr) std::snprintf(name, SCR_MAX_FILENAME, "%s", record_.name);
  return Status();
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
    // As SCR: this dataset is skipped; Have_restart offers the next older.
    restart_limit_ = version - 1;
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
  for (const auto& f : routed_) unlink(f.routed.c_str());
  routed_.clear();
}

// A checkpoint that is also output: its files are copied to their paths
// under the prefix before Cairn takes them into the version.
Status ScrClient::PublishOutputFiles() {
  for (const auto& f : routed_) {
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
  routed_.clear();
  if (!checkpoint) return Status();
  return CairnError(cairn_checkpoint(kCheckpointName, record_.id),
                    "cairn_checkpoint of dataset '" + std::string(record_.name) + "'");
}

std::unique_ptr<ScrClient> g_client;  // SCR's API is per process

int Report(const std::string& call, const Status& st) {
  if (st.ok()) return SCR_SUCCESS;
  ReportError(kPeer, call + ": " + st.message());
  return SCR_FAILURE;
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

SCR_EXPORT int SCR_Should_exit(int* flag) {
  return WithClient("SCR_Should_exit", [&](ScrClient&) {
    if (flag == nullptr) return cairn_compat::Status::Error("flag is NULL");
    *flag = 0;
    return cairn_compat::Status();
  });
}
