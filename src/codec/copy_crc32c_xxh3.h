// A copy that computes, in its one pass over the bytes, the CRC32C that
// CopyWithCrc32c computes and their XXH3-128 (xxHash's XXH3_128bits:
// default secret, seed 0). A deduplicated checkpoint hashes every page to
// find duplicates and stores the new ones with block CRCs; hashing in the
// copy instead of after it takes the hash off the checkpoint's time where
// the copy waits on memory (docs/results.md). xxHash cannot be fed bytes
// already in registers, so the fused kernel runs XXH3's loop itself
// (codec/x86_64/xxh3_stripes_x86.h); CopyWithCrc32cXxh3Portable is its
// reference twin: the copy, then XXH3_128bits of the source from cache.
// Thread-safety: pure functions.
#ifndef CAIRN_CODEC_COPY_CRC32C_XXH3_H_
#define CAIRN_CODEC_COPY_CRC32C_XXH3_H_

#include <cstddef>
#include <cstdint>

#include "codec/copy_crc32c.h"

namespace cairn {

// XXH128_hash_t's two halves.
struct Xxh3Hash128 {
  uint64_t low64 = 0;
  uint64_t high64 = 0;
  friend bool operator==(const Xxh3Hash128&, const Xxh3Hash128&) = default;
};

// Copies n bytes from src to dst, stores XXH3_128bits of each `page`
// bytes of them in hashes[0 .. n / page) and returns Crc32c(src, n, crc).
// In one pass with AVX2 and VPCLMULQDQ where `page` is a multiple of 128
// of at least 256 (with streaming stores, dst 32-byte aligned); page by
// page in two otherwise. REQUIRES: n a multiple of page; the ranges do not
// overlap.
uint32_t CopyWithCrc32cXxh3(void* dst, const void* src, size_t n, size_t page, uint32_t crc,
                            CopyStores stores, Xxh3Hash128* hashes);
uint32_t CopyWithCrc32cXxh3Portable(void* dst, const void* src, size_t n, size_t page,
                                    uint32_t crc, CopyStores stores, Xxh3Hash128* hashes);

// Which implementation CopyWithCrc32cXxh3 runs where it can fuse
// ("vpclmul-avx2" or "portable").
const char* CopyWithCrc32cXxh3Kernel();

// XXH3's default secret (192 bytes), from xxHash itself.
const uint8_t* Xxh3DefaultSecret();

}  // namespace cairn

#endif  // CAIRN_CODEC_COPY_CRC32C_XXH3_H_
