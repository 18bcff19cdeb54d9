#include "redundancy/combiner.h"

#include <cstdio>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

namespace cairn {
namespace {

constexpr uint32_t kSeed = 20261124;

void Fill(AlignedBuffer& b, std::mt19937& rng) {
  for (size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(rng());
}

// ISA-L against the scalar twin, for XOR (one row of ones) and Cauchy rows,
// first and accumulated contributions.
TEST(CombinerTest, MatchesItsReferenceTwin) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  const size_t len = 64 * 37;
  for (int sources : {1, 2, 5, 11}) {
    for (int rows : {1, 2, 4}) {
      const std::vector<uint8_t> coefs = ParityGenerator(sources, rows);
      ASSERT_EQ(coefs.size(), static_cast<size_t>(sources * rows));
      const Combiner fast(sources, rows, coefs), base(sources, rows, coefs);
      AlignedBuffer a(rows * len), b(rows * len), src(len);
      std::vector<uint8_t*> ra, rb;
      for (int r = 0; r < rows; ++r) {
        ra.push_back(a.data() + r * len);
        rb.push_back(b.data() + r * len);
      }
      for (int s = 0; s < sources; ++s) {
        Fill(src, rng);
        fast.Add(s, src.data(), ra.data(), len, s == 0);
        base.AddBase(s, src.data(), rb.data(), len, s == 0);
      }
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size()), 0)
          << "sources " << sources << " rows " << rows << " seed " << kSeed;
    }
  }
}

// Any `data` of the data + parity symbols rebuild the others.
TEST(CombinerTest, RebuildRowsRecoverEveryErasurePattern) {
  std::mt19937 rng(kSeed + 1);
  const size_t len = 128;
  for (int data = 1; data <= 6; ++data) {
    for (int parity = 1; parity <= 3; ++parity) {
      const int n = data + parity;
      std::vector<AlignedBuffer> symbols;
      for (int s = 0; s < n; ++s) symbols.emplace_back(len);
      std::vector<uint8_t*> parity_rows;
      for (int s = 0; s < data; ++s) Fill(symbols[static_cast<size_t>(s)], rng);
      for (int p = 0; p < parity; ++p) parity_rows.push_back(symbols[static_cast<size_t>(data + p)].data());
      const Combiner encoder(data, parity, ParityGenerator(data, parity));
      for (int s = 0; s < data; ++s) encoder.Add(s, symbols[static_cast<size_t>(s)].data(), parity_rows.data(), len, s == 0);
      for (uint32_t mask = 0; mask < (1u << n); ++mask) {
        if (std::popcount(mask) != parity) continue;
        std::vector<int> used, erased;
        for (int s = 0; s < n; ++s) ((mask >> s) & 1 ? erased : used).push_back(s);
        used.resize(static_cast<size_t>(data));
        auto rows = RebuildRows(data, parity, used, erased);
        ASSERT_TRUE(rows.ok()) << rows.status().ToString();
        const Combiner rebuild(data, parity, *rows);
        AlignedBuffer out(parity * len);
        std::vector<uint8_t*> out_rows;
        for (int e = 0; e < parity; ++e) out_rows.push_back(out.data() + e * len);
        for (int i = 0; i < data; ++i) {
          rebuild.Add(i, symbols[static_cast<size_t>(used[static_cast<size_t>(i)])].data(), out_rows.data(), len, i == 0);
        }
        for (int e = 0; e < parity; ++e) {
          EXPECT_EQ(std::memcmp(out_rows[static_cast<size_t>(e)],
                                symbols[static_cast<size_t>(erased[static_cast<size_t>(e)])].data(), len),
                    0)
              << "data " << data << " parity " << parity << " mask " << mask;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cairn
