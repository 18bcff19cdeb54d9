// CRC32C (Castagnoli), the checksum on every stored block. Crc32c uses
// ISA-L's crc32_iscsi; Crc32cReference is the portable bitwise twin the
// tests compare it against.
// Thread-safety: pure functions.
#ifndef CAIRN_CODEC_CRC32C_H_
#define CAIRN_CODEC_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace cairn {

// Standard CRC32C of data, continuing from `crc` (the CRC of what came
// before; 0 for a fresh start): Crc32c(ab) == Crc32c(b, Crc32c(a)).
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);
uint32_t Crc32cReference(const void* data, size_t n, uint32_t crc = 0);

}  // namespace cairn

#endif  // CAIRN_CODEC_CRC32C_H_
