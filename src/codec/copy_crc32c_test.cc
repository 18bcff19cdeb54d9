#include "codec/copy_crc32c.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codec/copy_testing.h"
#include "codec/crc32c.h"
#if defined(__x86_64__)
#include "codec/x86_64/copy_crc32c_x86.h"
#endif

namespace cairn {
namespace {

using CopyCrcFn = uint32_t (*)(void*, const void*, size_t, uint32_t, CopyStores);

struct NamedKernel {
  const char* name;
  CopyCrcFn fn;
};

// Every implementation this CPU can run, the dispatched one included.
std::vector<NamedKernel> Kernels() {
  std::vector<NamedKernel> kernels = {{"dispatched", CopyWithCrc32c},
                                      {"portable", CopyWithCrc32cPortable}};
#if defined(__x86_64__)
  if (x86::HasPclmulCrc()) kernels.push_back({"pclmul", x86::CopyWithCrc32cPclmul});
  if (x86::HasVpclmulAvx2()) kernels.push_back({"vpclmul", x86::CopyWithCrc32cVpclmul});
#endif
  return kernels;
}

using namespace copy_testing;  // NOLINT(build/namespaces): the shared test helpers

// Copies src[0, n) with `kernel` to dst_offset in a guarded buffer and
// checks the CRC, the copy, and the guard bytes on both sides.
void CheckCopy(const NamedKernel& kernel, const uint8_t* src, size_t n, size_t dst_offset,
               uint32_t seed_crc, uint32_t expected, CopyStores stores) {
  std::vector<uint8_t> dst(kGuard + dst_offset + n + kGuard, kGuardByte);
  uint8_t* to = dst.data() + kGuard + dst_offset;
  uint32_t crc = kernel.fn(to, src, n, seed_crc, stores);
  const char* mode = stores == CopyStores::kStreaming ? "streaming" : "cached";
  ASSERT_EQ(crc, expected) << kernel.name << " " << mode << " n=" << n
                           << " dst_offset=" << dst_offset;
  ASSERT_EQ(std::memcmp(to, src, n), 0) << kernel.name << " " << mode << " n=" << n;
  ASSERT_TRUE(GuardsIntact(dst.data(), to, n)) << kernel.name << " n=" << n;
}

TEST(CopyWithCrc32cTest, ReportsItsKernel) {
  std::string name = CopyWithCrc32cKernel();
  std::printf("kernel %s\n", name.c_str());
  EXPECT_TRUE(name == "vpclmul" || name == "pclmul" || name == "portable") << name;
}

#if defined(__x86_64__)
// x^e mod P, from the bitwise reference: the CRC of a message that is a
// single one bit followed by zeros, from a zero state and without the
// final inversion, is x^(bits after that one) * x^32 mod P.
uint32_t XPowFromReference(uint32_t e) {
  // The one bit sits `bit` places into the first byte of a k-byte message
  // (reflected: bit b of byte 0 is the coefficient of x^(8k - 1 - b)).
  const size_t k = (e - 32) / 8 + 1;
  const unsigned bit = static_cast<unsigned>(8 * k - 1 + 32 - e);
  std::vector<uint8_t> message(k, 0);
  message[0] = static_cast<uint8_t>(1u << bit);
  // Crc32cReference(m, n, c) is ~raw(m, ~c): a raw zero state is c = ~0.
  return ~Crc32cReference(message.data(), message.size(), ~0u);
}

TEST(CopyWithCrc32cTest, FoldingConstantsAreXPowersModP) {
  EXPECT_EQ(x86::XPowModCrc32c(0), 0x80000000u);
  EXPECT_EQ(x86::XPowModCrc32c(31), 0x00000001u);
  // x^32 mod P is P without its leading term: 0x1EDC6F41, reflected.
  EXPECT_EQ(x86::XPowModCrc32c(32), 0x82F63B78u);
  // The kernels fold by 128 and 1024 bits: x^(D +- 32) for both, and more.
  for (uint32_t e : {96u, 160u, 992u, 1056u, 33u, 100u, 511u, 4099u}) {
    EXPECT_EQ(x86::XPowModCrc32c(e), XPowFromReference(e)) << "e=" << e;
  }
}
#endif

TEST(CopyWithCrc32cTest, EveryLengthUpTo4096AtOddAlignments) {
  const uint32_t seed = 20261124;
  std::vector<uint8_t> data = RandomBytes(4096 + 64, seed);
  const uint32_t seed_crc = 0x1234ABCDu;
  for (size_t src_offset : {0u, 1u, 7u, 33u}) {
    const uint8_t* src = data.data() + src_offset;
    // The reference CRC of every prefix, extended a byte at a time.
    std::vector<uint32_t> expected(4097);
    expected[0] = seed_crc;
    for (size_t n = 1; n <= 4096; ++n) expected[n] = Crc32cReference(src + n - 1, 1, expected[n - 1]);
    for (const NamedKernel& kernel : Kernels()) {
      for (size_t n = 0; n <= 4096; ++n) {
        for (size_t dst_offset : {0u, 3u, 16u, 31u}) {
          for (CopyStores stores : {CopyStores::kCached, CopyStores::kStreaming}) {
            CheckCopy(kernel, src, n, dst_offset, seed_crc, expected[n], stores);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(CopyWithCrc32cTest, LargeCopiesMatchCrc32c) {
  const uint32_t seed = 77;
  std::vector<uint8_t> data = RandomBytes((4 << 20) + 300, seed);
  for (size_t n : {size_t{65536}, size_t{(1 << 20) + 17}, size_t{(4 << 20) + 255}}) {
    // Crc32c (ISA-L) is itself checked against the reference in crc32c_test.
    const uint32_t expected = Crc32c(data.data() + 5, n, 0xFFFFFFFFu);
    for (const NamedKernel& kernel : Kernels()) {
      for (CopyStores stores : {CopyStores::kCached, CopyStores::kStreaming}) {
        CheckCopy(kernel, data.data() + 5, n, 9, 0xFFFFFFFFu, expected, stores);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CopyWithCrc32cTest, ContinuesAcrossPieces) {
  std::vector<uint8_t> data = RandomBytes(4 * 65536 + 1000, 5);
  std::vector<uint8_t> dst(data.size());
  for (const NamedKernel& kernel : Kernels()) {
    uint32_t crc = 0;
    // Pieces of uneven lengths, as a stream copied by parts.
    size_t pos = 0;
    for (size_t piece : {size_t{1}, size_t{300}, size_t{65536}, size_t{4095}, size_t{131072}}) {
      crc = kernel.fn(dst.data() + pos, data.data() + pos, piece, crc, CopyStores::kStreaming);
      pos += piece;
    }
    crc = kernel.fn(dst.data() + pos, data.data() + pos, data.size() - pos, crc,
                    CopyStores::kCached);
    EXPECT_EQ(crc, Crc32c(data.data(), data.size())) << kernel.name;
    EXPECT_EQ(dst, data) << kernel.name;
  }
}

}  // namespace
}  // namespace cairn
