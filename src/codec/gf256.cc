#include "codec/gf256.h"

namespace cairn::gf256 {

uint8_t MulBase(uint8_t a, uint8_t b) {
  unsigned x = a;
  unsigned product = 0;
  for (unsigned y = b; y != 0; y >>= 1) {
    if (y & 1) product ^= x;
    x <<= 1;
    if (x & 0x100) x ^= kPolynomial;
  }
  return static_cast<uint8_t>(product);
}

uint8_t ExpBase(unsigned e) {
  uint8_t x = 1;
  for (unsigned i = 0; i < e % kOrder; ++i) x = MulBase(x, 2);
  return x;
}

}  // namespace cairn::gf256
