#include "codec/rs_code.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "codec/gf256.h"

namespace cairn {
namespace {

constexpr RsCodeId kAllCodes[] = {RsCodeId::kRs36_32, RsCodeId::kRs18_16, RsCodeId::kRs19_16};

// Random tests print their seed so that a failure can be replayed.
std::mt19937_64 SeededRng(uint64_t seed) {
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

uint8_t RandomNonzero(std::mt19937_64& rng) { return static_cast<uint8_t>(1 + rng() % 255); }

// n shards of len bytes with random data, encoded.
struct Shards {
  Shards(const RsCode& code, size_t len, std::mt19937_64& rng) : len(len), bufs(code.n()) {
    for (auto& b : bufs) b.resize(len);
    for (int i = 0; i < code.k(); ++i) {
      for (auto& x : bufs[i]) x = static_cast<uint8_t>(rng());
    }
    Status s = code.Encode(ptrs(), len);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<uint8_t*> ptrs() {
    std::vector<uint8_t*> p;
    for (auto& b : bufs) p.push_back(b.data());
    return p;
  }
  std::vector<const uint8_t*> cptrs() const {
    std::vector<const uint8_t*> p;
    for (auto& b : bufs) p.push_back(b.data());
    return p;
  }
  size_t len;
  std::vector<std::vector<uint8_t>> bufs;
};

// Syndrome (packed S_0 | S_1 << 8 | ...) of a lone error, for fast
// exhaustive sweeps at the syndrome level.
std::vector<std::array<uint32_t, 256>> ErrorSyndromes(const RsCode& code) {
  std::vector<std::array<uint32_t, 256>> t(code.n());
  for (int j = 0; j < code.n(); ++j) {
    for (unsigned v = 0; v < 256; ++v) {
      uint32_t s = 0;
      for (int i = 0; i < code.m(); ++i) {
        s |= static_cast<uint32_t>(gf256::Mul(static_cast<uint8_t>(v), code.ParityCheck(i, j)))
             << (8 * i);
      }
      t[j][v] = s;
    }
  }
  return t;
}

SymbolDecode DecodePacked(const RsCode& code, uint32_t packed) {
  uint8_t s[RsCode::kMaxM];
  for (int i = 0; i < code.m(); ++i) s[i] = static_cast<uint8_t>(packed >> (8 * i));
  return code.DecodeSyndromes(s);
}

TEST(RsCodeTest, Parameters) {
  RsCode a(RsCodeId::kRs36_32), b(RsCodeId::kRs18_16), c(RsCodeId::kRs19_16);
  EXPECT_EQ(a.n(), 36);
  EXPECT_EQ(a.k(), 32);
  EXPECT_EQ(a.m(), 4);
  EXPECT_EQ(b.n(), 18);
  EXPECT_EQ(b.m(), 2);
  EXPECT_EQ(c.n(), 19);
  EXPECT_EQ(c.m(), 3);
  EXPECT_STREQ(a.name(), "RS(36,32)");
  EXPECT_EQ(a.correctable(), 1);
  EXPECT_EQ(a.detectable(), 3);
  EXPECT_EQ(b.correctable(), 0);
  EXPECT_EQ(c.correctable(), 1);
  EXPECT_EQ(c.detectable(), 2);
}

TEST(RsCodeTest, GeneratorRootsAndCheckMatrix) {
  // H[i][j] = alpha^(i * (n_c - 1 - j)): syndrome i is c(alpha^i), roots
  // alpha^0 .. alpha^(m-1) of the generator polynomial.
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    const int nc = id == RsCodeId::kRs19_16 ? 18 : code.n();
    const int mc = id == RsCodeId::kRs19_16 ? 2 : code.m();
    for (int i = 0; i < mc; ++i) {
      for (int j = 0; j < nc; ++j) {
        EXPECT_EQ(code.ParityCheck(i, j), gf256::ExpBase(i * (nc - 1 - j))) << code.name();
      }
    }
  }
}

TEST(RsCodeTest, Rs19EmbedsRs18) {
  RsCode rs18(RsCodeId::kRs18_16), rs19(RsCodeId::kRs19_16);
  // The first two syndromes of RS(19,16) are those of RS(18,16): same rows,
  // and p2 (position 18) does not enter them.
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 18; ++j) EXPECT_EQ(rs19.ParityCheck(i, j), rs18.ParityCheck(i, j));
    EXPECT_EQ(rs19.ParityCheck(i, 18), 0);
  }
  EXPECT_EQ(rs19.ParityCheck(2, 18), 1);
  for (int j = 0; j < 18; ++j) EXPECT_EQ(rs19.ParityCheck(2, j), gf256::ExpBase(2 * (17 - j)));

  // An RS(19,16) codeword is an RS(18,16) codeword plus p2: same first two
  // parity shards, and the 18 shards alone check clean under RS(18,16).
  auto rng = SeededRng(1901);
  Shards s19(rs19, 1000, rng);
  std::vector<std::vector<uint8_t>> data(s19.bufs.begin(), s19.bufs.begin() + 16);
  std::vector<std::vector<uint8_t>> p18(2, std::vector<uint8_t>(1000));
  std::vector<uint8_t*> ptrs18;
  for (auto& d : data) ptrs18.push_back(d.data());
  for (auto& p : p18) ptrs18.push_back(p.data());
  ASSERT_TRUE(rs18.Encode(ptrs18, 1000).ok());
  EXPECT_EQ(p18[0], s19.bufs[16]);
  EXPECT_EQ(p18[1], s19.bufs[17]);
  auto all = s19.cptrs();
  std::vector<const uint8_t*> first18(all.begin(), all.begin() + 18);
  auto report = rs18.Check(first18, 1000);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->clean, 1000u);
}

TEST(RsCodeTest, EncodeMatchesReferenceTwin) {
  auto rng = SeededRng(20261122);
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    for (size_t len : {0u, 1u, 7u, 15u, 16u, 31u, 32u, 33u, 64u, 100u, 4097u}) {
      Shards a(code, len, rng);
      std::vector<std::vector<uint8_t>> parity(a.bufs.begin() + code.k(), a.bufs.end());
      auto p = a.ptrs();
      for (int r = code.k(); r < code.n(); ++r) std::fill(a.bufs[r].begin(), a.bufs[r].end(), 0xA5);
      ASSERT_TRUE(code.EncodeBase(p, len).ok());
      for (int r = 0; r < code.m(); ++r) {
        EXPECT_EQ(a.bufs[code.k() + r], parity[r]) << code.name() << " len " << len << " row " << r;
      }
      // Every stripe is a codeword by the textbook definition S_i = c(alpha^i).
      for (size_t t = 0; t < len; ++t) {
        uint8_t word[RsCode::kMaxN], syn[RsCode::kMaxM];
        for (int j = 0; j < code.n(); ++j) word[j] = a.bufs[j][t];
        code.SyndromesBase(word, syn);
        for (int i = 0; i < code.m(); ++i) ASSERT_EQ(syn[i], 0) << code.name() << " stripe " << t;
      }
    }
  }
}

TEST(RsCodeTest, SyndromesMatchReferenceTwin) {
  auto rng = SeededRng(77);
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    for (int trial = 0; trial < 2000; ++trial) {
      uint8_t word[RsCode::kMaxN], a[RsCode::kMaxM], b[RsCode::kMaxM];
      for (int j = 0; j < code.n(); ++j) word[j] = static_cast<uint8_t>(rng());
      code.Syndromes(word, a);
      code.SyndromesBase(word, b);
      for (int i = 0; i < code.m(); ++i) ASSERT_EQ(a[i], b[i]) << code.name();
    }
  }
}

TEST(RsCodeTest, DecodeSyndromesMatchesReferenceTwin) {
  auto rng = SeededRng(4242);
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    auto lone = ErrorSyndromes(code);
    for (int trial = 0; trial < 3000; ++trial) {
      uint8_t s[RsCode::kMaxM] = {};
      switch (trial % 4) {
        case 0:  // random syndrome: almost always uncorrectable
          for (int i = 0; i < code.m(); ++i) s[i] = static_cast<uint8_t>(rng());
          break;
        case 1: {  // a single error's syndrome
          uint32_t p = lone[rng() % code.n()][RandomNonzero(rng)];
          for (int i = 0; i < code.m(); ++i) s[i] = static_cast<uint8_t>(p >> (8 * i));
          break;
        }
        case 2: {  // two errors
          int a = static_cast<int>(rng() % code.n()), b = static_cast<int>(rng() % code.n());
          uint32_t p = lone[a][RandomNonzero(rng)] ^ lone[b][RandomNonzero(rng)];
          for (int i = 0; i < code.m(); ++i) s[i] = static_cast<uint8_t>(p >> (8 * i));
          break;
        }
        default:  // sparse syndromes: zeros in some rows
          for (int i = 0; i < code.m(); ++i) s[i] = (rng() & 1) ? static_cast<uint8_t>(rng()) : 0;
          break;
      }
      ASSERT_EQ(code.DecodeSyndromes(s), code.DecodeSyndromesBase(s))
          << code.name() << " trial " << trial;
    }
  }
}

// Every single-symbol error, in every position and with every nonzero
// value: stripe t of the test carries error value t+1 in shard j.
TEST(RsCodeTest, CorrectsEverySingleSymbolError) {
  auto rng = SeededRng(36);
  for (RsCodeId id : {RsCodeId::kRs36_32, RsCodeId::kRs19_16}) {
    RsCode code(id);
    for (int j = 0; j < code.n(); ++j) {
      Shards s(code, 255, rng);
      const auto original = s.bufs;
      for (int t = 0; t < 255; ++t) s.bufs[j][t] ^= static_cast<uint8_t>(t + 1);
      auto damaged = s.bufs;
      std::vector<StripeOutcome> outcomes(255);
      auto report = code.Correct(s.ptrs(), 255, outcomes);
      ASSERT_TRUE(report.ok());
      EXPECT_EQ(report->corrected, 255u) << code.name() << " shard " << j;
      EXPECT_EQ(report->corrected_by_shard[j], 255u);
      EXPECT_EQ(report->uncorrectable, 0u);
      for (int t = 0; t < 255; ++t) {
        const SymbolDecode want{DecodeState::kCorrected, j, static_cast<uint8_t>(t + 1)};
        ASSERT_EQ(outcomes[t], want)
            << code.name() << " shard " << j << " value " << t + 1;
      }
      EXPECT_EQ(s.bufs, original) << code.name() << " shard " << j;
      // The reference twin does the same from the damaged copy.
      s.bufs = damaged;
      auto base = code.CorrectBase(s.ptrs(), 255);
      ASSERT_TRUE(base.ok());
      EXPECT_EQ(base->corrected, 255u);
      EXPECT_EQ(s.bufs, original);
    }
  }
}

// RS(18,16) is detection only: every single error is flagged, nothing is
// changed, and adding p2 (RS(19,16)) then corrects it: the two layers.
TEST(RsCodeTest, Rs18DetectsEverySingleErrorAndRs19CorrectsIt) {
  auto rng = SeededRng(18);
  RsCode rs18(RsCodeId::kRs18_16), rs19(RsCodeId::kRs19_16);
  for (int j = 0; j < 18; ++j) {
    Shards s(rs19, 255, rng);
    const auto original = s.bufs;
    for (int t = 0; t < 255; ++t) s.bufs[j][t] ^= static_cast<uint8_t>(t + 1);
    const auto damaged = s.bufs;
    auto p = s.ptrs();
    std::vector<uint8_t*> first18(p.begin(), p.begin() + 18);
    auto layer1 = rs18.Correct(first18, 255);
    ASSERT_TRUE(layer1.ok());
    EXPECT_EQ(layer1->uncorrectable, 255u) << "shard " << j;
    EXPECT_EQ(s.bufs, damaged);  // detect-only never writes
    auto layer2 = rs19.Correct(p, 255);
    ASSERT_TRUE(layer2.ok());
    EXPECT_EQ(layer2->corrected_by_shard[j], 255u);
    EXPECT_EQ(s.bufs, original);
  }
}

// Exhaustive over positions and values at the syndrome level (the decoder
// sees nothing else), plus the shard path with one value sweep per pair.
TEST(RsCodeTest, DetectsEveryDoubleSymbolError) {
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    auto lone = ErrorSyndromes(code);
    uint64_t checked = 0;
    for (int a = 0; a < code.n(); ++a) {
      for (int b = a + 1; b < code.n(); ++b) {
        for (unsigned va = 1; va < 256; ++va) {
          for (unsigned vb = 1; vb < 256; ++vb) {
            SymbolDecode d = DecodePacked(code, lone[a][va] ^ lone[b][vb]);
            if (d.state != DecodeState::kUncorrectable) {
              FAIL() << code.name() << " positions " << a << "," << b << " values " << va << ","
                     << vb << " decoded " << DecodeStateName(d.state);
            }
            ++checked;
          }
        }
      }
    }
    const uint64_t n = code.n();
    EXPECT_EQ(checked, n * (n - 1) / 2 * 255 * 255);
  }
  auto rng = SeededRng(1916);
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    for (int a = 0; a < code.n(); ++a) {
      for (int b = a + 1; b < code.n(); ++b) {
        Shards s(code, 255, rng);
        for (int t = 0; t < 255; ++t) {
          s.bufs[a][t] ^= static_cast<uint8_t>(t + 1);
          s.bufs[b][t] ^= RandomNonzero(rng);
        }
        const auto damaged = s.bufs;
        auto report = code.Correct(s.ptrs(), 255);
        ASSERT_TRUE(report.ok());
        ASSERT_EQ(report->uncorrectable, 255u) << code.name() << " shards " << a << "," << b;
        ASSERT_EQ(s.bufs, damaged);
      }
    }
  }
}

TEST(RsCodeTest, Rs36DetectsTripleSymbolErrors) {
  const uint64_t seed = 363;
  auto rng = SeededRng(seed);
  RsCode code(RsCodeId::kRs36_32);
  auto lone = ErrorSyndromes(code);
  for (int trial = 0; trial < 3'000'000; ++trial) {
    int p[3];
    p[0] = static_cast<int>(rng() % 36);
    do p[1] = static_cast<int>(rng() % 36); while (p[1] == p[0]);
    do p[2] = static_cast<int>(rng() % 36); while (p[2] == p[0] || p[2] == p[1]);
    uint32_t s = lone[p[0]][RandomNonzero(rng)] ^ lone[p[1]][RandomNonzero(rng)] ^
                 lone[p[2]][RandomNonzero(rng)];
    ASSERT_EQ(DecodePacked(code, s).state, DecodeState::kUncorrectable)
        << "seed " << seed << " trial " << trial << " positions " << p[0] << "," << p[1] << ","
        << p[2];
  }
  // Through the shard path: every stripe with three wrong shards.
  const size_t len = 8192;
  Shards s(code, len, rng);
  for (size_t t = 0; t < len; ++t) {
    int a = static_cast<int>(rng() % 36), b, c;
    do b = static_cast<int>(rng() % 36); while (b == a);
    do c = static_cast<int>(rng() % 36); while (c == a || c == b);
    for (int x : {a, b, c}) s.bufs[x][t] ^= RandomNonzero(rng);
  }
  auto report = code.Check(s.cptrs(), len);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->uncorrectable, len) << "seed " << seed;
}

// Random data, random damage (0 to 4 wrong symbols per stripe): the
// ISA-L/table path and the reference twin agree stripe by stripe.
TEST(RsCodeTest, CheckAndCorrectMatchReferenceTwin) {
  auto rng = SeededRng(9001);
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    for (size_t len : {1u, 9u, 4096u, 4100u, 10000u}) {
      Shards s(code, len, rng);
      for (size_t t = 0; t < len; ++t) {
        int errors = static_cast<int>(rng() % 8);  // half the stripes stay clean
        if (errors > 4) errors = 0;
        for (int e = 0; e < errors; ++e) s.bufs[rng() % code.n()][t] ^= RandomNonzero(rng);
      }
      std::vector<StripeOutcome> fast(len), base(len);
      auto a = code.Check(s.cptrs(), len, fast);
      auto b = code.CheckBase(s.cptrs(), len, base);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(*a, *b) << code.name() << " len " << len;
      EXPECT_EQ(fast, base) << code.name() << " len " << len;
      EXPECT_EQ(a->clean + a->corrected + a->uncorrectable, len);
      auto copy = s.bufs;
      auto c = code.Correct(s.ptrs(), len);
      std::swap(copy, s.bufs);
      auto d = code.CorrectBase(s.ptrs(), len);
      ASSERT_TRUE(c.ok() && d.ok());
      EXPECT_EQ(*c, *a);
      EXPECT_EQ(*d, *a);
      EXPECT_EQ(copy, s.bufs) << code.name() << " len " << len;
    }
  }
}

// A whole shard replaced by garbage (a failed chip, or a lost part): every
// stripe is either clean (garbage happened to match) or corrected in that
// shard, and the data comes back.
TEST(RsCodeTest, CorrectsAWholeFailedShard) {
  auto rng = SeededRng(5150);
  for (RsCodeId id : {RsCodeId::kRs36_32, RsCodeId::kRs19_16}) {
    RsCode code(id);
    const size_t len = 1 << 18;
    Shards s(code, len, rng);
    const auto original = s.bufs;
    const int bad = 5;
    for (auto& x : s.bufs[bad]) x = static_cast<uint8_t>(rng());
    auto report = code.Correct(s.ptrs(), len);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->uncorrectable, 0u);
    EXPECT_EQ(report->corrected_by_shard[bad], report->corrected);
    EXPECT_GT(report->corrected, len * 99 / 100);
    EXPECT_EQ(s.bufs, original);
  }
}

TEST(RsCodeTest, RebuildsErasedShards) {
  auto rng = SeededRng(4711);
  for (RsCodeId id : kAllCodes) {
    RsCode code(id);
    const size_t len = 333;
    Shards s(code, len, rng);
    const auto original = s.bufs;
    // All patterns for the short codes, a random sample for RS(36,32).
    std::vector<std::vector<int>> patterns;
    if (code.n() <= 19) {
      for (int mask = 1; mask < (1 << code.n()); ++mask) {
        if (__builtin_popcount(mask) > code.m()) continue;
        std::vector<int> p;
        for (int j = 0; j < code.n(); ++j) {
          if (mask >> j & 1) p.push_back(j);
        }
        patterns.push_back(p);
      }
    } else {
      for (int trial = 0; trial < 400; ++trial) {
        std::vector<int> all(code.n());
        for (int j = 0; j < code.n(); ++j) all[j] = j;
        std::shuffle(all.begin(), all.end(), rng);
        all.resize(1 + trial % code.m());
        patterns.push_back(all);
      }
    }
    for (const auto& erased : patterns) {
      for (int e : erased) std::fill(s.bufs[e].begin(), s.bufs[e].end(), 0xEE);
      Status st = code.Rebuild(s.ptrs(), len, erased);
      ASSERT_TRUE(st.ok()) << st.ToString();
      ASSERT_EQ(s.bufs, original) << code.name() << " erased " << erased.size();
      for (int e : erased) std::fill(s.bufs[e].begin(), s.bufs[e].end(), 0x11);
      st = code.RebuildBase(s.ptrs(), len, erased);
      ASSERT_TRUE(st.ok()) << st.ToString();
      ASSERT_EQ(s.bufs, original) << code.name() << " (base) erased " << erased.size();
    }
  }
}

// count distinct shards of the code, drawn at random.
std::vector<int> RandomPattern(const RsCode& code, int count, std::mt19937_64& rng) {
  std::vector<int> all(code.n());
  for (int j = 0; j < code.n(); ++j) all[j] = j;
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(count);
  return all;
}

TEST(RsCodeTest, RebuildCachesOneDecoderPerErasurePattern) {
  auto rng = SeededRng(99);
  for (RsCodeId id : {RsCodeId::kRs36_32, RsCodeId::kRs19_16}) {
    RsCode code(id);
    Shards s(code, 100, rng);
    const auto original = s.bufs;
    EXPECT_EQ(code.cached_decoders(), 0u);
    // The same set in another order is the same pattern: one decoder, and
    // the rows still land in the right shards.
    const std::vector<int> orders[] = {{3, 1, code.k()}, {code.k(), 3, 1}, {1, code.k(), 3}};
    for (const auto& erased : orders) {
      for (int e : erased) std::fill(s.bufs[e].begin(), s.bufs[e].end(), 0xEE);
      ASSERT_TRUE(code.Rebuild(s.ptrs(), 100, erased).ok());
      EXPECT_EQ(s.bufs, original) << code.name();
      EXPECT_EQ(code.cached_decoders(), 1u) << code.name();
    }
    const int other[] = {0};
    std::fill(s.bufs[0].begin(), s.bufs[0].end(), 0);
    ASSERT_TRUE(code.Rebuild(s.ptrs(), 100, other).ok());
    EXPECT_EQ(s.bufs, original) << code.name();
    EXPECT_EQ(code.cached_decoders(), 2u) << code.name();
  }
}

TEST(RsCodeTest, DecoderCacheStaysBoundedAndEvictedPatternsStillRebuild) {
  auto rng = SeededRng(1234);
  RsCode code(RsCodeId::kRs36_32);
  Shards s(code, 64, rng);
  const auto original = s.bufs;
  std::vector<std::vector<int>> patterns;
  for (size_t i = 0; i < 3 * RsCode::kDecoderCacheCapacity; ++i) {
    patterns.push_back(RandomPattern(code, 1 + static_cast<int>(i % code.m()), rng));
  }
  // Twice over: the second round finds the first patterns evicted.
  for (int round = 0; round < 2; ++round) {
    for (const auto& erased : patterns) {
      for (int e : erased) std::fill(s.bufs[e].begin(), s.bufs[e].end(), 0x5A);
      ASSERT_TRUE(code.Rebuild(s.ptrs(), 64, erased).ok());
      ASSERT_EQ(s.bufs, original) << "round " << round;
      ASSERT_LE(code.cached_decoders(), RsCode::kDecoderCacheCapacity);
    }
  }
  EXPECT_EQ(code.cached_decoders(), RsCode::kDecoderCacheCapacity);
}

// Several threads share one code (as restart and a drain may) and rebuild
// from a pool of patterns larger than the cache, so that lookups, inserts
// and evictions race; every rebuild must still be exact.
TEST(RsCodeTest, RebuildIsThreadSafe) {
  auto rng = SeededRng(2026);
  for (RsCodeId id : {RsCodeId::kRs36_32, RsCodeId::kRs19_16}) {
    const RsCode code(id);
    std::vector<std::vector<int>> pool;
    for (size_t i = 0; i < 2 * RsCode::kDecoderCacheCapacity; ++i) {
      pool.push_back(RandomPattern(code, 1 + static_cast<int>(i % code.m()), rng));
    }
    constexpr int kThreads = 4;
    std::vector<int> failures(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 local(static_cast<uint64_t>(t) * 7919 + 1);
        Shards s(code, 256, local);
        const auto original = s.bufs;
        for (int i = 0; i < 2000; ++i) {
          const auto& erased = pool[local() % pool.size()];
          for (int e : erased) std::fill(s.bufs[e].begin(), s.bufs[e].end(), 0xA5);
          if (!code.Rebuild(s.ptrs(), 256, erased).ok() || s.bufs != original) {
            ++failures[t];
            s.bufs = original;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << code.name() << " thread " << t;
    EXPECT_LE(code.cached_decoders(), RsCode::kDecoderCacheCapacity);
  }
}

TEST(RsCodeTest, RejectsBadArguments) {
  RsCode code(RsCodeId::kRs19_16);
  auto rng = SeededRng(3);
  Shards s(code, 16, rng);
  auto p = s.ptrs();
  std::vector<uint8_t*> short_list(p.begin(), p.end() - 1);
  EXPECT_EQ(code.Encode(short_list, 16).code(), Code::kInvalidArgument);
  auto with_null = p;
  with_null[3] = nullptr;
  EXPECT_EQ(code.Encode(with_null, 16).code(), Code::kInvalidArgument);
  EXPECT_EQ(code.Correct(with_null, 16).status().code(), Code::kInvalidArgument);
  std::vector<StripeOutcome> too_few(15);
  EXPECT_EQ(code.Check(s.cptrs(), 16, too_few).status().code(), Code::kInvalidArgument);
  const int four[] = {0, 1, 2, 3};
  EXPECT_EQ(code.Rebuild(p, 16, four).code(), Code::kInvalidArgument);
  const int twice[] = {2, 2};
  EXPECT_EQ(code.Rebuild(p, 16, twice).code(), Code::kInvalidArgument);
  const int outside[] = {19};
  EXPECT_EQ(code.Rebuild(p, 16, outside).code(), Code::kInvalidArgument);
  EXPECT_EQ(code.RebuildBase(p, 16, outside).code(), Code::kInvalidArgument);
  EXPECT_TRUE(code.Rebuild(p, 16, {}).ok());
}

}  // namespace
}  // namespace cairn
