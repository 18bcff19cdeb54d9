#include "codec/x86_64/xxh3_stripes_x86.h"

#include <cstring>

namespace cairn::x86 {
namespace {

uint64_t Read64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // little-endian, as x86 is
}

// The 128-bit product of a and b, its halves XORed.
uint64_t MultiplyFold(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

uint64_t Avalanche(uint64_t h) {
  h ^= h >> 37;
  h *= 0x165667919E3779F9ull;
  h ^= h >> 32;
  return h;
}

// Folds the accumulators pairwise, each pair keyed by 16 bytes of secret.
uint64_t MergeAccumulators(const uint64_t (&acc)[8], const uint8_t* secret, uint64_t start) {
  uint64_t result = start;
  for (size_t i = 0; i < 4; ++i) {
    result += MultiplyFold(acc[2 * i] ^ Read64(secret + 16 * i),
                           acc[2 * i + 1] ^ Read64(secret + 16 * i + 8));
  }
  return Avalanche(result);
}

}  // namespace

Xxh3Hash128 FinishXxh3Long(const uint64_t (&acc)[8], size_t n, const uint8_t* secret) {
  const uint64_t length = n;
  Xxh3Hash128 h;
  h.low64 = MergeAccumulators(acc, secret + kXxh3MergeLowKey, length * kXxhPrime64_1);
  h.high64 = MergeAccumulators(acc, secret + kXxh3MergeHighKey, ~(length * kXxhPrime64_2));
  return h;
}

}  // namespace cairn::x86
