// The x86-64 fused copy + CRC32C kernels behind CopyWithCrc32c
// (codec/copy_crc32c.h) and CopyWithCrc32cXxh3 (codec/copy_crc32c_xxh3.h),
// and what their dispatch and tests need of them.
// Thread-safety: pure functions.
#ifndef CAIRN_CODEC_X86_64_COPY_CRC32C_X86_H_
#define CAIRN_CODEC_X86_64_COPY_CRC32C_X86_H_

#include <cstddef>
#include <cstdint>

#include "codec/copy_crc32c.h"
#include "codec/copy_crc32c_xxh3.h"

namespace cairn::x86 {

// Whether the CPU has PCLMULQDQ and SSE4.2 (the crc32 instruction).
bool HasPclmulCrc();
// HasPclmulCrc, and AVX2 with VPCLMULQDQ (carry-less multiply of 256-bit
// registers), with the OS saving those registers.
bool HasVpclmulAvx2();

// x^e mod P for the CRC32C polynomial P, bit-reflected as the CRC is
// (bit 31 - i holds the coefficient of x^i): the folding constants.
constexpr uint32_t XPowModCrc32c(uint32_t e) {
  uint32_t v = 0x80000000u;  // x^0
  for (uint32_t i = 0; i < e; ++i) v = (v & 1u) ? (v >> 1) ^ 0x82F63B78u : v >> 1;
  return v;
}

// As CopyWithCrc32c, folding in 128-bit registers. REQUIRES: HasPclmulCrc().
uint32_t CopyWithCrc32cPclmul(void* dst, const void* src, size_t n, uint32_t crc,
                              CopyStores stores);
// The same in 256-bit registers. REQUIRES: HasVpclmulAvx2().
uint32_t CopyWithCrc32cVpclmul(void* dst, const void* src, size_t n, uint32_t crc,
                               CopyStores stores);

// CopyWithCrc32cXxh3 in one pass: the 256-bit fold with XXH3's loop fed
// each stride. REQUIRES: HasVpclmulAvx2(); page % 128 == 0, page >= 256,
// n a positive multiple of page; dst 32-byte aligned when streaming.
uint32_t CopyWithCrc32cXxh3Vpclmul(void* dst, const void* src, size_t n, size_t page,
                                   uint32_t crc, CopyStores stores, Xxh3Hash128* hashes);

}  // namespace cairn::x86

#endif  // CAIRN_CODEC_X86_64_COPY_CRC32C_X86_H_
