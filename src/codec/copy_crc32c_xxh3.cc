#include "codec/copy_crc32c_xxh3.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_generateSecret_fromSeed
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include "base/vector_state.h"
#if defined(__x86_64__)
#include "codec/x86_64/copy_crc32c_x86.h"
#endif

namespace cairn {
namespace {

#if defined(__x86_64__)
bool CanFuse(const void* dst, size_t page, CopyStores stores) {
  static const bool kernel = x86::HasVpclmulAvx2();
  const bool aligned = stores == CopyStores::kCached || reinterpret_cast<uintptr_t>(dst) % 32 == 0;
  return kernel && page >= 256 && page % 128 == 0 && aligned;
}
#endif

}  // namespace

uint32_t CopyWithCrc32cXxh3(void* dst, const void* src, size_t n, size_t page, uint32_t crc,
                            CopyStores stores, Xxh3Hash128* hashes) {
#if defined(__x86_64__)
  if (n > 0 && CanFuse(dst, page, stores)) {
    return x86::CopyWithCrc32cXxh3Vpclmul(dst, src, n, page, crc, stores, hashes);
  }
#endif
  return CopyWithCrc32cXxh3Portable(dst, src, n, page, crc, stores, hashes);
}

uint32_t CopyWithCrc32cXxh3Portable(void* dst, const void* src, size_t n, size_t page,
                                    uint32_t crc, CopyStores stores, Xxh3Hash128* hashes) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t at = 0; at < n; at += page) {
    crc = CopyWithCrc32c(d + at, s + at, page, crc, stores);
    // The page, just read by the copy, is in cache.
    const XXH128_hash_t h = XXH3_128bits_dispatch(s + at, page);
    ClearUpperVectorHalves();
    *hashes++ = {h.low64, h.high64};
  }
  return crc;
}

const char* CopyWithCrc32cXxh3Kernel() {
#if defined(__x86_64__)
  if (x86::HasVpclmulAvx2()) return "vpclmul-avx2";
#endif
  return "portable";
}

const uint8_t* Xxh3DefaultSecret() {
  // Seed 0 derives the default secret unchanged.
  alignas(64) static const auto secret = [] {
    struct Bytes {
      uint8_t b[XXH3_SECRET_DEFAULT_SIZE];
    } s;
    XXH3_generateSecret_fromSeed(s.b, 0);
    return s;
  }();
  return secret.b;
}

}  // namespace cairn
