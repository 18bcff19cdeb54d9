// Transparent mode in libcairn (docs/transparent.md): protected allocations
// (cairn_malloc_protected, the paper's malloc_protected), the checkpoint
// signal of [transparent] signal and its safe points. The preloaded
// libcairn_intercept.so builds on these; a program that links libcairn
// can use them without it.
// State: like the engine in cairn_c.cc, it is process-wide because the C
// API has no handle, and a signal handler has no argument to reach it by.
#include "api/transparent_c.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "api/transparent_internal.h"
#include "base/log.h"
#include "base/mutex.h"
#include "cairn/cairn.h"

namespace cairn::api {
namespace {

constexpr size_t kPage = 4096;

struct ProtectedBlock {
  int id = 0;
  size_t bytes = 0;
};

struct TransparentState {
  Mutex mu;
  // Live protected allocations by address; ids count every allocation of
  // the process, so that a restarted run that allocates in the same order
  // gets the same ids (and so its blocks' contents back).
  std::map<void*, ProtectedBlock> blocks GUARDED_BY(mu);
  int next_id GUARDED_BY(mu) = CAIRN_PROTECTED_ID_BASE;
  TrackingNote pending_note GUARDED_BY(mu);
  TrackingNote last_note GUARDED_BY(mu);
  std::string name GUARDED_BY(mu) = "transparent";
  int signal GUARDED_BY(mu) = 0;  // installed, 0: none
  struct sigaction previous GUARDED_BY(mu) {};
};

TransparentState& State() {
  static TransparentState* state = new TransparentState();  // never destroyed: usable at exit
  return *state;
}

// Set by the signal handler, taken by the next safe point. Lock-free, so
// the handler does nothing but this store (async-signal-safe).
std::atomic<bool> g_signal_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void OnCheckpointSignal(int) { g_signal_requested.store(true, std::memory_order_relaxed); }

// Collective: whether the signal reached any rank since its last request
// was served.
Result<bool> AgreeRequested(Engine& e) {
  std::vector<int64_t> any{g_signal_requested.exchange(false) ? 1 : 0};
  Status s = e.mutable_comm().AllreduceMax(any);
  if (!s.ok()) return s.Annotate("agreeing on a signal-requested checkpoint");
  return any[0] != 0;
}

}  // namespace

void OnTransparentInit(const Config& config) {
  TransparentState& st = State();
  MutexLock lock(&st.mu);
  st.name = config.transparent.name;
  if (config.transparent.signal == 0 || st.signal != 0) return;
  struct sigaction sa {};
  sa.sa_handler = &OnCheckpointSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(config.transparent.signal, &sa, &st.previous) == 0) {
    st.signal = config.transparent.signal;
  } else {
    Log(LogLevel::kWarn, "transparent.signal: cannot handle signal {}: {}",
        config.transparent.signal, std::strerror(errno));
  }
}

void OnTransparentFinalize() {
  TransparentState& st = State();
  MutexLock lock(&st.mu);
  if (st.signal != 0) sigaction(st.signal, &st.previous, nullptr);
  st.signal = 0;
}

void OnCheckpointCommitted() {
  g_signal_requested.store(false);
  TransparentState& st = State();
  MutexLock lock(&st.mu);
  st.last_note = std::exchange(st.pending_note, TrackingNote{});
}

TrackingNote LastTrackingNote() {
  TransparentState& st = State();
  MutexLock lock(&st.mu);
  return st.last_note;
}

bool IsProtectedBlock(int id) {
  TransparentState& st = State();
  MutexLock lock(&st.mu);
  for (const auto& [address, block] : st.blocks) {
    if (block.id == id) return true;
  }
  return false;
}

}  // namespace cairn::api

using cairn::Engine;
using cairn::Result;
using cairn::api::State;
using cairn::api::TransparentState;

extern "C" {

void* cairn_malloc_protected(size_t size) {
  const char* call = "cairn_malloc_protected";
  void* out = nullptr;
  cairn::api::WithEngineCall(call, [&](Engine& e) -> Result<int> {
    if (size == 0) return cairn::Error(cairn::Code::kInvalidArgument, "size is 0");
    size_t bytes = (size + cairn::api::kPage - 1) / cairn::api::kPage * cairn::api::kPage;
    if (bytes < size) return cairn::Error(cairn::Code::kNoSpace, "{} bytes cannot be allocated", size);
    void* p = std::aligned_alloc(cairn::api::kPage, bytes);
    if (p == nullptr) return cairn::Error(cairn::Code::kNoSpace, "out of memory ({} bytes)", bytes);
    std::memset(p, 0, bytes);
    TransparentState& st = State();
    cairn::MutexLock lock(&st.mu);
    int id = st.next_id++;
    cairn::Status s = e.Protect(id, p, size, 1);
    if (!s.ok()) {
      std::free(p);
      return s;
    }
    st.blocks[p] = {id, size};
    out = p;
    return 0;
  });
  return out;
}

int cairn_free_protected(void* ptr) {
  const char* call = "cairn_free_protected";
  return cairn::api::WithEngineCall(call, [&](Engine& e) -> Result<int> {
    if (ptr == nullptr) return 0;  // as free(NULL)
    TransparentState& st = State();
    cairn::MutexLock lock(&st.mu);
    auto it = st.blocks.find(ptr);
    if (it == st.blocks.end()) {
      return cairn::Error(cairn::Code::kNotFound,
                          "{} is not a block cairn_malloc_protected returned (or it was freed)",
                          ptr);
    }
    cairn::Status s = e.Unprotect(it->second.id);
    st.blocks.erase(it);
    std::free(ptr);
    if (!s.ok()) return s;
    return 0;
  });
}

int cairn_checkpoint_requested(void) {
  return cairn::api::WithEngineCall("cairn_checkpoint_requested", [&](Engine& e) -> Result<int> {
    auto any = cairn::api::AgreeRequested(e);
    if (!any.ok()) return any.status();
    // Still pending until a checkpoint serves it.
    if (*any) cairn::api::g_signal_requested.store(true);
    return *any ? 1 : 0;
  });
}

int cairn_checkpoint_point(void) {
  return cairn::api::WithEngineCall("cairn_checkpoint_point", [&](Engine& e) -> Result<int> {
    auto any = cairn::api::AgreeRequested(e);
    if (!any.ok()) return any.status();
    if (!*any) return 0;
    TransparentState& st = State();
    std::string name;
    {
      cairn::MutexLock lock(&st.mu);
      name = st.name;
    }
    // The version after the newest stored one (collective, as this call):
    // a requested checkpoint is rare, and this survives restarts.
    auto newest = e.RestartTest(name, -1);
    if (!newest.ok()) return newest.status();
    int64_t version = *newest + 1;
    cairn::Log(cairn::LogLevel::kInfo, "checkpoint requested by signal: {} version {}", name,
               version);
    cairn::Status s = e.Checkpoint(name, version);
    if (!s.ok()) return s;
    cairn::api::OnCheckpointCommitted();
    return 1;
  });
}

void cairn_internal_note_tracking(const char* method, unsigned long long pages_written,
                                  unsigned long long pages_total) {
  try {
    TransparentState& st = State();
    cairn::MutexLock lock(&st.mu);
    st.pending_note = {method == nullptr ? "" : method, pages_written, pages_total};
  } catch (...) {
    // Only the report is lost (an allocation failed); the checkpoint is not.
  }
}

int cairn_internal_note_changed_pages(int id, long long since_version, const void* base,
                                      size_t page_size, const unsigned long long* runs,
                                      size_t run_count) {
  return cairn::api::WithEngineCall(
      "cairn_internal_note_changed_pages", [&](Engine& e) -> Result<int> {
        if (page_size == 0 || (runs == nullptr && run_count > 0)) {
          return cairn::Error(cairn::Code::kInvalidArgument,
                              "changed pages of region {}: no page size or no runs", id);
        }
        cairn::ChangedPages pages;
        pages.since_version = since_version;
        pages.base = base;
        pages.page_size = page_size;
        pages.runs.reserve(run_count);
        for (size_t i = 0; i < run_count; ++i) pages.runs.push_back({runs[2 * i], runs[2 * i + 1]});
        e.NoteChangedPages(id, std::move(pages));
        return 0;
      });
}

}  // extern "C"
