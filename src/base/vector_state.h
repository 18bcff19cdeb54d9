// Clearing the upper halves of the vector registers after a library's
// AVX kernel. ISA-L's AVX2 and AVX-512 kernels (erasure coding, XOR parity,
// CRC) and libxxhash's (xxHash 0.8.1) return without vzeroupper, so the
// registers stay "dirty", and every legacy-SSE instruction the compiler
// emits afterwards (struct copies, zeroing, ISA-L's own SSE CRC) pays for
// it: hashing 64 MiB of pages took 1.35x as long as with the registers
// cleared (docs/results.md). Call it after each such library call.
// Thread-safety: thread-safe (the state is the calling thread's).
#ifndef CAIRN_BASE_VECTOR_STATE_H_
#define CAIRN_BASE_VECTOR_STATE_H_

#include <optional>

namespace cairn {

// vzeroupper on CPUs with AVX; nothing elsewhere.
void ClearUpperVectorHalves();

// Whether the calling thread's upper halves are in use (XGETBV with ECX=1,
// the XINUSE bit of the AVX state), or nullopt where the CPU cannot say:
// how tests check that a kernel's caller cleared them.
std::optional<bool> UpperVectorHalvesInUse();

}  // namespace cairn

#endif  // CAIRN_BASE_VECTOR_STATE_H_
