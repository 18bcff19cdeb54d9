#include "codec/dram_faultsim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

const std::vector<EccScheme> kSchemes = AllEccSchemes();

TEST(FaultSimNamesTest, CombosSchemesAndScopes) {
  auto combos = AllFaultCombos();
  ASSERT_EQ(combos.size(), 20u);
  std::set<std::string> names;
  for (size_t i = 0; i < combos.size(); ++i) {
    EXPECT_EQ(FaultComboId(combos[i]), static_cast<int>(i));
    std::string name = FaultComboName(combos[i]);
    names.insert(name);
    auto parsed = ParseFaultCombo(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_EQ(*parsed, combos[i]);
  }
  EXPECT_EQ(names.size(), 20u);
  EXPECT_EQ(FaultComboName(combos[0]), "bit");
  EXPECT_EQ(FaultComboName(combos[4]), "chip");
  EXPECT_EQ(FaultComboName(combos[5]), "bit+bit");
  EXPECT_EQ(FaultComboName(combos[19]), "chip+chip");
  auto swapped = ParseFaultCombo("chip+pin");
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ(FaultComboName(*swapped), "pin+chip");
  EXPECT_FALSE(ParseFaultCombo("rank").ok());
  EXPECT_FALSE(ParseFaultCombo("pin+").ok());
  EXPECT_FALSE(ParseFaultCombo("").ok());
  for (EccScheme s : kSchemes) {
    auto parsed = ParseEccScheme(EccSchemeName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_FALSE(ParseEccScheme("rs20_16").ok());
  EXPECT_EQ(*ParseFaultScope("codeword"), FaultScope::kCodeword);
  EXPECT_FALSE(ParseFaultScope("rank").ok());
  EXPECT_EQ(*ParseFaultModel("paper"), FaultModel::kPaper);
  EXPECT_EQ(*ParseFaultModel(FaultModelName(FaultModel::kCairn)), FaultModel::kCairn);
  auto bad = ParseFaultModel("hardware");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'hardware'"), std::string::npos);
}

// Every bit of every chip's burst lands on exactly one symbol bit, and
// every symbol bit of every codeword is covered.
TEST(FaultSimLayoutTest, BitToSymbolMappingIsABijection) {
  for (EccScheme scheme : kSchemes) {
    const RankGeometry g = GeometryOf(scheme);
    std::set<std::tuple<int, int, int>> seen;
    for (int chip = 0; chip < g.chips; ++chip) {
      for (int beat = 0; beat < kBeats; ++beat) {
        for (int pin = 0; pin < kPins; ++pin) {
          SymbolLocation loc = LocateBit(scheme, chip, beat, pin);
          EXPECT_EQ(loc.codeword, beat / g.beats_per_codeword);
          EXPECT_LT(loc.bit, g.symbol_bits);
          EXPECT_TRUE(seen.insert({loc.codeword, loc.position, loc.bit}).second)
              << EccSchemeName(scheme) << " chip " << chip << " beat " << beat << " pin " << pin;
        }
      }
    }
    const int n = scheme == EccScheme::kRs18_16 || scheme == EccScheme::kRs19_16 ? 18 : 36;
    EXPECT_EQ(seen.size(), static_cast<size_t>(g.codewords * n * g.symbol_bits))
        << EccSchemeName(scheme);
  }
}

// The fast path (syndromes of the error alone, shifted symbol extraction)
// against the long way: random data encoded by the real encoders into the
// real layout (LocateBit), bits flipped, decoded by Check/Correct, and the
// delivered data compared with what was written.
AccessOutcome Reference(const DramFaultSimulator& sim, EccScheme scheme,
                        const FaultPattern& pattern, std::mt19937_64& rng) {
  const RankGeometry g = GeometryOf(scheme);
  auto flip = [&](auto&& symbol_at) {
    for (int f = 0; f < pattern.count; ++f) {
      for (int beat = 0; beat < kBeats; ++beat) {
        for (int pin = 0; pin < kPins; ++pin) {
          if (pattern.flips[f] >> (4 * beat + pin) & 1) {
            SymbolLocation loc = LocateBit(scheme, pattern.chip[f], beat, pin);
            symbol_at(loc.codeword, loc.position) ^= static_cast<uint8_t>(1u << loc.bit);
          }
        }
      }
    }
  };
  if (scheme == EccScheme::kChipkillX4) {
    std::vector<std::array<uint8_t, 36>> words(g.codewords), written;
    for (auto& w : words) {
      for (int j = 0; j < 32; ++j) w[j] = rng() & 0xF;
      sim.chipkill().Encode(w.data());
    }
    written = words;
    flip([&](int w, int pos) -> uint8_t& { return words[w][pos]; });
    bool wrong = false;
    for (int w = 0; w < g.codewords; ++w) {
      if (sim.chipkill().Correct(words[w].data()).state == DecodeState::kUncorrectable) {
        return AccessOutcome::kDue;
      }
      wrong |= !std::equal(words[w].begin(), words[w].begin() + 32, written[w].begin());
    }
    return wrong ? AccessOutcome::kSdc : AccessOutcome::kDce;
  }
  // RS schemes: shard j holds position j of every codeword of the access
  // (stripe w = codeword w).
  const RsCode& code = scheme == EccScheme::kRs36_32 ? sim.rs36() : sim.rs19();
  const size_t len = g.codewords;
  std::vector<std::vector<uint8_t>> shards(code.n(), std::vector<uint8_t>(len));
  for (int j = 0; j < code.k(); ++j) {
    for (auto& x : shards[j]) x = static_cast<uint8_t>(rng());
  }
  std::vector<uint8_t*> p;
  for (auto& s : shards) p.push_back(s.data());
  EXPECT_TRUE(code.Encode(p, len).ok());
  const auto written = shards;
  flip([&](int w, int pos) -> uint8_t& { return shards[pos][w]; });
  if (scheme == EccScheme::kRs36_32) {
    auto r = sim.rs36().Correct(p, len);
    if (r->uncorrectable) return AccessOutcome::kDue;
  } else {
    // Layer 1 on the 18 shards in the rank; layer 2 with p2 where it fired.
    std::vector<uint8_t*> first18(p.begin(), p.begin() + 18);
    std::vector<StripeOutcome> layer1(len), layer2(len);
    auto r1 = sim.rs18().Check(std::vector<const uint8_t*>(first18.begin(), first18.end()), len,
                               layer1);
    EXPECT_TRUE(r1.ok());
    if (scheme == EccScheme::kRs18_16) {
      if (r1->uncorrectable) return AccessOutcome::kDue;
    } else {
      auto r2 = sim.rs19().Check(std::vector<const uint8_t*>(p.begin(), p.end()), len, layer2);
      EXPECT_TRUE(r2.ok());
      for (size_t w = 0; w < len; ++w) {
        if (layer1[w].state == DecodeState::kClean) continue;
        if (layer2[w].state == DecodeState::kUncorrectable) return AccessOutcome::kDue;
        if (layer2[w].state == DecodeState::kCorrected) {
          shards[layer2[w].position][w] ^= layer2[w].error;
        }
      }
    }
  }
  for (int j = 0; j < code.k(); ++j) {
    if (shards[j] != written[j]) return AccessOutcome::kSdc;
  }
  return AccessOutcome::kDce;
}

TEST(FaultSimTest, FastPathAgreesWithRealEncodeAndDecode) {
  const uint64_t seed = 8086;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 data_rng(seed);
  FaultSimRng rng(seed);
  DramFaultSimulator sim;
  std::array<int, 3> seen{};
  for (EccScheme scheme : kSchemes) {
    for (FaultScope scope : {FaultScope::kAccess, FaultScope::kCodeword}) {
      for (const FaultCombo& combo : AllFaultCombos()) {
        for (int trial = 0; trial < 300; ++trial) {
          FaultPattern p = sim.Sample(scheme, combo, scope, FaultModel::kCairn, rng);
          AccessOutcome fast = sim.Evaluate(scheme, p, FaultModel::kCairn);
          ASSERT_EQ(fast, Reference(sim, scheme, p, data_rng))
              << EccSchemeName(scheme) << " " << FaultComboName(combo) << " "
              << FaultScopeName(scope) << " trial " << trial << " seed " << seed;
          ++seen[static_cast<int>(fast)];
        }
      }
    }
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

// SDC is rare; hand-made patterns that force it check that the fast path
// calls it SDC (4 wrong symbols in one RS(36,32) codeword, chosen so the
// syndrome is that of a single error elsewhere).
TEST(FaultSimTest, MiscorrectionIsSilentCorruption) {
  DramFaultSimulator sim;
  const uint64_t seed = 31337;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  FaultSimRng rng(seed);
  std::mt19937_64 data_rng(seed);
  int sdc = 0;
  for (int trial = 0; trial < 20'000'000 && sdc < 3; ++trial) {
    FaultPattern p = sim.Sample(EccScheme::kRs36_32, {FaultType::kChip, FaultType::kChip},
                                FaultScope::kCodeword, FaultModel::kCairn, rng);
    if (sim.Evaluate(EccScheme::kRs36_32, p, FaultModel::kCairn) == AccessOutcome::kSdc) {
      ++sdc;
      EXPECT_EQ(Reference(sim, EccScheme::kRs36_32, p, data_rng), AccessOutcome::kSdc);
    }
  }
  EXPECT_EQ(sdc, 3) << "expected a miscorrection about every 470000 trials";
}

std::vector<FaultSimCell> RunOrDie(const DramFaultSimulator& sim, const FaultSimOptions& o) {
  auto r = sim.Run(o, PosixEnv());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<FaultSimCell>{};
}

TEST(FaultSimTest, SingleChipFaultsAreAlwaysCorrectedBySymbolCorrectingCodes) {
  DramFaultSimulator sim;
  for (FaultScope scope : {FaultScope::kAccess, FaultScope::kCodeword}) {
    FaultSimOptions o;
    o.trials = 100'000;
    o.seed = 11;
    o.threads = 2;
    o.scope = scope;
    for (int t = 0; t < kFaultTypeCount; ++t) {
      o.combos.push_back({static_cast<FaultType>(t), std::nullopt});
    }
    std::printf("seed %llu scope %s\n", static_cast<unsigned long long>(o.seed),
                FaultScopeName(scope));
    for (const FaultSimCell& c : RunOrDie(sim, o)) {
      SCOPED_TRACE(std::string(EccSchemeName(c.scheme)) + " " + FaultComboName(c.combo) + " " +
                   FaultScopeName(scope));
      EXPECT_EQ(c.dce + c.due + c.sdc, c.trials);
      EXPECT_EQ(c.sdc, 0u);  // one chip: at most 2 symbols per codeword
      switch (c.scheme) {
        case EccScheme::kRs19_16:
        case EccScheme::kChipkillX4:
          // One chip is one symbol per codeword.
          EXPECT_EQ(c.dce, c.trials);
          break;
        case EccScheme::kRs18_16:
          EXPECT_EQ(c.due, c.trials);  // detection only
          break;
        case EccScheme::kRs36_32: {
          const FaultType t = c.combo.first;
          if (t == FaultType::kBit || t == FaultType::kColumn || t == FaultType::kWord) {
            EXPECT_EQ(c.dce, c.trials);  // within one 8-bit symbol
            break;
          }
          // A pin or a chip spans both symbols a chip puts in a codeword:
          // detected, and corrected only when every codeword happens to
          // keep one of its two symbols intact. Exact probabilities under
          // "each faulty bit flips with probability 1/2, nonzero":
          double dce;
          const bool access = scope == FaultScope::kAccess;
          if (t == FaultType::kPin) {
            // Codeword = 2 symbols x 2 pin bits; ok unless both pairs flip.
            dce = access ? (7.0 * 7.0 - 1) / 255 : (16.0 - 9 - 1) / 15;
          } else {
            // Codeword = 2 whole bytes; ok if at most one byte is nonzero.
            dce = access ? (511.0 * 511.0 - 1) / 4294967295.0 : (511.0 - 1) / 65535;
          }
          const double tolerance = 5 * std::sqrt(dce * (1 - dce) / c.trials) + 1e-4;
          EXPECT_NEAR(c.dce_rate(), dce, tolerance);
          EXPECT_EQ(c.dce + c.due, c.trials);
          break;
        }
      }
    }
  }
}

TEST(FaultSimTest, TwoChipFaultsAreNeverSilentForDistanceFourCodes) {
  DramFaultSimulator sim;
  FaultSimOptions o;
  o.trials = 50'000;
  o.seed = 12;
  o.threads = 2;
  o.schemes = {EccScheme::kRs18_16, EccScheme::kRs19_16, EccScheme::kChipkillX4};
  for (const FaultCombo& c : AllFaultCombos()) {
    if (c.second) o.combos.push_back(c);
  }
  std::printf("seed %llu\n", static_cast<unsigned long long>(o.seed));
  for (FaultScope scope : {FaultScope::kAccess, FaultScope::kCodeword}) {
    o.scope = scope;
    for (const FaultSimCell& c : RunOrDie(sim, o)) {
      SCOPED_TRACE(std::string(EccSchemeName(c.scheme)) + " " + FaultComboName(c.combo) + " " +
                   FaultScopeName(scope));
      EXPECT_EQ(c.sdc, 0u);
      // Both faults in one codeword: two wrong symbols, always flagged.
      if (scope == FaultScope::kCodeword) {
        EXPECT_EQ(c.due, c.trials);
      }
    }
  }
}

TEST(FaultSimTest, DeterministicForASeedWhateverTheThreadCount) {
  DramFaultSimulator sim;
  FaultSimOptions o;
  o.trials = 2 * DramFaultSimulator::kChunkTrials + 1234;  // a partial last chunk
  o.seed = 20261122;
  o.combos = {{FaultType::kPin, FaultType::kChip},
              {FaultType::kChip, std::nullopt},
              {FaultType::kBit, FaultType::kWord}};
  std::printf("seed %llu\n", static_cast<unsigned long long>(o.seed));
  o.threads = 1;
  auto one = RunOrDie(sim, o);
  o.threads = 3;
  auto three = RunOrDie(sim, o);
  o.threads = 2;
  auto two = RunOrDie(sim, o);
  ASSERT_EQ(one.size(), 12u);
  EXPECT_EQ(one, three);
  EXPECT_EQ(one, two);
  // Asking for a cell alone gives the same counts as asking for it with
  // others: streams are keyed by the cell, not its place in the request.
  o.combos = {{FaultType::kChip, std::nullopt}};
  o.schemes = {EccScheme::kRs36_32};
  auto alone = RunOrDie(sim, o);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0], one[4]);
  // And another seed gives other counts.
  o.seed = 20261123;
  auto other = RunOrDie(sim, o);
  EXPECT_NE(other[0], alone[0]);
}

// ------------------------------------------------------- the paper model --

FaultSimOptions PaperOptions(uint64_t trials, uint64_t seed) {
  FaultSimOptions o;
  o.trials = trials;
  o.seed = seed;
  o.threads = 2;
  o.model = FaultModel::kPaper;
  std::printf("seed %llu model paper\n", static_cast<unsigned long long>(seed));
  return o;
}

// Table 4's RS(36,32) column under the paper model: every two-fault row
// that the paper has at SDC 0 is DUE for (practically) every access, and
// pin + chip and chip + chip are silent at the paper's 0.0031 % (3.0e-5
// expected: two codewords, each accepting about 251 x 255 of the 2^32
// syndromes).
TEST(FaultSimPaperModelTest, ReproducesTheDoubleFaultRowsOfRs36) {
  DramFaultSimulator sim;
  // Rare events need many trials; the rows at 0 need only to stay there.
  const std::vector<FaultCombo> silent = {{FaultType::kPin, FaultType::kChip},
                                          {FaultType::kChip, FaultType::kChip}};
  FaultSimOptions rare = PaperOptions(4'000'000, 4), others = PaperOptions(200'000, 4);
  rare.schemes = others.schemes = {EccScheme::kRs36_32};
  rare.combos = silent;
  for (const FaultCombo& c : AllFaultCombos()) {
    if (c.second && std::find(silent.begin(), silent.end(), c) == silent.end()) {
      others.combos.push_back(c);
    }
  }
  for (const FaultSimCell& c : RunOrDie(sim, rare)) {
    SCOPED_TRACE(FaultComboName(c.combo));
    EXPECT_EQ(c.model, FaultModel::kPaper);
    EXPECT_GT(c.sdc_rate(), 0.002e-2);
    EXPECT_LT(c.sdc_rate(), 0.004e-2);
    EXPECT_EQ(c.dce, 0u);
  }
  for (const FaultSimCell& c : RunOrDie(sim, others)) {
    SCOPED_TRACE(FaultComboName(c.combo));
    EXPECT_EQ(c.due, c.trials);
  }
}

// The same assumptions keep the strong code's columns as Table 4 has them:
// single chips corrected, two chips detected, never silent.
TEST(FaultSimPaperModelTest, StrongCodeColumnsStayAsInTheTable) {
  DramFaultSimulator sim;
  FaultSimOptions o = PaperOptions(200'000, 5);
  o.schemes = {EccScheme::kRs18_16, EccScheme::kRs19_16};
  for (const FaultSimCell& c : RunOrDie(sim, o)) {
    SCOPED_TRACE(std::string(EccSchemeName(c.scheme)) + " " + FaultComboName(c.combo));
    EXPECT_EQ(c.sdc, 0u);
    if (c.combo.second || c.scheme == EccScheme::kRs18_16) {
      EXPECT_EQ(c.due, c.trials);
    } else {
      EXPECT_EQ(c.dce, c.trials);
    }
  }
}

// Why Table 4's single pin and chip rows (DCE 100 %) cannot hold together
// with its double-fault SDC: under the paper model, as under any model in
// which chips put two symbols in a codeword, a lone pin or chip is two
// wrong symbols, beyond single-symbol correction.
TEST(FaultSimPaperModelTest, SinglePinAndChipAreDetectedNotCorrected) {
  DramFaultSimulator sim;
  FaultSimOptions o = PaperOptions(100'000, 6);
  o.schemes = {EccScheme::kRs36_32};
  for (FaultType t : {FaultType::kBit, FaultType::kPin, FaultType::kWord, FaultType::kChip}) {
    o.combos.push_back({t, std::nullopt});
  }
  auto cells = RunOrDie(sim, o);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].dce, cells[0].trials);  // bit
  EXPECT_EQ(cells[1].due, cells[1].trials);  // pin: all 8 bits, 2 symbols per codeword
  EXPECT_EQ(cells[2].dce, cells[2].trials);  // word
  EXPECT_EQ(cells[3].due, cells[3].trials);  // chip: every symbol wrong
}

// Table 4's 0.0001 % for RS(36,32) pin + pin cannot arise with the Figure 5
// layout, whatever a faulty pin does to its bits and whether or not the
// decoder checks its locator: every pin + pin error one codeword can hold
// (two chips, a pin each, any nonzero flips of its 4 bits there), tried
// exhaustively, is flagged.
TEST(FaultSimPaperModelTest, PinPlusPinIsNeverSilentExhaustively) {
  DramFaultSimulator sim;
  uint64_t patterns = 0;
  for (int c0 = 0; c0 < 18; ++c0) {
    for (int c1 = 0; c1 < 18; ++c1) {
      if (c0 == c1) continue;
      for (int p0 = 0; p0 < kPins; ++p0) {
        for (int p1 = 0; p1 < kPins; ++p1) {
          for (uint32_t f0 = 1; f0 < 16; ++f0) {
            for (uint32_t f1 = 1; f1 < 16; ++f1) {
              auto pin = [](uint32_t beats, int p) {
                uint32_t v = 0;
                for (int b = 0; b < 4; ++b) v |= (beats >> b & 1) << (4 * b + p);
                return v;
              };
              FaultPattern pattern{2, {c0, c1}, {pin(f0, p0), pin(f1, p1)}};
              for (FaultModel m : {FaultModel::kCairn, FaultModel::kPaper}) {
                ASSERT_EQ(sim.Evaluate(EccScheme::kRs36_32, pattern, m), AccessOutcome::kDue)
                    << c0 << " " << c1 << " " << p0 << " " << p1 << " " << f0 << " " << f1;
              }
              ++patterns;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(patterns, 18u * 17 * 16 * 225);
}

TEST(FaultSimTest, RejectsBadOptions) {
  DramFaultSimulator sim;
  FaultSimOptions o;
  o.trials = 0;
  EXPECT_EQ(sim.Run(o, PosixEnv()).status().code(), Code::kInvalidArgument);
  o.trials = 10;
  o.threads = -1;
  EXPECT_EQ(sim.Run(o, PosixEnv()).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cairn
