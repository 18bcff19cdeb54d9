#include "codec/copy_crc32c.h"

#include <cstring>

#include "codec/crc32c.h"
#if defined(__x86_64__)
#include "codec/x86_64/copy_crc32c_x86.h"
#endif

namespace cairn {
namespace {

using CopyCrcFn = uint32_t (*)(void*, const void*, size_t, uint32_t, CopyStores);

struct Kernel {
  CopyCrcFn fn;
  const char* name;
};

// Picked once, on first use (the ISA-L way: dispatch by CPU features).
const Kernel& ChosenKernel() {
  static const Kernel kernel = [] {
#if defined(__x86_64__)
    if (x86::HasVpclmulAvx2()) return Kernel{x86::CopyWithCrc32cVpclmul, "vpclmul"};
    if (x86::HasPclmulCrc()) return Kernel{x86::CopyWithCrc32cPclmul, "pclmul"};
#endif
    return Kernel{CopyWithCrc32cPortable, "portable"};
  }();
  return kernel;
}

}  // namespace

uint32_t CopyWithCrc32c(void* dst, const void* src, size_t n, uint32_t crc, CopyStores stores) {
  return ChosenKernel().fn(dst, src, n, crc, stores);
}

// Two passes; the stores hint is only a hint, so plain memcpy satisfies it.
uint32_t CopyWithCrc32cPortable(void* dst, const void* src, size_t n, uint32_t crc,
                                CopyStores /*stores*/) {
  std::memcpy(dst, src, n);
  return Crc32c(src, n, crc);
}

const char* CopyWithCrc32cKernel() { return ChosenKernel().name; }

}  // namespace cairn
