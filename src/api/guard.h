// The C API's exception guard and per-thread last error, shared by the
// entry points of every api/*_c.cc file (defined in cairn_c.cc, where the
// state lives): one guard, one last error per thread (docs/api.md).
// Thread-safety: as the entry points.
#ifndef CAIRN_API_GUARD_H_
#define CAIRN_API_GUARD_H_

#include <functional>

#include "base/status.h"

namespace cairn::api {

// Clears this thread's last error, calls OnEngineEntry (api/entry_hook.h),
// runs body and returns its result; an
// exception becomes CAIRN_E_INTERNAL (or CAIRN_E_NO_SPACE for bad_alloc)
// with its text, recorded as the last error.
int GuardedCall(const char* call, const std::function<int()>& body) noexcept;
// Records s (not ok) as this thread's last error, prefixed with call
// (null: s names the call already); returns its code. An ok s returns
// CAIRN_SUCCESS.
int FinishCall(const char* call, const Status& s);

}  // namespace cairn::api

#endif  // CAIRN_API_GUARD_H_
