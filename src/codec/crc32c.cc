#include "codec/crc32c.h"

#include <isa-l/crc.h>

#include "base/vector_state.h"

namespace cairn {

// ISA-L's crc32_iscsi neither inverts its seed nor its result, so the
// standard pre- and post-inversion happen here.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
  const uint32_t out =
      ~crc32_iscsi(static_cast<unsigned char*>(const_cast<void*>(data)), static_cast<int>(n), ~crc);
  ClearUpperVectorHalves();  // its AVX-512 kernel (base/vector_state.h)
  return out;
}

uint32_t Crc32cReference(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

}  // namespace cairn
