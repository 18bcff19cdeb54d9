// What this CPU offers the kernels that dispatch on it (the fused copy +
// CRC32C of codec/, the flushes and streaming copies of pmem/), read from
// CPUID once. A vector extension counts only when the OS also saves its
// registers across context switches (XCR0). All false off x86-64, where
// callers run their portable code.
// Thread-safety: HostCpuFeatures is thread-safe.
#ifndef CAIRN_BASE_CPU_FEATURES_H_
#define CAIRN_BASE_CPU_FEATURES_H_

namespace cairn {

struct CpuFeatures {
  bool sse42 = false;       // the crc32 instruction
  bool pclmulqdq = false;   // carry-less multiply of 128-bit registers
  bool avx = false;         // 256-bit registers (vzeroupper)
  bool avx2 = false;
  bool vpclmulqdq = false;  // carry-less multiply of 256-bit registers (with AVX)
  bool avx512f = false;
  bool clflushopt = false;
  bool clwb = false;
};

const CpuFeatures& HostCpuFeatures();

}  // namespace cairn

#endif  // CAIRN_BASE_CPU_FEATURES_H_
