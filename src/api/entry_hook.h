// The C API's one test seam. Every entry point of cairn.h and pmem.h calls
// OnEngineEntry(call): the engine's right before they hand control to the
// engine, the standalone ones (varray, pmem) as their guard starts. In
// libcairn (entry_hook.cc) it does nothing. tests/abi/exception_test.cc
// compiles cairn_c.cc into a test program with a definition that throws,
// to prove that no exception crosses the C API; no build of the library
// can throw from here, so no test hook ships to users.
// Thread-safety: called under the C API's instance lock by the engine's
// entry points, without it by the standalone ones.
#ifndef CAIRN_API_ENTRY_HOOK_H_
#define CAIRN_API_ENTRY_HOOK_H_

namespace cairn::api {

// call: the entry point's name ("cairn_checkpoint").
void OnEngineEntry(const char* call);

}  // namespace cairn::api

#endif  // CAIRN_API_ENTRY_HOOK_H_
