// The x86-64 flush and streaming-store kernels behind pmem/flush.h. Each is
// compiled with a target attribute for the instructions it uses, so this
// file builds for baseline x86-64 and a kernel runs only where
// HostCpuFeatures (base/cpu_features.h) says the CPU has it (flush.cc
// dispatches).
// Thread-safety: pure functions.
#ifndef CAIRN_PMEM_X86_64_FLUSH_X86_H_
#define CAIRN_PMEM_X86_64_FLUSH_X86_H_

#include <cstddef>
#include <cstdint>

#include "pmem/flush.h"

namespace cairn::pmem::x86 {

// Flush `count` lines starting at the line-aligned address `first`.
void FlushLinesClflush(uintptr_t first, size_t count);
void FlushLinesClflushopt(uintptr_t first, size_t count);
void FlushLinesClwb(uintptr_t first, size_t count);
void StoreFence();

// Streams `lines` whole lines from src (any alignment) to the line-aligned
// dst with non-temporal stores; needs StoreFence before they are ordered.
void StreamLinesSse2(void* dst, const void* src, size_t lines);
void StreamLinesAvx2(void* dst, const void* src, size_t lines);
void StreamLinesAvx512(void* dst, const void* src, size_t lines);

}  // namespace cairn::pmem::x86

#endif  // CAIRN_PMEM_X86_64_FLUSH_X86_H_
