// The C API: a process-wide Engine behind the functions of cairn.h. The one
// piece of global state in Cairn lives here, because the C API has no handle
// (its shape is fixed by DESIGN.md); everything below takes it explicitly.
#include "cairn/cairn.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "base/config.h"
#include "base/status.h"
#include "comm/mpi_comm.h"
#include "env/env.h"
#include "runtime/engine.h"

namespace cairn {
namespace {

static_assert(CAIRN_E_INVALID_ARGUMENT == static_cast<int>(Code::kInvalidArgument));
static_assert(CAIRN_E_NOT_INITIALIZED == static_cast<int>(Code::kNotInitialized));
static_assert(CAIRN_E_ALREADY_INITIALIZED == static_cast<int>(Code::kAlreadyInitialized));
static_assert(CAIRN_E_CONFIG == static_cast<int>(Code::kConfig));
static_assert(CAIRN_E_IO == static_cast<int>(Code::kIo));
static_assert(CAIRN_E_NO_SPACE == static_cast<int>(Code::kNoSpace));
static_assert(CAIRN_E_CORRUPT == static_cast<int>(Code::kCorrupt));
static_assert(CAIRN_E_NOT_FOUND == static_cast<int>(Code::kNotFound));
static_assert(CAIRN_E_MISMATCH == static_cast<int>(Code::kMismatch));
static_assert(CAIRN_E_COMM == static_cast<int>(Code::kComm));
static_assert(CAIRN_E_INTERNAL == static_cast<int>(Code::kInternal));
static_assert(CAIRN_E_UNSUPPORTED == static_cast<int>(Code::kUnsupported));

struct Instance {
  std::mutex mu;
  std::unique_ptr<Engine> engine;          // GUARDED_BY(mu)
  std::optional<RestartReport> restarted;  // GUARDED_BY(mu): the last successful restart
};

Instance& TheInstance() {
  static Instance* instance = new Instance();  // never destroyed: usable at exit
  return *instance;
}

thread_local int t_last_code = CAIRN_SUCCESS;
thread_local std::string t_last_message;

int Report(const Status& s) {
  t_last_code = static_cast<int>(s.code());
  t_last_message = s.ToString();
  return t_last_code;
}

Status NotInitialized(const char* call) {
  return Error(Code::kNotInitialized, "{}: Cairn is not initialized (call cairn_init first)",
               call);
}

// Copies text into a fixed char array, truncated and always terminated.
template <size_t N>
void CopyText(const std::string& text, char (&out)[N]) {
  size_t n = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

Result<Config> LoadProcessConfig(const char* config_path) {
  return LoadConfig(config_path, ProcessEnvLookup(), ProcessEnvNames(),
                    [](const std::string& path, uint64_t max_bytes) {
                      return PosixEnv()->ReadFileUpTo(path, max_bytes);
                    });
}

// Runs fn(engine) under the lock, or reports that there is no engine.
template <typename Fn>
int WithEngine(const char* call, Fn fn) {
  Instance& inst = TheInstance();
  std::lock_guard<std::mutex> lock(inst.mu);
  if (!inst.engine) return Report(NotInitialized(call));
  return fn(*inst.engine);
}

int Checkpoint(const char* call, const char* name, int version, unsigned flags) {
  if (name == nullptr) return Report(Error(Code::kInvalidArgument, "{}: name is NULL", call));
  if ((flags & ~CAIRN_CHECKPOINT_DURABLE) != 0) {
    return Report(Error(Code::kInvalidArgument, "{}: unknown flag bits {:#x}", call,
                        flags & ~CAIRN_CHECKPOINT_DURABLE));
  }
  return WithEngine(call, [&](Engine& e) {
    Status s = e.Checkpoint(name, version, (flags & CAIRN_CHECKPOINT_DURABLE) != 0);
    return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s.Annotate(call));
  });
}

int Init(Result<Config> config, Result<std::unique_ptr<Comm>> comm) {
  Instance& inst = TheInstance();
  if (!comm.ok()) return Report(comm.status());
  // The configuration is read by each rank; all must agree that it is good
  // before any rank goes on, or the others would wait in a collective.
  Status agreed = (*comm)->Agree(config.status());
  if (!agreed.ok()) return Report(agreed);
  auto engine = Engine::Create(std::move(comm).value(), *config, PosixEnv(), Clock::Real());
  if (!engine.ok()) return Report(engine.status());
  inst.engine = std::move(engine).value();
  return CAIRN_SUCCESS;
}

}  // namespace
}  // namespace cairn

using cairn::Code;
using cairn::Error;
using cairn::Report;
using cairn::Status;

extern "C" {

int cairn_version(void) { return CAIRN_VERSION_NUMBER; }

int cairn_init(MPI_Comm comm, const char* config_path) {
  cairn::Instance& inst = cairn::TheInstance();
  std::lock_guard<std::mutex> lock(inst.mu);
  if (inst.engine) {
    return Report(Error(Code::kAlreadyInitialized, "cairn_init: Cairn is already initialized"));
  }
  auto config = cairn::LoadProcessConfig(config_path);
  // Every rank builds the communicator the same way, good config or not.
  auto mpi = cairn::NewMpiComm(comm, config.ok() ? config->ranks_per_node : 0);
  return cairn::Init(std::move(config), std::move(mpi));
}

int cairn_init_single(const char* config_path) {
  cairn::Instance& inst = cairn::TheInstance();
  std::lock_guard<std::mutex> lock(inst.mu);
  if (inst.engine) {
    return Report(Error(Code::kAlreadyInitialized, "cairn_init_single: Cairn is already initialized"));
  }
  return cairn::Init(cairn::LoadProcessConfig(config_path), cairn::NewSingleComm());
}

int cairn_protect(int id, void* ptr, size_t count, size_t elem_size) {
  return cairn::WithEngine("cairn_protect", [&](cairn::Engine& e) {
    Status s = e.Protect(id, ptr, count, elem_size);
    return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s.Annotate("cairn_protect"));
  });
}

int cairn_unprotect(int id) {
  return cairn::WithEngine("cairn_unprotect", [&](cairn::Engine& e) {
    Status s = e.Unprotect(id);
    return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s.Annotate("cairn_unprotect"));
  });
}

int cairn_checkpoint(const char* name, int version) {
  return cairn::Checkpoint("cairn_checkpoint", name, version, 0);
}

int cairn_checkpoint_flags(const char* name, int version, unsigned flags) {
  return cairn::Checkpoint("cairn_checkpoint_flags", name, version, flags);
}

int cairn_last_checkpoint(cairn_checkpoint_info* info) {
  if (info == nullptr) {
    return Report(Error(Code::kInvalidArgument, "cairn_last_checkpoint: info is NULL"));
  }
  return cairn::WithEngine("cairn_last_checkpoint", [&](cairn::Engine& e) {
    const cairn::CheckpointReport& r = e.last_checkpoint();
    if (r.version < 0) {
      return Report(Error(Code::kNotFound, "cairn_last_checkpoint: no checkpoint yet"));
    }
    *info = cairn_checkpoint_info{};
    info->version = static_cast<int>(r.version);
    info->number = static_cast<int>(r.number);
    info->skipped = r.placement == cairn::Placement::kSkip;
    info->forced = r.forced;
    cairn::CopyText(info->skipped ? "" : cairn::TierKindName(r.tier), info->tier);
    cairn::CopyText(cairn::ClcRuleName(r.rule), info->rule);
    info->seconds = r.seconds;
    info->bytes = r.bytes;
    cairn::CopyText(r.reason, info->reason);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_should_checkpoint(void) {
  return cairn::WithEngine("cairn_should_checkpoint", [&](cairn::Engine& e) {
    auto due = e.ShouldCheckpoint();
    if (!due.ok()) return Report(due.status().Annotate("cairn_should_checkpoint"));
    return *due ? 1 : 0;
  });
}

int cairn_checkpoint_wait(void) {
  return cairn::WithEngine("cairn_checkpoint_wait", [&](cairn::Engine& e) {
    Status s = e.Wait();
    return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s.Annotate("cairn_checkpoint_wait"));
  });
}

int cairn_restart_test(const char* name, int max_version) {
  if (name == nullptr) {
    Report(Error(Code::kInvalidArgument, "cairn_restart_test: name is NULL"));
    return -1;
  }
  int rc = cairn::WithEngine("cairn_restart_test", [&](cairn::Engine& e) {
    auto v = e.RestartTest(name, max_version);
    if (!v.ok()) {
      Report(v.status().Annotate("cairn_restart_test"));
      return -1;
    }
    return static_cast<int>(*v);
  });
  return rc < -1 ? -1 : rc;
}

int cairn_restart(const char* name, int version) {
  if (name == nullptr) return Report(Error(Code::kInvalidArgument, "cairn_restart: name is NULL"));
  return cairn::WithEngine("cairn_restart", [&](cairn::Engine& e) {
    auto report = e.Restart(name, version);
    if (!report.ok()) return Report(report.status().Annotate("cairn_restart"));
    cairn::TheInstance().restarted = *report;  // WithEngine holds the lock
    return static_cast<int>(report->version);
  });
}

int cairn_last_restart(cairn_restart_info* info) {
  if (info == nullptr) {
    return Report(Error(Code::kInvalidArgument, "cairn_last_restart: info is NULL"));
  }
  return cairn::WithEngine("cairn_last_restart", [&](cairn::Engine&) {
    const auto& r = cairn::TheInstance().restarted;
    if (!r) return Report(Error(Code::kNotFound, "cairn_last_restart: no restart yet"));
    *info = cairn_restart_info{};
    info->requested = static_cast<int>(r->requested);
    info->version = static_cast<int>(r->version);
    info->newest = static_cast<int>(r->newest);
    info->rollback_versions = static_cast<int>(r->rollback_versions);
    info->rollback_seconds = r->rollback_seconds;
    info->versions_failed = r->versions_failed;
    cairn::CopyText(r->tier, info->tier);
    info->bytes = r->bytes;
    info->seconds = r->seconds;
    info->ecc_shards_corrected = r->ecc_shards_corrected;
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_route_file(const char* logical, char* path_out, size_t len) {
  if (logical == nullptr || path_out == nullptr) {
    return Report(Error(Code::kInvalidArgument, "cairn_route_file: {} is NULL",
                        logical == nullptr ? "logical name" : "path_out"));
  }
  return cairn::WithEngine("cairn_route_file", [&](cairn::Engine& e) {
    auto path = e.RouteFile(logical);
    if (!path.ok()) return Report(path.status().Annotate("cairn_route_file"));
    if (path->size() + 1 > len) {
      return Report(Error(Code::kInvalidArgument,
                          "cairn_route_file: path_out holds {} bytes, the path needs {}", len,
                          path->size() + 1));
    }
    std::memcpy(path_out, path->c_str(), path->size() + 1);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_finalize(void) {
  cairn::Instance& inst = cairn::TheInstance();
  std::lock_guard<std::mutex> lock(inst.mu);
  if (!inst.engine) return Report(cairn::NotInitialized("cairn_finalize"));
  Status s = inst.engine->Finalize();
  inst.engine.reset();
  inst.restarted.reset();
  return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s.Annotate("cairn_finalize"));
}

const char* cairn_error_message(int code) {
  if (code == cairn::t_last_code && code != CAIRN_SUCCESS && !cairn::t_last_message.empty()) {
    return cairn::t_last_message.c_str();
  }
  return cairn::CodeName(static_cast<Code>(code));
}

}  // extern "C"
