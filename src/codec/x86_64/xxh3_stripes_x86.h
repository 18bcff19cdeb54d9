// XXH3-128's long-input loop (xxHash's XXH3_128bits for inputs over 240
// bytes: default secret, seed 0), fed 128 bytes at a time by a copy loop
// that has those bytes in registers already, so that hashing them costs no
// second pass over memory. xxHash has no entry point that takes the bytes
// from the caller's registers; this is its algorithm as its specification
// (doc/xxhash_spec.md) gives it, checked bit for bit against XXH3_128bits by
// copy_crc32c_xxh3_test.cc.
//
// The loop, for a length n > 240: eight 64-bit accumulators take 64-byte
// stripes; stripe k is keyed by the secret at byte 8 * (k % 16), and after
// every 16th stripe the accumulators are scrambled with the secret's last
// 64 bytes. The last stripe (bytes n - 64 .. n) is keyed at byte 121
// instead, with no scramble after it. Where n is a multiple of 64 every
// stripe is read once, in order, which is what lets a copy loop feed it;
// Xxh3Stripes therefore requires a page length that is a multiple of 128
// (two stripes per call) and at least 256.
// Thread-safety: an Xxh3Stripes is one hash's state, used by one thread.
#ifndef CAIRN_CODEC_X86_64_XXH3_STRIPES_X86_H_
#define CAIRN_CODEC_X86_64_XXH3_STRIPES_X86_H_

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "codec/copy_crc32c_xxh3.h"

namespace cairn::x86 {

// Always inlined into the copy loop, so that the state stays in registers.
#define CAIRN_XXH3_AVX2_TARGET __attribute__((target("avx2"), always_inline)) inline

// The default secret's length and the offsets the loop and the
// finalisation read it at (xxHash's XXH_SECRET_DEFAULT_SIZE,
// XXH_SECRET_LASTACC_START, XXH_SECRET_MERGEACCS_START).
inline constexpr size_t kXxh3SecretBytes = 192;
inline constexpr size_t kXxh3StripeBytes = 64;
inline constexpr size_t kXxh3StripesPerBlock = 16;
inline constexpr size_t kXxh3ScrambleKey = kXxh3SecretBytes - kXxh3StripeBytes;
inline constexpr size_t kXxh3LastStripeKey = kXxh3SecretBytes - kXxh3StripeBytes - 7;
inline constexpr size_t kXxh3MergeLowKey = 11;
inline constexpr size_t kXxh3MergeHighKey = kXxh3SecretBytes - kXxh3StripeBytes - 11;

inline constexpr uint64_t kXxhPrime32_1 = 0x9E3779B1u;
inline constexpr uint64_t kXxhPrime32_2 = 0x85EBCA77u;
inline constexpr uint64_t kXxhPrime32_3 = 0xC2B2AE3Du;
inline constexpr uint64_t kXxhPrime64_1 = 0x9E3779B185EBCA87ull;
inline constexpr uint64_t kXxhPrime64_2 = 0xC2B2AE3D27D4EB4Full;
inline constexpr uint64_t kXxhPrime64_3 = 0x165667B19E3779F9ull;
inline constexpr uint64_t kXxhPrime64_4 = 0x85EBCA77C2B2AE63ull;
inline constexpr uint64_t kXxhPrime64_5 = 0x27D4EB2F165667C5ull;

// XXH3_128bits' final step from the eight accumulators of an n-byte input
// hashed with `secret` (Xxh3DefaultSecret()).
Xxh3Hash128 FinishXxh3Long(const uint64_t (&acc)[8], size_t n, const uint8_t* secret);

// The loop's state in two 256-bit registers, for a run of pages of
// `page` bytes each hashed on its own: the input is fed whole strides in
// order, and each page's hash is written out as its last stride is fed.
class Xxh3Stripes {
 public:
  // REQUIRES: page % 128 == 0, page >= 256; `hashes` has room for one
  // hash per page fed.
  CAIRN_XXH3_AVX2_TARGET Xxh3Stripes(size_t page, Xxh3Hash128* hashes)
      : secret_(Xxh3DefaultSecret()), last_stride_(page - 2 * kXxh3StripeBytes), page_(page),
        hashes_(hashes) {
    Reset();
  }

  // The next 128 bytes of the input as four 32-byte vectors: stripes
  // 2k and 2k + 1 of the page they fall in.
  CAIRN_XXH3_AVX2_TARGET void Stride(__m256i a, __m256i b, __m256i c, __m256i d) {
    const size_t key = (in_page_ / kXxh3StripeBytes) % kXxh3StripesPerBlock * 8;
    Accumulate(a, b, secret_ + key);
    if (in_page_ == last_stride_) {
      Accumulate(c, d, secret_ + kXxh3LastStripeKey);
      *hashes_++ = Finish();
      Reset();
      return;
    }
    Accumulate(c, d, secret_ + key + 8);
    // The stride's second stripe ends a block of 16.
    if (key + 8 == (kXxh3StripesPerBlock - 1) * 8) Scramble();
    in_page_ += 2 * kXxh3StripeBytes;
  }

 private:
  // xxHash's XXH3_INIT_ACC, lowest lane first.
  CAIRN_XXH3_AVX2_TARGET void Reset() {
    acc_[0] = _mm256_set_epi64x(static_cast<long long>(kXxhPrime64_3),
                                static_cast<long long>(kXxhPrime64_2),
                                static_cast<long long>(kXxhPrime64_1),
                                static_cast<long long>(kXxhPrime32_3));
    acc_[1] = _mm256_set_epi64x(static_cast<long long>(kXxhPrime32_1),
                                static_cast<long long>(kXxhPrime64_5),
                                static_cast<long long>(kXxhPrime32_2),
                                static_cast<long long>(kXxhPrime64_4));
    in_page_ = 0;
  }

  CAIRN_XXH3_AVX2_TARGET Xxh3Hash128 Finish() const {
    alignas(32) uint64_t acc[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc), acc_[0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(acc + 4), acc_[1]);
    return FinishXxh3Long(acc, page_, secret_);
  }

  // One stripe, as its two halves: accumulator i gains the stripe's 64-bit
  // word i ^ 1, and the product of the low and high halves of word i XOR
  // key i.
  CAIRN_XXH3_AVX2_TARGET void Accumulate(__m256i low, __m256i high, const uint8_t* key) {
    acc_[0] = AccumulateHalf(acc_[0], low, key);
    acc_[1] = AccumulateHalf(acc_[1], high, key + 32);
  }
  CAIRN_XXH3_AVX2_TARGET static __m256i AccumulateHalf(__m256i acc, __m256i data,
                                                       const uint8_t* key) {
    const __m256i keyed =
        _mm256_xor_si256(data, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(key)));
    const __m256i product = _mm256_mul_epu32(keyed, _mm256_srli_epi64(keyed, 32));
    const __m256i swapped = _mm256_shuffle_epi32(data, _MM_SHUFFLE(1, 0, 3, 2));
    return _mm256_add_epi64(product, _mm256_add_epi64(acc, swapped));
  }

  // acc = (acc ^ (acc >> 47) ^ key) * PRIME32_1, modulo 2^64.
  CAIRN_XXH3_AVX2_TARGET void Scramble() {
    const __m256i prime = _mm256_set1_epi32(static_cast<int>(kXxhPrime32_1));
    for (int i = 0; i < 2; ++i) {
      __m256i x = _mm256_xor_si256(acc_[i], _mm256_srli_epi64(acc_[i], 47));
      x = _mm256_xor_si256(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                  secret_ + kXxh3ScrambleKey + 32 * i)));
      const __m256i low = _mm256_mul_epu32(x, prime);
      const __m256i high = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), prime);
      acc_[i] = _mm256_add_epi64(low, _mm256_slli_epi64(high, 32));
    }
  }

  const uint8_t* secret_;
  size_t last_stride_;
  size_t page_;
  Xxh3Hash128* hashes_;
  size_t in_page_ = 0;
  __m256i acc_[2];
};

}  // namespace cairn::x86

#endif  // CAIRN_CODEC_X86_64_XXH3_STRIPES_X86_H_
