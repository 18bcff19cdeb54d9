// The parts of a transparent-mode process beyond its heap that a restart
// must find as they were (docs/transparent.md "What is captured"): main's
// stack, kept at a fixed address; the program's own writable data (the
// executable's .data and .bss); the registers at the safe point; and the
// stack-protector canary the restored frames were built with.
// x86-64 Linux with glibc only (ucontext and the canary's TLS slot).
// Thread-safety: main thread only (the safe points are in its MPI calls).
#ifndef CAIRN_TRANSPARENT_PROCESS_IMAGE_H_
#define CAIRN_TRANSPARENT_PROCESS_IMAGE_H_

#include <ucontext.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace cairn {

struct MemoryRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  size_t bytes() const { return end - begin; }
  bool operator==(const MemoryRange&) const = default;
};

// The executable's writable data after its RELRO part, without the
// variables copy-relocated from libraries (stdout, environ, ...): those
// belong to the libraries of the running process, not to the program's
// state. Sorted, disjoint.
std::vector<MemoryRange> ProgramDataRanges();

// Maps a stack of `bytes` that ends at `top` (page-aligned), with a guard
// page below it. kMismatch naming the range when it is taken.
Result<MemoryRange> ReserveFixedStack(uintptr_t top, size_t bytes);

// Runs main(argc, argv, envp) on `stack` and returns its result; argv and
// envp are copied to the stack's top first, so that a restart, which
// replaces that stack's frames with the checkpointed run's, also gives
// main back the arguments it had. main's return still lands here (the
// return path lives at fixed addresses).
int RunMainOnStack(const MemoryRange& stack, int (*main)(int, char**, char**), int argc,
                   char** argv, char** envp);

// The stack-protector canary of the calling thread (glibc keeps it in the
// thread control block at %fs:0x28) and its replacement: restored frames
// carry the old process's canary, so the restored thread must use it too.
uint64_t StackGuard();
void SetStackGuard(uint64_t value);

// The stack pointer of a context getcontext filled.
uintptr_t StackPointerOf(const ucontext_t& context);

// Whether the process runs without address-space randomisation; if not,
// re-executes it once (same argv and environment) with randomisation off,
// so that code and libraries load where they did in the checkpointed run.
// Returns only when already fixed or when the re-execution failed (then
// the error says why; a restart will refuse the layout).
Status EnsureFixedLayout(char** argv, char** envp);

}  // namespace cairn

#endif  // CAIRN_TRANSPARENT_PROCESS_IMAGE_H_
