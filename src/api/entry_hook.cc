// The library's OnEngineEntry: nothing (entry_hook.h says why it exists).
#include "api/entry_hook.h"

namespace cairn::api {

void OnEngineEntry(const char*) {}

}  // namespace cairn::api
