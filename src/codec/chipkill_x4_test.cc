#include "codec/chipkill_x4.h"

#include <cstdio>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

using Column = std::array<uint8_t, 4>;

Column Unpack(uint16_t c) {
  return {static_cast<uint8_t>(c & 0xF), static_cast<uint8_t>(c >> 4 & 0xF),
          static_cast<uint8_t>(c >> 8 & 0xF), static_cast<uint8_t>(c >> 12 & 0xF)};
}

// Rank over GF(16), with the reference multiplication only.
int Rank(std::vector<Column> rows) {
  auto inv = [](uint8_t a) {
    for (uint8_t y = 1; y < 16; ++y) {
      if (Gf16MulBase(a, y) == 1) return y;
    }
    return uint8_t{0};
  };
  int rank = 0;
  for (int col = 0; col < 4; ++col) {
    size_t pivot = rank;
    while (pivot < rows.size() && rows[pivot][col] == 0) ++pivot;
    if (pivot == rows.size()) continue;
    std::swap(rows[pivot], rows[rank]);
    uint8_t s = inv(rows[rank][col]);
    for (auto& x : rows[rank]) x = Gf16MulBase(x, s);
    for (size_t r = 0; r < rows.size(); ++r) {
      if (static_cast<int>(r) == rank || rows[r][col] == 0) continue;
      uint8_t f = rows[r][col];
      for (int c = 0; c < 4; ++c) rows[r][c] ^= Gf16MulBase(f, rows[rank][c]);
    }
    ++rank;
  }
  return rank;
}

TEST(ChipkillX4Test, FieldMatchesReference) {
  for (unsigned a = 0; a < 16; ++a) {
    for (unsigned b = 0; b < 16; ++b) {
      ASSERT_EQ(Gf16Mul(static_cast<uint8_t>(a), static_cast<uint8_t>(b)),
                Gf16MulBase(static_cast<uint8_t>(a), static_cast<uint8_t>(b)));
    }
  }
  // x^4 + x + 1 is primitive: alpha = 2 has order 15.
  uint8_t x = 1;
  for (int i = 1; i <= 15; ++i) {
    x = Gf16MulBase(x, 2);
    EXPECT_EQ(x == 1, i == 15) << i;
  }
}

// Distance 4 (SSC-DSD) holds iff every 3 columns of H are independent.
TEST(ChipkillX4Test, AnyThreeColumnsAreIndependent) {
  ChipkillX4Code code;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(code.Column(32 + i), 1u << (4 * i)) << "check columns are the identity";
  }
  int triples = 0;
  for (int a = 0; a < 36; ++a) {
    for (int b = a + 1; b < 36; ++b) {
      for (int c = b + 1; c < 36; ++c) {
        ASSERT_EQ(Rank({Unpack(code.Column(a)), Unpack(code.Column(b)), Unpack(code.Column(c))}),
                  3)
            << a << "," << b << "," << c;
        ++triples;
      }
    }
  }
  EXPECT_EQ(triples, 7140);
}

TEST(ChipkillX4Test, EncodeAndSyndromesMatchReferenceTwins) {
  const uint64_t seed = 144;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  ChipkillX4Code code;
  for (int trial = 0; trial < 20000; ++trial) {
    uint8_t a[36], b[36];
    for (int j = 0; j < 32; ++j) a[j] = b[j] = rng() & 0xF;
    code.Encode(a);
    code.EncodeBase(b);
    ASSERT_EQ(std::vector<uint8_t>(a, a + 36), std::vector<uint8_t>(b, b + 36));
    ASSERT_EQ(code.Syndrome(a), 0);
    ASSERT_EQ(code.SyndromeBase(a), 0);
    for (int j = 0; j < 36; ++j) a[j] = rng() & 0xF;
    ASSERT_EQ(code.Syndrome(a), code.SyndromeBase(a));
  }
}

TEST(ChipkillX4Test, DecoderMatchesReferenceTwinOnEverySyndrome) {
  ChipkillX4Code code;
  int corrected = 0;
  for (unsigned s = 0; s < 0x10000; ++s) {
    SymbolDecode a = code.DecodeSyndrome(static_cast<uint16_t>(s));
    ASSERT_EQ(a, code.DecodeSyndromeBase(static_cast<uint16_t>(s))) << s;
    corrected += a.state == DecodeState::kCorrected;
  }
  EXPECT_EQ(corrected, 36 * 15);
}

TEST(ChipkillX4Test, CorrectsEverySingleAndDetectsEveryDoubleSymbolError) {
  const uint64_t seed = 4;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  ChipkillX4Code code;
  uint8_t good[36];
  for (int j = 0; j < 32; ++j) good[j] = rng() & 0xF;
  code.Encode(good);
  for (int p = 0; p < 36; ++p) {
    for (uint8_t v = 1; v < 16; ++v) {
      uint8_t w[36];
      std::copy(good, good + 36, w);
      w[p] ^= v;
      SymbolDecode d = code.Correct(w);
      ASSERT_EQ(d, (SymbolDecode{DecodeState::kCorrected, p, v}));
      ASSERT_TRUE(std::equal(w, w + 36, good));
    }
  }
  for (int p = 0; p < 36; ++p) {
    for (int q = p + 1; q < 36; ++q) {
      for (uint8_t v = 1; v < 16; ++v) {
        for (uint8_t u = 1; u < 16; ++u) {
          uint8_t w[36];
          std::copy(good, good + 36, w);
          w[p] ^= v;
          w[q] ^= u;
          ASSERT_EQ(code.Correct(w).state, DecodeState::kUncorrectable) << p << "," << q;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cairn
