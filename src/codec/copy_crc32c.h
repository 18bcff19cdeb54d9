// A copy that computes the CRC32C of the bytes it copies, in one pass over
// them: each cache line is loaded once, stored to the destination and
// folded into the CRC. Copying and then checksumming (or the reverse)
// reads the source twice and costs the sum of both passes; this kernel
// costs about one copy. CopyWithCrc32cPortable is its reference twin
// (memcpy, then Crc32c), which the tests compare it against and which
// CPUs without carry-less multiply run.
// Thread-safety: pure functions.
#ifndef CAIRN_CODEC_COPY_CRC32C_H_
#define CAIRN_CODEC_COPY_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace cairn {

// How the copy stores its bytes.
enum class CopyStores {
  kCached,     // ordinary stores: the destination is read again soon
  // Non-temporal stores past the caches: for large copies whose destination
  // is not read again soon (a checkpoint in its tier), which then neither
  // read each destination line before writing it nor evict the source.
  kStreaming,
};

// Copies n bytes from src to dst and returns Crc32c(src, n, crc). The
// ranges must not overlap; any alignment and length.
uint32_t CopyWithCrc32c(void* dst, const void* src, size_t n, uint32_t crc = 0,
                        CopyStores stores = CopyStores::kCached);
uint32_t CopyWithCrc32cPortable(void* dst, const void* src, size_t n, uint32_t crc = 0,
                                CopyStores stores = CopyStores::kCached);

// Which implementation CopyWithCrc32c runs on this CPU ("vpclmul",
// "pclmul" or "portable"), for benchmarks and tests to report.
const char* CopyWithCrc32cKernel();

}  // namespace cairn

#endif  // CAIRN_CODEC_COPY_CRC32C_H_
