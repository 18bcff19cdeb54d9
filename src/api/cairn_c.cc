// The C API: a process-wide Engine behind the functions of cairn.h. The one
// piece of global state in Cairn lives here, because the C API has no handle
// (its shape is fixed by DESIGN.md); everything below takes it explicitly.
// The rules this file keeps (errors, struct sizes, no exception crossing)
// are stated at the top of cairn.h and in docs/api.md.
#include "cairn/cairn.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "api/entry_hook.h"
#include "api/transparent_c.h"
#include "api/transparent_internal.h"
#include "api/guard.h"
#include "api/sized_struct.h"
#include "base/config.h"
#include "base/mutex.h"
#include "base/status.h"
#include "comm/mpi_comm.h"
#include "env/env.h"
#include "runtime/engine.h"

__thread int cairn_internal_in_call = 0;  // api/transparent_internal.h (declared extern "C" there)

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
// CAIRN_LAST_ERROR must never be mistaken for a status.
static_assert(CAIRN_LAST_ERROR < CAIRN_E_UNSUPPORTED - 1000);

// Calls from several threads run one at a time (WithEngine and Init hold
// mu; docs/api.md "Threads"), so cairn_finalize cannot destroy the engine
// under another thread's call.
struct Instance {
  Mutex mu;
  std::unique_ptr<Engine> engine GUARDED_BY(mu);
  std::optional<RestartReport> restarted GUARDED_BY(mu);  // the last successful restart
};

Instance& TheInstance() {
  static Instance* instance = new Instance();  // never destroyed: usable at exit
  return *instance;
}

// This thread's last error (cairn_last_error, CAIRN_LAST_ERROR): cleared
// when an entry point starts, set when it fails.
thread_local int t_last_code = CAIRN_SUCCESS;
thread_local std::string t_last_message;

int Report(const Status& s) {
  t_last_code = static_cast<int>(s.code());
  t_last_message = s.ToString();
  return t_last_code;
}

// Report for the catch clauses of Guarded: must not throw again, so when
// even the message cannot be allocated, the code's generic text stands in.
int ReportCaught(Code code, const char* call, const char* what, const char* detail) noexcept {
  t_last_code = static_cast<int>(code);
  try {
    t_last_message = fmt::format("{}: {}{}", call, what, detail);
  } catch (...) {
    t_last_message.clear();
  }
  return t_last_code;
}

// Runs the body of an extern "C" entry point: clears this thread's last
// error first, and turns any exception into an error code, because an
// exception unwinding into a C, Fortran or Python caller terminates the
// process (and a rank that dies alone hangs the others in MPI).
template <typename Body>
int Guarded(const char* call, Body&& body) noexcept {
  // A preloaded libcairn_intercept.so keeps this call's allocations out of
  // the program's heap.
  InsideCairnScope inside;
  t_last_code = CAIRN_SUCCESS;
  t_last_message.clear();
  constexpr const char* kBug = "internal error (an exception; please report it): ";
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return ReportCaught(Code::kNoSpace, call, "out of memory (std::bad_alloc)", "");
  } catch (const std::exception& e) {
    return ReportCaught(Code::kInternal, call, kBug, e.what());
  } catch (...) {
    return ReportCaught(Code::kInternal, call, kBug, "of unknown type");
  }
}

Status NotInitialized(const char* call) {
  return Error(Code::kNotInitialized, "{}: Cairn is not initialized (call cairn_init first)",
               call);
}

Status NullArgument(const char* call, const char* what) {
  return Error(Code::kInvalidArgument, "{}: {} is NULL", call, what);
}

// Region `id` is a live block of cairn_malloc_protected: replacing or
// forgetting its registration would leave the block out of every later
// checkpoint without a word.
Status ProtectedBlockRefused(const char* call, int id) {
  return Error(Code::kInvalidArgument,
               "{}: region {} is a block of cairn_malloc_protected (ids from "
               "CAIRN_PROTECTED_ID_BASE); use another id, or cairn_free_protected",
               call, id);
}

int Finish(const char* call, const Status& s) {
  return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s.Annotate(call));
}

// The entry points that need an engine: Guarded, under the instance lock,
// refused before cairn_init. fn(engine, instance) returns the call's int;
// a fn that touches the instance's members says inst.mu.AssertHeld() first
// (clang's analysis does not follow the lock into a lambda).
template <typename Fn>
int WithEngine(const char* call, Fn&& fn) {
  return Guarded(call, [&]() -> int {
    Instance& inst = TheInstance();
    MutexLock lock(&inst.mu);
    if (!inst.engine) return Report(NotInitialized(call));
    api::OnEngineEntry(call);
    return fn(*inst.engine, inst);
  });
}

void FillCheckpointInfo(const CheckpointReport& r, SizedStructWriter<cairn_checkpoint_info>& w) {
  using Info = cairn_checkpoint_info;
  bool skipped = r.placement == Placement::kSkip;
  w.Set(&Info::version, r.version);
  w.Set(&Info::number, r.number);
  w.Set(&Info::skipped, skipped ? 1 : 0);
  w.Set(&Info::forced, r.forced ? 1 : 0);
  w.SetText(&Info::tier, skipped ? "" : TierKindName(r.tier));
  w.SetText(&Info::rule, ClcRuleName(r.rule));
  w.Set(&Info::seconds, r.seconds);
  w.Set(&Info::bytes, r.bytes);
  w.SetText(&Info::reason, r.reason);
  api::TrackingNote note = api::LastTrackingNote();
  w.SetText(&Info::tracking, note.method);
  w.Set(&Info::pages_written, note.pages_written);
  w.Set(&Info::pages_total, note.pages_total);
  w.Set(&Info::pages_unique, r.pages.unique);
  w.Set(&Info::pages_local_dup, r.pages.local_dup);
  w.Set(&Info::pages_remote_ref, r.pages.remote_ref);
  w.Set(&Info::pages_unchanged, r.pages.unchanged);
  w.Set(&Info::dedup_hash_seconds, r.hash_seconds);
  w.Set(&Info::dedup_reduce_seconds, r.reduce_seconds);
  w.Set(&Info::pages_hashed, r.pages.hashed);
  w.Set(&Info::ecc_protected_after, r.ecc_protected_after);
  w.Set(&Info::pages_hashed_in_copy, r.pages.hashed_in_copy);
  w.Set(&Info::dedup_whole, r.dedup_whole ? 1 : 0);
}

void FillRestartInfo(const RestartReport& r, SizedStructWriter<cairn_restart_info>& w) {
  using Info = cairn_restart_info;
  w.Set(&Info::requested, r.requested);
  w.Set(&Info::version, r.version);
  w.Set(&Info::newest, r.newest);
  w.Set(&Info::rollback_versions, r.rollback_versions);
  w.Set(&Info::rollback_seconds, r.rollback_seconds);
  w.Set(&Info::versions_failed, r.versions_failed);
  w.SetText(&Info::tier, r.tier);
  w.Set(&Info::bytes, r.bytes);
  w.Set(&Info::seconds, r.seconds);
  w.Set(&Info::ecc_shards_corrected, r.ecc_shards_corrected);
  w.Set(&Info::parts_rebuilt, r.parts_rebuilt);
  w.SetText(&Info::redundancy, r.redundancy);
}

void FillWaitInfo(const WaitCounts& d, SizedStructWriter<cairn_wait_info>& w) {
  using Info = cairn_wait_info;
  w.Set(&Info::drains_done, d.done);
  w.Set(&Info::drains_failed, d.failed);
  w.Set(&Info::drains_superseded, d.superseded);
  w.SetText(&Info::last_failure, d.last_failure);
  w.Set(&Info::ecc_encoded, d.ecc_encoded);
  w.Set(&Info::ecc_failed, d.ecc_failed);
  w.Set(&Info::ecc_skipped, d.ecc_skipped);
}

Result<Config> LoadProcessConfig(const char* config_path) {
  return LoadConfig(config_path, ProcessEnvLookup(), ProcessEnvNames(),
                    [](const std::string& path, uint64_t max_bytes) {
                      return PosixEnv()->ReadFileUpTo(path, max_bytes);
                    });
}

// cairn_init and cairn_init_single: `make_comm` builds this process's
// communicator from the loaded configuration.
template <typename MakeComm>
int Init(const char* call, const char* config_path, MakeComm&& make_comm) {
  return Guarded(call, [&]() -> int {
    Instance& inst = TheInstance();
    MutexLock lock(&inst.mu);
    if (inst.engine) {
      return Report(Error(Code::kAlreadyInitialized, "{}: Cairn is already initialized", call));
    }
    Result<Config> config = LoadProcessConfig(config_path);
    // Every rank builds the communicator the same way, good config or not.
    Result<std::unique_ptr<Comm>> comm = make_comm(config);
    if (!comm.ok()) return Report(comm.status());
    // The configuration is read by each rank; all must agree that it is
    // good before any rank goes on, or the others would wait in a collective.
    Status agreed = (*comm)->Agree(config.status());
    if (!agreed.ok()) return Report(agreed);
    api::OnEngineEntry(call);
    auto engine = Engine::Create(std::move(comm).value(), *config, PosixEnv(), Clock::Real());
    if (!engine.ok()) return Report(engine.status());
    inst.engine = std::move(engine).value();
    api::OnTransparentInit(*config);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int Checkpoint(const char* call, const char* name, int version, unsigned flags) {
  return WithEngine(call, [&](Engine& e, Instance&) {
    if (name == nullptr) return Report(e.RefuseCall(NullArgument(call, "name")));
    if ((flags & ~CAIRN_CHECKPOINT_DURABLE) != 0) {
      return Report(e.RefuseCall(Error(Code::kInvalidArgument, "{}: unknown flag bits {:#x}", call,
                                       flags & ~CAIRN_CHECKPOINT_DURABLE)));
    }
    Status s = e.Checkpoint(name, version, (flags & CAIRN_CHECKPOINT_DURABLE) != 0);
    if (s.ok()) api::OnCheckpointCommitted();
    return Finish(call, s);
  });
}

}  // namespace

namespace api {
// api/guard.h: the guard and last error above, for the other api/ files.
int GuardedCall(const char* call, const std::function<int()>& body) noexcept {
  return Guarded(call, [&]() -> int {
    OnEngineEntry(call);
    return body();
  });
}
int FinishCall(const char* call, const Status& s) {
  if (call != nullptr) return Finish(call, s);
  return s.ok() ? static_cast<int>(CAIRN_SUCCESS) : Report(s);
}
}  // namespace api
namespace api {
// api/transparent_c.h: WithEngine for transparent_c.cc's entry points.
int WithEngineCall(const char* call, const std::function<Result<int>(Engine&)>& fn) {
  return WithEngine(call, [&](Engine& e, Instance&) -> int {
    Result<int> r = fn(e);
    return r.ok() ? *r : Report(r.status().Annotate(call));
  });
}
}  // namespace api
}  // namespace cairn

using cairn::Engine;
using cairn::Error;
using cairn::Finish;
using cairn::Instance;
using cairn::NullArgument;
using cairn::ProtectedBlockRefused;
using cairn::Report;
using cairn::WithEngine;

extern "C" {

// cairn_version, cairn_error_message and cairn_last_error are not Guarded:
// they must leave this thread's last error as it is (that is what they
// read), and none of them allocates or can throw.
int cairn_version(void) { return CAIRN_VERSION_NUMBER; }

int cairn_init(MPI_Comm comm, const char* config_path) {
  return cairn::Init("cairn_init", config_path, [&](const cairn::Result<cairn::Config>& config) {
    return cairn::NewMpiComm(comm, config.ok() ? config->ranks_per_node : 0);
  });
}

int cairn_init_single(const char* config_path) {
  return cairn::Init("cairn_init_single", config_path,
                     [](const cairn::Result<cairn::Config>&) -> cairn::Result<std::unique_ptr<cairn::Comm>> {
                       return cairn::NewSingleComm();
                     });
}

int cairn_protect(int id, void* ptr, size_t count, size_t elem_size) {
  return WithEngine("cairn_protect", [&](Engine& e, Instance&) {
    if (cairn::api::IsProtectedBlock(id)) {
      return Report(ProtectedBlockRefused("cairn_protect", id));
    }
    return Finish("cairn_protect", e.Protect(id, ptr, count, elem_size));
  });
}

int cairn_unprotect(int id) {
  return WithEngine("cairn_unprotect", [&](Engine& e, Instance&) {
    if (cairn::api::IsProtectedBlock(id)) {
      return Report(ProtectedBlockRefused("cairn_unprotect", id));
    }
    return Finish("cairn_unprotect", e.Unprotect(id));
  });
}

int cairn_checkpoint(const char* name, int version) {
  return cairn::Checkpoint("cairn_checkpoint", name, version, 0);
}

int cairn_checkpoint_flags(const char* name, int version, unsigned flags) {
  return cairn::Checkpoint("cairn_checkpoint_flags", name, version, flags);
}

int cairn_last_checkpoint(cairn_checkpoint_info* info) {
  const char* call = "cairn_last_checkpoint";
  return WithEngine(call, [&](Engine& e, Instance&) {
    auto writer = cairn::SizedStructWriter<cairn_checkpoint_info>::Open(
        call, info, &cairn_checkpoint_info::version);
    if (!writer.ok()) return Report(writer.status());
    const cairn::CheckpointReport last = e.last_checkpoint();
    if (last.version < 0) {
      return Report(Error(cairn::Code::kNotFound, "{}: no checkpoint yet", call));
    }
    cairn::FillCheckpointInfo(last, *writer);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_should_checkpoint(void) {
  return WithEngine("cairn_should_checkpoint", [&](Engine& e, Instance&) {
    auto due = e.ShouldCheckpoint();
    if (!due.ok()) return Report(due.status().Annotate("cairn_should_checkpoint"));
    return *due ? 1 : 0;
  });
}

int cairn_checkpoint_wait(void) {
  return WithEngine("cairn_checkpoint_wait", [&](Engine& e, Instance&) {
    return Finish("cairn_checkpoint_wait", e.Wait());
  });
}

int cairn_last_wait(cairn_wait_info* info) {
  const char* call = "cairn_last_wait";
  return WithEngine(call, [&](Engine& e, Instance&) {
    auto writer =
        cairn::SizedStructWriter<cairn_wait_info>::Open(call, info, &cairn_wait_info::drains_done);
    if (!writer.ok()) return Report(writer.status());
    cairn::FillWaitInfo(e.last_wait(), *writer);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_restart_test(const char* name, int max_version) {
  int rc = WithEngine("cairn_restart_test", [&](Engine& e, Instance&) {
    if (name == nullptr) return Report(e.RefuseCall(NullArgument("cairn_restart_test", "name")));
    auto v = e.RestartTest(name, max_version);
    if (!v.ok()) return Report(v.status().Annotate("cairn_restart_test"));
    return static_cast<int>(*v);
  });
  // Only "none" is returned here; the error, if any, stays in the thread's
  // last error (cairn_last_error, CAIRN_LAST_ERROR).
  return rc < -1 ? -1 : rc;
}

int cairn_restart(const char* name, int version) {
  return WithEngine("cairn_restart", [&](Engine& e, Instance& inst) {
    inst.mu.AssertHeld();
    if (name == nullptr) return Report(e.RefuseCall(NullArgument("cairn_restart", "name")));
    auto report = e.Restart(name, version);
    if (!report.ok()) return Report(report.status().Annotate("cairn_restart"));
    inst.restarted = *report;
    return static_cast<int>(report->version);
  });
}

int cairn_last_restart(cairn_restart_info* info) {
  const char* call = "cairn_last_restart";
  return WithEngine(call, [&](Engine&, Instance& inst) {
    inst.mu.AssertHeld();
    auto writer = cairn::SizedStructWriter<cairn_restart_info>::Open(
        call, info, &cairn_restart_info::requested);
    if (!writer.ok()) return Report(writer.status());
    if (!inst.restarted) return Report(Error(cairn::Code::kNotFound, "{}: no restart yet", call));
    cairn::FillRestartInfo(*inst.restarted, *writer);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_route_file(const char* logical, char* path_out, size_t len) {
  const char* call = "cairn_route_file";
  return WithEngine(call, [&](Engine& e, Instance&) {
    if (logical == nullptr) return Report(NullArgument(call, "logical name"));
    if (path_out == nullptr) return Report(NullArgument(call, "path_out"));
    auto path = e.RouteFile(logical);
    if (!path.ok()) return Report(path.status().Annotate(call));
    if (path->size() + 1 > len) {
      return Report(Error(cairn::Code::kInvalidArgument,
                          "{}: path_out holds {} bytes, the path needs {}", call, len,
                          path->size() + 1));
    }
    std::memcpy(path_out, path->c_str(), path->size() + 1);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_delete(const char* name) {
  return WithEngine("cairn_delete", [&](Engine& e, Instance&) {
    if (name == nullptr) return Report(e.RefuseCall(NullArgument("cairn_delete", "name")));
    return Finish("cairn_delete", e.Delete(name));
  });
}

int cairn_delete_version(const char* name, int version) {
  return WithEngine("cairn_delete_version", [&](Engine& e, Instance&) {
    if (name == nullptr) return Report(e.RefuseCall(NullArgument("cairn_delete_version", "name")));
    return Finish("cairn_delete_version", e.DeleteVersion(name, version));
  });
}

int cairn_finalize(void) {
  return WithEngine("cairn_finalize", [&](Engine& e, Instance& inst) {
    inst.mu.AssertHeld();
    cairn::Status s = e.Finalize();
    cairn::api::OnTransparentFinalize();
    inst.engine.reset();
    inst.restarted.reset();
    return Finish("cairn_finalize", s);
  });
}

const char* cairn_error_message(int code) {
  if (code == CAIRN_LAST_ERROR) code = cairn::t_last_code;
  if (code == cairn::t_last_code && code != CAIRN_SUCCESS && !cairn::t_last_message.empty()) {
    return cairn::t_last_message.c_str();
  }
  return cairn::CodeName(static_cast<cairn::Code>(code));
}

int cairn_last_error(void) { return cairn::t_last_code; }

}  // extern "C"
