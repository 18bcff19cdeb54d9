// The C API's transparent-mode state (transparent_c.cc): the checkpoint
// signal of [transparent] signal, protected allocations, and the note of how
// the preloaded heap's written pages were found. cairn_c.cc calls the On*
// hooks from cairn_init, cairn_checkpoint and cairn_finalize.
// Thread-safety: the hooks run under the C API's instance lock; the signal
// handler only sets an atomic flag.
#ifndef CAIRN_API_TRANSPARENT_C_H_
#define CAIRN_API_TRANSPARENT_C_H_

#include <cstdint>
#include <functional>
#include <string>

#include "base/config.h"
#include "runtime/engine.h"

namespace cairn::api {

// At cairn_init, once the engine exists: installs the handler of
// [transparent] signal (none: nothing).
void OnTransparentInit(const Config& config);
// At cairn_finalize: puts the signal's previous disposition back and
// forgets the protected allocations' registrations (their memory stays).
void OnTransparentFinalize();
// After a committed checkpoint: it satisfies a pending signal request, and
// the tracking note given for it becomes the last one.
void OnCheckpointCommitted();

// How the last checkpoint's pages were found (cairn_checkpoint_info's
// tracking, pages_written, pages_total); method "" when it was no
// transparent-mode checkpoint.
struct TrackingNote {
  std::string method;
  uint64_t pages_written = 0;
  uint64_t pages_total = 0;
};
TrackingNote LastTrackingNote();

// Whether region `id` is a live block of cairn_malloc_protected, which only
// cairn_free_protected may unprotect or replace.
bool IsProtectedBlock(int id);

// Runs fn(engine) as an entry point: guarded, under the instance lock,
// CAIRN_E_NOT_INITIALIZED before cairn_init; fn's error becomes this
// thread's last error, prefixed with call (defined in cairn_c.cc).
int WithEngineCall(const char* call, const std::function<Result<int>(Engine&)>& fn);

}  // namespace cairn::api

#endif  // CAIRN_API_TRANSPARENT_C_H_
