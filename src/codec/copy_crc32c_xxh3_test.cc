#include "codec/copy_crc32c_xxh3.h"

#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "base/vector_state.h"
#include "codec/copy_testing.h"
#include "codec/crc32c.h"
#if defined(__x86_64__)
#include "codec/x86_64/copy_crc32c_x86.h"
#endif

namespace cairn {
namespace {

using CopyHashFn = uint32_t (*)(void*, const void*, size_t, size_t, uint32_t, CopyStores,
                                Xxh3Hash128*);

struct NamedKernel {
  const char* name;
  CopyHashFn fn;
  // Whether it takes this page length, destination and store kind.
  bool (*takes)(size_t page, const void* dst, CopyStores stores);
};

bool TakesAll(size_t, const void*, CopyStores) { return true; }
bool TakesWholeStrides(size_t page, const void* dst, CopyStores stores) {
  const bool aligned = stores == CopyStores::kCached || reinterpret_cast<uintptr_t>(dst) % 32 == 0;
  return page >= 256 && page % 128 == 0 && aligned;
}

std::vector<NamedKernel> Kernels() {
  std::vector<NamedKernel> kernels = {{"dispatched", CopyWithCrc32cXxh3, TakesAll},
                                      {"portable", CopyWithCrc32cXxh3Portable, TakesAll}};
#if defined(__x86_64__)
  if (x86::HasVpclmulAvx2()) {
    kernels.push_back({"vpclmul-avx2", x86::CopyWithCrc32cXxh3Vpclmul, TakesWholeStrides});
  }
#endif
  return kernels;
}

using namespace copy_testing;  // NOLINT(build/namespaces): the shared test helpers

// Copies `pages` pages of `page` bytes from src with `kernel` to
// dst_offset (from a 64-byte boundary) in a guarded buffer; checks each
// page's hash against xxHash's, the CRC against ISA-L's, the copy, and the
// bytes on both sides.
void CheckCopy(const NamedKernel& kernel, const uint8_t* src, size_t page, size_t pages,
               size_t dst_offset, CopyStores stores) {
  const size_t n = page * pages;
  alignas(64) static uint8_t buffer[kGuard + 64 + 3 * 65536 + kGuard];
  ASSERT_LE(kGuard + dst_offset + n + kGuard, sizeof buffer);
  std::memset(buffer, kGuardByte, sizeof buffer);
  uint8_t* to = buffer + kGuard + dst_offset;
  if (!kernel.takes(page, to, stores)) return;
  const uint32_t seed_crc = 0x89ABCDEFu;
  std::vector<Xxh3Hash128> hashes(pages + 1);
  const uint32_t crc = kernel.fn(to, src, n, page, seed_crc, stores, hashes.data());
  const char* mode = stores == CopyStores::kStreaming ? "streaming" : "cached";
  for (size_t k = 0; k < pages; ++k) {
    const XXH128_hash_t expected = XXH3_128bits(src + k * page, page);
    ASSERT_EQ(hashes[k].low64, expected.low64)
        << kernel.name << " " << mode << " page=" << page << " k=" << k;
    ASSERT_EQ(hashes[k].high64, expected.high64)
        << kernel.name << " " << mode << " page=" << page << " k=" << k;
  }
  ASSERT_EQ(hashes[pages], Xxh3Hash128{}) << kernel.name << " wrote a hash too many";
  ASSERT_EQ(crc, Crc32c(src, n, seed_crc)) << kernel.name << " " << mode << " n=" << n;
  ASSERT_EQ(std::memcmp(to, src, n), 0) << kernel.name << " " << mode << " n=" << n;
  ASSERT_TRUE(GuardsIntact(buffer, to, n)) << kernel.name << " n=" << n;
}

TEST(CopyWithCrc32cXxh3Test, ReportsItsKernel) {
  std::string name = CopyWithCrc32cXxh3Kernel();
  std::printf("kernel %s\n", name.c_str());
  EXPECT_TRUE(name == "vpclmul-avx2" || name == "portable") << name;
}

TEST(CopyWithCrc32cXxh3Test, TheDefaultSecretIsXxHashs) {
  // XXH3_128bits_withSecret with the secret as given equals XXH3_128bits
  // only if it is the default one.
  std::vector<uint8_t> data = RandomBytes(1000, 3);
  const XXH128_hash_t with = XXH3_128bits_withSecret(data.data(), data.size(),
                                                     Xxh3DefaultSecret(), 192);
  const XXH128_hash_t plain = XXH3_128bits(data.data(), data.size());
  EXPECT_EQ(with.low64, plain.low64);
  EXPECT_EQ(with.high64, plain.high64);
}

// One page of every length up to 8 KiB: multiples of 128 take the fused
// loop (one block, several blocks, a block boundary at the last stripe),
// the rest the two passes; sources at odd addresses, destinations aligned
// or not.
TEST(CopyWithCrc32cXxh3Test, MatchesXxHashAndCrc32cForEveryLength) {
  std::vector<uint8_t> data = RandomBytes(8192 + 64, 20261128);
  for (size_t src_offset : {0u, 1u, 40u}) {
    for (const NamedKernel& kernel : Kernels()) {
      for (size_t page = 1; page <= 8192; ++page) {
        for (size_t dst_offset : {0u, 32u, 16u, 5u}) {
          for (CopyStores stores : {CopyStores::kCached, CopyStores::kStreaming}) {
            CheckCopy(kernel, data.data() + src_offset, page, 1, dst_offset, stores);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// Runs of pages, each hashed on its own while the CRC runs on across them;
// long pages (many scrambles, a length just past a block).
TEST(CopyWithCrc32cXxh3Test, RunsOfPagesMatch) {
  std::vector<uint8_t> data = RandomBytes(3 * 65536 + 64, 11);
  for (size_t page : {size_t{256}, size_t{384}, size_t{1024}, size_t{1152}, size_t{4096},
                      size_t{65536}, size_t{65536 + 128}, size_t{4000}}) {
    for (size_t pages : {size_t{1}, size_t{2}, size_t{5}, size_t{17}}) {
      if (page * pages > 3 * 65536) continue;
      for (const NamedKernel& kernel : Kernels()) {
        for (CopyStores stores : {CopyStores::kCached, CopyStores::kStreaming}) {
          CheckCopy(kernel, data.data() + 7, page, pages, 0, stores);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// Unchanged bytes hash the same and one changed bit changes the hash: the
// property deduplication rests on, through the fused loop.
TEST(CopyWithCrc32cXxh3Test, OneFlippedBitChangesTheHash) {
  std::vector<uint8_t> page = RandomBytes(4096, 8);
  std::vector<uint8_t> dst(4096);
  Xxh3Hash128 before, again, after;
  CopyWithCrc32cXxh3(dst.data(), page.data(), 4096, 4096, 0, CopyStores::kCached, &before);
  CopyWithCrc32cXxh3(dst.data(), page.data(), 4096, 4096, 0, CopyStores::kCached, &again);
  EXPECT_EQ(before, again);
  for (size_t bit : {0u, 8 * 4095u + 7u, 8 * 2048u + 3u}) {
    page[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    CopyWithCrc32cXxh3(dst.data(), page.data(), 4096, 4096, 0, CopyStores::kCached, &after);
    EXPECT_NE(before, after) << "bit " << bit;
    page[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

TEST(CopyWithCrc32cXxh3Test, LeavesNoVectorStateInUse) {
  if (!UpperVectorHalvesInUse().has_value()) GTEST_SKIP() << "the CPU cannot report XINUSE";
  std::vector<uint8_t> page(4096, 0x5a), dst(4096);
  Xxh3Hash128 hash;
  for (size_t n : {size_t{4096}, size_t{4000}}) {
    CopyWithCrc32cXxh3(dst.data(), page.data(), n, n, 0, CopyStores::kCached, &hash);
    EXPECT_EQ(UpperVectorHalvesInUse(), false) << "n=" << n;
  }
}

}  // namespace
}  // namespace cairn
