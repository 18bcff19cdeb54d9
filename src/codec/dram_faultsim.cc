#include "codec/dram_faultsim.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "codec/gf256.h"

namespace cairn {

namespace {

constexpr std::array<FaultType, kFaultTypeCount> kFaultTypes = {
    FaultType::kBit, FaultType::kColumn, FaultType::kPin, FaultType::kWord, FaultType::kChip};

FaultCombo Normalize(FaultCombo combo) {
  if (combo.second && *combo.second < combo.first) std::swap(combo.first, *combo.second);
  return combo;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One well-mixed 64-bit seed per chunk of a cell. The paper model's cells
// mix in one more part; Cairn's keep the streams they always had, so that
// published figures stay reproducible.
uint64_t ChunkSeed(uint64_t seed, const FaultSimCell& cell, uint64_t chunk) {
  uint64_t state = seed;
  uint64_t h = SplitMix64(state);
  auto mix = [&](uint64_t part) {
    state = h ^ part;
    h = SplitMix64(state);
  };
  for (uint64_t part :
       {static_cast<uint64_t>(cell.scheme), static_cast<uint64_t>(FaultComboId(cell.combo)),
        static_cast<uint64_t>(cell.scope), chunk}) {
    mix(part);
  }
  if (cell.model == FaultModel::kPaper) mix(static_cast<uint64_t>(cell.model));
  return h;
}

// Data position of symbol q (0, 1) of chip c in an RS(36,32) codeword: data
// chips hold 2c+q, ECC chips the parity positions 32.. in the same order.
inline int Rs36Position(int chip, int q) {
  return chip < 16 ? 2 * chip + q : 32 + 2 * (chip - 16) + q;
}

inline void Unpack(uint32_t v, uint8_t* s, int m) {
  for (int i = 0; i < m; ++i) s[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

const char* FaultTypeName(FaultType type) {
  switch (type) {
    case FaultType::kBit: return "bit";
    case FaultType::kColumn: return "column";
    case FaultType::kPin: return "pin";
    case FaultType::kWord: return "word";
    case FaultType::kChip: return "chip";
  }
  return "?";
}

std::string FaultComboName(const FaultCombo& combo) {
  FaultCombo c = Normalize(combo);
  std::string name = FaultTypeName(c.first);
  if (c.second) {
    name += '+';
    name += FaultTypeName(*c.second);
  }
  return name;
}

Result<FaultCombo> ParseFaultCombo(std::string_view name) {
  auto parse_type = [](std::string_view s) -> std::optional<FaultType> {
    for (FaultType t : kFaultTypes) {
      if (s == FaultTypeName(t)) return t;
    }
    return std::nullopt;
  };
  FaultCombo combo;
  size_t plus = name.find('+');
  auto first = parse_type(name.substr(0, plus));
  if (!first) {
    return Error(Code::kInvalidArgument,
                 "unknown fault combination '{}' (use bit, column, pin, word, chip or two of "
                 "them joined by '+', e.g. pin+chip)",
                 name);
  }
  combo.first = *first;
  if (plus != std::string_view::npos) {
    auto second = parse_type(name.substr(plus + 1));
    if (!second) {
      return Error(Code::kInvalidArgument,
                   "unknown fault combination '{}' (use bit, column, pin, word, chip or two of "
                   "them joined by '+', e.g. pin+chip)",
                   name);
    }
    combo.second = *second;
  }
  return Normalize(combo);
}

std::vector<FaultCombo> AllFaultCombos() {
  std::vector<FaultCombo> all;
  for (FaultType t : kFaultTypes) all.push_back({t, std::nullopt});
  for (int a = 0; a < kFaultTypeCount; ++a) {
    for (int b = a; b < kFaultTypeCount; ++b) all.push_back({kFaultTypes[a], kFaultTypes[b]});
  }
  return all;
}

int FaultComboId(const FaultCombo& combo) {
  FaultCombo c = Normalize(combo);
  const int a = static_cast<int>(c.first);
  if (!c.second) return a;
  const int b = static_cast<int>(*c.second);
  // Pairs (a <= b) in row-major order after the 5 singles.
  return kFaultTypeCount + a * kFaultTypeCount - a * (a - 1) / 2 + (b - a);
}

const char* EccSchemeName(EccScheme scheme) {
  switch (scheme) {
    case EccScheme::kRs36_32: return "rs36_32";
    case EccScheme::kRs18_16: return "rs18_16";
    case EccScheme::kRs19_16: return "rs19_16";
    case EccScheme::kChipkillX4: return "chipkill_x4";
  }
  return "?";
}

Result<EccScheme> ParseEccScheme(std::string_view name) {
  for (EccScheme s : AllEccSchemes()) {
    if (name == EccSchemeName(s)) return s;
  }
  return Error(Code::kInvalidArgument,
               "unknown ECC scheme '{}' (use rs36_32, rs18_16, rs19_16 or chipkill_x4)", name);
}

std::vector<EccScheme> AllEccSchemes() {
  return {EccScheme::kRs36_32, EccScheme::kRs18_16, EccScheme::kRs19_16,
          EccScheme::kChipkillX4};
}

const char* FaultScopeName(FaultScope scope) {
  return scope == FaultScope::kAccess ? "access" : "codeword";
}

Result<FaultScope> ParseFaultScope(std::string_view name) {
  if (name == "access") return FaultScope::kAccess;
  if (name == "codeword") return FaultScope::kCodeword;
  return Error(Code::kInvalidArgument, "unknown scope '{}' (use access or codeword)", name);
}

const char* FaultModelName(FaultModel model) {
  return model == FaultModel::kCairn ? "cairn" : "paper";
}

Result<FaultModel> ParseFaultModel(std::string_view name) {
  if (name == "cairn") return FaultModel::kCairn;
  if (name == "paper") return FaultModel::kPaper;
  return Error(Code::kInvalidArgument, "unknown fault model '{}' (use cairn or paper)", name);
}

RankGeometry GeometryOf(EccScheme scheme) {
  switch (scheme) {
    case EccScheme::kRs36_32: return {18, 2, 4, 8};
    case EccScheme::kRs18_16:
    case EccScheme::kRs19_16: return {18, 4, 2, 8};
    case EccScheme::kChipkillX4: return {36, 8, 1, 4};
  }
  return {};
}

SymbolLocation LocateBit(EccScheme scheme, int chip, int beat, int pin) {
  SymbolLocation loc;
  switch (scheme) {
    case EccScheme::kRs36_32: {
      const int s = beat / 2;  // the chip's symbol: beats 2s, 2s+1
      loc.codeword = s / 2;
      loc.position = Rs36Position(chip, s % 2);
      loc.bit = 4 * (beat % 2) + pin;
      break;
    }
    case EccScheme::kRs18_16:
    case EccScheme::kRs19_16:
      loc.codeword = beat / 2;
      loc.position = chip;
      loc.bit = 4 * (beat % 2) + pin;
      break;
    case EccScheme::kChipkillX4:
      loc.codeword = beat;
      loc.position = chip;
      loc.bit = pin;
      break;
  }
  return loc;
}

// ------------------------------------------------------------------ rng

FaultSimRng::FaultSimRng(uint64_t seed) {
  uint64_t state = seed;
  for (auto& word : s_) word = SplitMix64(state);
}

uint64_t FaultSimRng::Next() {
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint32_t FaultSimRng::Below(uint32_t n) {
  uint64_t m = (Next() >> 32) * n;
  uint32_t low = static_cast<uint32_t>(m);
  if (low < n) {
    const uint32_t threshold = (0u - n) % n;
    while (low < threshold) {
      m = (Next() >> 32) * n;
      low = static_cast<uint32_t>(m);
    }
  }
  return static_cast<uint32_t>(m >> 32);
}

// ------------------------------------------------------------ simulator

DramFaultSimulator::DramFaultSimulator()
    : rs36_(RsCodeId::kRs36_32), rs18_(RsCodeId::kRs18_16), rs19_(RsCodeId::kRs19_16) {
  auto fill = [](const RsCode& code, int positions, std::vector<std::array<uint32_t, 256>>& out) {
    out.resize(positions);
    for (int j = 0; j < positions; ++j) {
      for (unsigned v = 0; v < 256; ++v) {
        uint32_t s = 0;
        for (int i = 0; i < code.m(); ++i) {
          s |= static_cast<uint32_t>(gf256::Mul(static_cast<uint8_t>(v), code.ParityCheck(i, j)))
               << (8 * i);
        }
        out[j][v] = s;
      }
    }
  };
  fill(rs36_, rs36_.n(), rs36_syndromes_);
  // RS(19,16)'s first two rows over positions 0..17 are RS(18,16)'s check
  // matrix, so one table serves both layers; position 18 (p2) is never hit.
  fill(rs19_, rs18_.n(), strong_syndromes_);
  for (unsigned r = 0; r < 256; ++r) {
    uint32_t x = 0;
    for (int b = 0; b < 8; ++b) {
      if (r >> b & 1) x |= 1u << (4 * b);
    }
    spread_[r] = x;
  }
}

namespace {

// Random nonzero value of `bits` bits (1..32): a fault that flips nothing is
// redrawn (see the header).
inline uint32_t NonzeroBits(FaultSimRng& rng, int bits) {
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint32_t v;
  do {
    v = static_cast<uint32_t>(rng.Next() & mask);
  } while (v == 0);
  return v;
}

}  // namespace

FaultPattern DramFaultSimulator::Sample(EccScheme scheme, const FaultCombo& combo,
                                        FaultScope scope, FaultModel model,
                                        FaultSimRng& rng) const {
  const RankGeometry g = GeometryOf(scheme);
  // Codeword scope confines faults to the beats of codeword 0 (which
  // codeword does not matter: all are laid out alike).
  const int beats = scope == FaultScope::kAccess ? kBeats : g.beats_per_codeword;
  // The paper model (header comment): bit and word faults in codeword 0's
  // beats, pins and words wrong in every bit, chips wrong in every symbol.
  auto paper_flips = [&](FaultType type) -> uint32_t {
    switch (type) {
      case FaultType::kBit:
      case FaultType::kColumn: {
        const uint32_t beat = rng.Below(g.beats_per_codeword);
        return 1u << (4 * beat + rng.Below(kPins));
      }
      case FaultType::kPin: return spread_[0xFF] << rng.Below(kPins);
      case FaultType::kWord: return 0xFu << (4 * rng.Below(g.beats_per_codeword));
      case FaultType::kChip: {
        // Every symbol the chip supplies is wrong, by a uniform nonzero value.
        uint32_t v = 0;
        for (int shift = 0; shift < kPins * kBeats; shift += g.symbol_bits) {
          v |= NonzeroBits(rng, g.symbol_bits) << shift;
        }
        return v;
      }
    }
    return 0;
  };
  auto cairn_flips = [&](FaultType type) -> uint32_t {
    switch (type) {
      case FaultType::kBit:
      case FaultType::kColumn: {
        const uint32_t beat = rng.Below(beats);
        return 1u << (4 * beat + rng.Below(kPins));
      }
      case FaultType::kPin: {
        const uint32_t pin = rng.Below(kPins);
        return spread_[NonzeroBits(rng, beats)] << pin;
      }
      case FaultType::kWord: {
        const uint32_t beat = rng.Below(beats);
        return NonzeroBits(rng, kPins) << (4 * beat);
      }
      case FaultType::kChip: return NonzeroBits(rng, kPins * beats);
    }
    return 0;
  };
  auto flips = [&](FaultType type) {
    return model == FaultModel::kPaper ? paper_flips(type) : cairn_flips(type);
  };
  FaultPattern p;
  p.count = combo.second ? 2 : 1;
  p.chip[0] = static_cast<int>(rng.Below(g.chips));
  p.flips[0] = flips(combo.first);
  if (combo.second) {
    int other = static_cast<int>(rng.Below(g.chips - 1));
    p.chip[1] = other >= p.chip[0] ? other + 1 : other;
    p.flips[1] = flips(*combo.second);
  }
  return p;
}

SymbolDecode DramFaultSimulator::DecodeRs(const RsCode& code, const uint8_t* s,
                                          FaultModel model) const {
  SymbolDecode d = code.DecodeSyndromes(s);
  if (model == FaultModel::kCairn || d.state != DecodeState::kUncorrectable) return d;
  // RsCode rejects a single-error syndrome whose locator X = S_1 / S_0 names
  // no position of the shortened code; the paper model's decoder checks only
  // that the syndromes continue S_0 X^i, and its "correction" lands outside
  // the codeword.
  if (code.correctable() == 0 || s[0] == 0 || s[1] == 0) return d;
  const uint8_t x = gf256::Div(s[1], s[0]);
  for (int i = 2; i < code.m(); ++i) {
    if (s[i] != gf256::Mul(s[i - 1], x)) return d;
  }
  return {DecodeState::kCorrected, -1, s[0]};
}

AccessOutcome DramFaultSimulator::Evaluate(EccScheme scheme, const FaultPattern& pattern,
                                           FaultModel model) const {
  // Per codeword: syndrome of the error, how many symbols are wrong, and
  // how many of them are data symbols (positions < k), with the last one:
  // what a correction must undo for the delivered data to be right.
  std::array<uint32_t, kBeats> syndrome{};
  std::array<int, kBeats> wrong{};
  std::array<int, kBeats> data_wrong{};
  std::array<int, kBeats> data_position{};
  std::array<uint8_t, kBeats> data_error{};
  const int k = scheme == EccScheme::kRs36_32 || scheme == EccScheme::kChipkillX4 ? 32 : 16;
  auto add = [&](int w, int pos, uint8_t v, uint32_t s) {
    syndrome[w] ^= s;
    ++wrong[w];
    if (pos < k) {
      ++data_wrong[w];
      data_position[w] = pos;
      data_error[w] = v;
    }
  };
  for (int f = 0; f < pattern.count; ++f) {
    const int chip = pattern.chip[f];
    const uint32_t flips = pattern.flips[f];
    switch (scheme) {
      case EccScheme::kRs36_32:
        for (int s = 0; s < 4; ++s) {
          const uint8_t v = static_cast<uint8_t>(flips >> (8 * s));
          if (v == 0) continue;
          const int pos = Rs36Position(chip, s % 2);
          add(s / 2, pos, v, rs36_syndromes_[pos][v]);
        }
        break;
      case EccScheme::kRs18_16:
      case EccScheme::kRs19_16:
        for (int s = 0; s < 4; ++s) {
          const uint8_t v = static_cast<uint8_t>(flips >> (8 * s));
          if (v != 0) add(s, chip, v, strong_syndromes_[chip][v]);
        }
        break;
      case EccScheme::kChipkillX4:
        for (int s = 0; s < kBeats; ++s) {
          const uint8_t v = flips >> (4 * s) & 0xF;
          if (v != 0) add(s, chip, v, chipkill_.SyndromeOfError(chip, v));
        }
        break;
    }
  }

  bool silent = false;
  bool flagged = false;
  const int codewords = GeometryOf(scheme).codewords;
  for (int w = 0; w < codewords; ++w) {
    if (wrong[w] == 0) continue;
    SymbolDecode d;
    uint8_t s[RsCode::kMaxM];
    switch (scheme) {
      case EccScheme::kRs36_32:
        Unpack(syndrome[w], s, 4);
        d = DecodeRs(rs36_, s, model);
        break;
      case EccScheme::kRs18_16:
        Unpack(syndrome[w], s, 2);
        d = rs18_.DecodeSyndromes(s);
        break;
      case EccScheme::kRs19_16:
        // Layer 1 (RS(18,16), detection) sees S_0, S_1 only; p2 is fetched
        // and layer 2 decodes only when those are nonzero.
        if ((syndrome[w] & 0xFFFF) == 0) {
          d = {};
        } else {
          Unpack(syndrome[w], s, 3);
          d = DecodeRs(rs19_, s, model);
        }
        break;
      case EccScheme::kChipkillX4:
        d = chipkill_.DecodeSyndrome(static_cast<uint16_t>(syndrome[w]));
        break;
    }
    // The delivered data is right iff (error + correction) is zero on the
    // data positions; wrong parity symbols alone corrupt nothing delivered.
    switch (d.state) {
      case DecodeState::kUncorrectable:
        // Cairn: the controller flags the whole access, nothing of it is
        // consumed. The paper model counts the other codewords on.
        if (model == FaultModel::kCairn) return AccessOutcome::kDue;
        flagged = true;
        break;
      case DecodeState::kClean:
        if (data_wrong[w] != 0) silent = true;
        break;
      case DecodeState::kCorrected: {
        // Position -1: a paper-model correction outside the codeword.
        const bool fixes_data = d.position >= 0 && d.position < k;
        if (data_wrong[w] == 0) {
          if (fixes_data) silent = true;
        } else if (data_wrong[w] > 1 || !fixes_data || d.position != data_position[w] ||
                   d.error != data_error[w]) {
          silent = true;
        }
        break;
      }
    }
  }
  if (silent) return AccessOutcome::kSdc;
  return flagged ? AccessOutcome::kDue : AccessOutcome::kDce;
}

void DramFaultSimulator::RunChunk(const FaultSimCell& cell, uint64_t seed, uint64_t chunk,
                                  uint64_t trials, std::array<uint64_t, 3>& counts) const {
  FaultSimRng rng(ChunkSeed(seed, cell, chunk));
  for (uint64_t t = 0; t < trials; ++t) {
    const FaultPattern p = Sample(cell.scheme, cell.combo, cell.scope, cell.model, rng);
    ++counts[static_cast<int>(Evaluate(cell.scheme, p, cell.model))];
  }
}

Result<std::vector<FaultSimCell>> DramFaultSimulator::Run(const FaultSimOptions& options,
                                                          Env* env) const {
  if (options.trials == 0) return Error(Code::kInvalidArgument, "faultsim: trials must be > 0");
  if (options.threads < 0) {
    return Error(Code::kInvalidArgument, "faultsim: threads must be >= 0, got {}",
                 options.threads);
  }
  const std::vector<EccScheme> schemes =
      options.schemes.empty() ? AllEccSchemes() : options.schemes;
  std::vector<FaultCombo> combos = options.combos.empty() ? AllFaultCombos() : options.combos;
  for (auto& c : combos) c = Normalize(c);

  std::vector<FaultSimCell> cells;
  for (const FaultCombo& combo : combos) {
    for (EccScheme scheme : schemes) {
      FaultSimCell cell;
      cell.scheme = scheme;
      cell.combo = combo;
      // The paper model places faults itself: its cells say access, the
      // unit it judges.
      cell.scope = options.model == FaultModel::kPaper ? FaultScope::kAccess : options.scope;
      cell.model = options.model;
      cell.trials = options.trials;
      cells.push_back(cell);
    }
  }
  const uint64_t chunks = (options.trials + kChunkTrials - 1) / kChunkTrials;
  const uint64_t items = cells.size() * chunks;
  int threads = options.threads;
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<uint64_t>(threads, items));

  // Work items (cell, chunk) are handed out through one counter; each
  // worker sums into its own counts, merged under the lock at the end.
  std::atomic<uint64_t> next{0};
  Mutex mu;
  auto worker = [&]() {
    std::vector<std::array<uint64_t, 3>> local(cells.size());
    for (uint64_t item = next.fetch_add(1); item < items; item = next.fetch_add(1)) {
      const size_t c = item / chunks;
      const uint64_t chunk = item % chunks;
      const uint64_t trials = std::min(kChunkTrials, options.trials - chunk * kChunkTrials);
      RunChunk(cells[c], options.seed, chunk, trials, local[c]);
    }
    MutexLock lock(&mu);
    for (size_t c = 0; c < cells.size(); ++c) {
      cells[c].dce += local[c][0];
      cells[c].due += local[c][1];
      cells[c].sdc += local[c][2];
    }
  };
  std::vector<std::unique_ptr<Thread>> pool;
  for (int i = 1; i < threads; ++i) {
    auto thread = env->StartThread(ThreadOptions{.name = "cairn-faultsim"}, worker);
    // The calling thread below takes whatever the others do not, so the
    // run stays complete and deterministic, only slower.
    if (!thread.ok()) break;
    pool.push_back(std::move(thread).value());
  }
  worker();
  for (auto& t : pool) t->Join();
  return cells;
}

}  // namespace cairn
