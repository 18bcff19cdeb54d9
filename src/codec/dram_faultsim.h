// Monte-Carlo DRAM fault simulator: how often each ECC scheme of the paper
// (hybrid-dram-ssd-clc-ecc.txt, section 4 and Table 4) corrects (DCE),
// detects but cannot correct (DUE), or silently mis-delivers (SDC) the data
// of one memory access hit by a fault in one chip or by faults in two chips.
// `cairn faultsim` (src/cli/faultsim_command.h) is its command line.
//
// The rank (DDR3, x4 chips, burst of 8): every chip drives 4 data pins (DQ)
// for 8 beats, 32 bits per access. In this file a chip's 32 bits are the
// bits of a uint32_t, bit 4*beat + pin. Faults (paper section 4, "Fault
// Model"), each confined to one chip:
//   bit, column  one bit (a column fault shows as one bit in one access)
//   pin          one DQ pin in every beat (8 bits)
//   word         all 4 pins in one beat (4 bits)
//   chip         all 32 bits
// A faulty bit flips with probability 1/2 (the stored value is random
// against the fault's, e.g. stuck-at), independently; a fault that happens
// to flip none of its bits is redrawn. So every injected fault produces an
// error, and the rates are those of accesses whose data a fault actually
// corrupted, which is what the paper tabulates: its "1 bit + 1 bit: DUE
// 100%" is only possible if each of the two faults produced an error.
//
// Symbols (docs/ecc.md has the figure):
//   rs36_32      18 chips (chips 0..15 data, 16..17 ECC), paper Figure 5.
//                Beats 2s and 2s+1 of a chip form its 8-bit symbol s
//                (s = 0..3): low nibble = beat 2s, bit = 4*(beat%2) + pin.
//                Symbols 0,1 (beats 0-3) of all chips form codeword 0,
//                symbols 2,3 (beats 4-7) codeword 1; chip c < 16 holds data
//                positions 2c+q, ECC chip 16+e parity positions 32+2e+q.
//   rs18_16 /    18 chips, paper Figure 6: symbol s of every chip (beats 2s,
//   rs19_16      2s+1, same bit order) forms codeword s = 0..3, chip c at
//                position c (16, 17 = the two parity symbols kept in the
//                rank). RS(19,16)'s third parity symbol lives in another
//                rank / the ECC cache, outside the faulty rank: it is never
//                corrupted here. rs19_16 is the paper's two-layer decoder:
//                RS(18,16) detects; only a nonzero RS(18,16) syndrome
//                brings in p2 and the RS(19,16) SSC-DSD decoder.
//   chipkill_x4  two lock-stepped ranks, 36 chips (0..31 data, 32..35 check),
//                4-bit symbols: beat b of every chip forms codeword b = 0..7,
//                chip c at position c. The burst stays 8 beats so that a
//                fault corrupts the same bits as in the other schemes (the
//                access then carries 1024 data bits: two 64 B lines).
//
// Outcome of an access (all its codewords): DUE if any codeword is
// detected uncorrectable (the controller flags the whole access and the OS
// rolls back: nothing of it is consumed); otherwise SDC if the data symbols
// of any codeword are delivered wrong (miscorrected, or an error with a zero
// syndrome); otherwise DCE: every error that reached the data was corrected
// (an error confined to parity symbols that the decoder leaves alone or
// corrects is DCE as well: nothing wrong is delivered).
//
// Scope: kAccess injects each fault anywhere in the chip's 8-beat burst and
// judges the whole access (above). kCodeword confines every fault to the
// beats of one codeword (4 beats for rs36_32, 2 for rs18/19, 1 for
// chipkill_x4) and judges that codeword alone: in this scope two faults in
// two chips always meet in the same codeword, which is how the paper's Table
// 4 appears to count (docs/results.md compares both).
//
// Model: kCairn (the default) is the model above. kPaper is the set of
// assumptions under which Table 4's RS(36,32) double-fault SDC figures
// arise (docs/ecc.md, "The paper's model", has the search and the proofs):
//   faults     a pin fault flips all 8 of its bits and a word fault all 4
//              (the paper's "a pin failure results in 8 bit errors"); a
//              failed chip makes every symbol it supplies wrong, by a
//              uniform nonzero value (with all 32 bits flipped instead, a
//              chip pair would be silent for every access or for none, so
//              the rate would be a multiple of 1/153, never 0.0031 %)
//   placement  two faults meet: bit and word faults lie in the beats of
//              codeword 0, pin and chip faults span the burst (the scope
//              option does not apply)
//   decoder    the RS decoders accept any single-error syndrome of the
//              full-length code (locator alpha^d for every d < 255) without
//              checking that d names a position of the shortened code; a
//              "correction" outside it changes no symbol
//   counting   an access is SDC when any codeword delivers wrong data, even
//              if another codeword of it is flagged (each RS(36,32)
//              decoding unit forwards its codeword on its own, section 4.1)
// The x4 chipkill baseline keeps its own decoder in both models.
//
// Determinism: the trials of a cell are cut into chunks of kChunkTrials; each
// chunk draws from its own generator seeded from (seed, scheme, fault combo,
// scope, chunk index) and counts are summed as integers, so the result
// depends on the seed and nothing else (not on the thread count).
//
// Thread-safety: a DramFaultSimulator is immutable after construction; Run,
// Sample and Evaluate may be called from several threads at once. Run starts
// its own worker threads and joins them before returning.
#ifndef CAIRN_CODEC_DRAM_FAULTSIM_H_
#define CAIRN_CODEC_DRAM_FAULTSIM_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "codec/chipkill_x4.h"
#include "codec/rs_code.h"
#include "env/env.h"

namespace cairn {

enum class FaultType : uint8_t { kBit, kColumn, kPin, kWord, kChip };
inline constexpr int kFaultTypeCount = 5;
const char* FaultTypeName(FaultType type);  // "bit", "column", ...

// One fault in one chip (second empty), or two faults in two different chips.
struct FaultCombo {
  FaultType first = FaultType::kBit;
  std::optional<FaultType> second;

  friend bool operator==(const FaultCombo&, const FaultCombo&) = default;
};

// "chip", "pin+chip": single names, or two joined by '+' in the order bit,
// column, pin, word, chip (Parse accepts either order and normalizes).
std::string FaultComboName(const FaultCombo& combo);
Result<FaultCombo> ParseFaultCombo(std::string_view name);
// The 5 single faults, then the 15 unordered pairs, in the paper's order.
std::vector<FaultCombo> AllFaultCombos();
// Stable small integer of a (normalized) combo: its index in AllFaultCombos.
int FaultComboId(const FaultCombo& combo);

enum class EccScheme : uint8_t { kRs36_32, kRs18_16, kRs19_16, kChipkillX4 };
const char* EccSchemeName(EccScheme scheme);  // "rs36_32", ..., "chipkill_x4"
Result<EccScheme> ParseEccScheme(std::string_view name);
std::vector<EccScheme> AllEccSchemes();

enum class FaultScope : uint8_t { kAccess, kCodeword };
const char* FaultScopeName(FaultScope scope);  // "access", "codeword"
Result<FaultScope> ParseFaultScope(std::string_view name);

// The fault, placement, decoder and counting assumptions (header comment).
enum class FaultModel : uint8_t { kCairn, kPaper };
const char* FaultModelName(FaultModel model);  // "cairn", "paper"
Result<FaultModel> ParseFaultModel(std::string_view name);

inline constexpr int kBeats = 8;
inline constexpr int kPins = 4;

struct RankGeometry {
  int chips = 18;
  int codewords = 2;           // per access
  int beats_per_codeword = 4;
  int symbol_bits = 8;
};
RankGeometry GeometryOf(EccScheme scheme);

// Where bit (chip, beat, pin) of an access lands: codeword, symbol position
// in it, and bit of that symbol. The mapping spelled out above, in one place;
// the simulator's fast path computes the same thing with shifts, and a test
// holds the two to agreement through the real encoders and decoders.
struct SymbolLocation {
  int codeword = 0;
  int position = 0;
  int bit = 0;
};
SymbolLocation LocateBit(EccScheme scheme, int chip, int beat, int pin);

// The bits a sampled fault (or pair of faults) flips.
struct FaultPattern {
  int count = 0;                     // faulty chips: 1 or 2
  std::array<int, 2> chip{};         // distinct
  std::array<uint32_t, 2> flips{};   // nonzero; bit 4*beat + pin
};

enum class AccessOutcome : uint8_t { kDce, kDue, kSdc };

// xoshiro256** (Blackman & Vigna), seeded through splitmix64: fast, and the
// same stream on every platform, unlike the std distributions.
class FaultSimRng {
 public:
  explicit FaultSimRng(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, n), unbiased (Lemire's method). REQUIRES: 0 < n < 2^32.
  uint32_t Below(uint32_t n);

 private:
  std::array<uint64_t, 4> s_;
};

struct FaultSimOptions {
  uint64_t trials = 1'000'000;  // per cell (scheme x fault combo); > 0
  uint64_t seed = 1;
  int threads = 0;              // 0: std::thread::hardware_concurrency()
  FaultScope scope = FaultScope::kAccess;  // kCairn only
  FaultModel model = FaultModel::kCairn;
  std::vector<EccScheme> schemes;   // empty: all four
  std::vector<FaultCombo> combos;   // empty: all twenty
};

struct FaultSimCell {
  EccScheme scheme = EccScheme::kRs36_32;
  FaultCombo combo;
  FaultScope scope = FaultScope::kAccess;
  FaultModel model = FaultModel::kCairn;
  uint64_t trials = 0;
  uint64_t dce = 0;
  uint64_t due = 0;
  uint64_t sdc = 0;

  double dce_rate() const { return trials ? static_cast<double>(dce) / trials : 0.0; }
  double due_rate() const { return trials ? static_cast<double>(due) / trials : 0.0; }
  double sdc_rate() const { return trials ? static_cast<double>(sdc) / trials : 0.0; }
  friend bool operator==(const FaultSimCell&, const FaultSimCell&) = default;
};

class DramFaultSimulator {
 public:
  static constexpr uint64_t kChunkTrials = uint64_t{1} << 16;

  DramFaultSimulator();

  // Draws the chips and flipped bits of one trial (scope matters for
  // kCairn only).
  FaultPattern Sample(EccScheme scheme, const FaultCombo& combo, FaultScope scope,
                      FaultModel model, FaultSimRng& rng) const;
  // Decodes every codeword the pattern touches (by syndromes of the error
  // alone: the codes are linear and their decoders look only at syndromes,
  // so the data stored does not change the outcome) and classifies the
  // access under the model's decoder and counting.
  AccessOutcome Evaluate(EccScheme scheme, const FaultPattern& pattern, FaultModel model) const;

  // Runs options.trials trials of every requested cell, combos outer,
  // schemes inner, on options.threads threads (the caller's included; if
  // the system refuses a thread, the others do its share), started through
  // env. kInvalidArgument for zero trials or a negative thread count.
  Result<std::vector<FaultSimCell>> Run(const FaultSimOptions& options, Env* env) const;

  const RsCode& rs36() const { return rs36_; }
  const RsCode& rs18() const { return rs18_; }
  const RsCode& rs19() const { return rs19_; }
  const ChipkillX4Code& chipkill() const { return chipkill_; }

 private:
  void RunChunk(const FaultSimCell& cell, uint64_t seed, uint64_t chunk, uint64_t trials,
                std::array<uint64_t, 3>& counts) const;
  // The RS decoder of a model: RsCode's, and under kPaper also a single
  // error whose locator lies beyond the shortened code (position -1).
  SymbolDecode DecodeRs(const RsCode& code, const uint8_t* syndromes, FaultModel model) const;

  RsCode rs36_;
  RsCode rs18_;
  RsCode rs19_;
  ChipkillX4Code chipkill_;
  // Syndrome of a lone error (position, value), bytes S_0 | S_1 << 8 | ...:
  // XORing these per erroneous symbol gives the syndrome of the whole error.
  std::vector<std::array<uint32_t, 256>> rs36_syndromes_;    // 36 positions
  std::vector<std::array<uint32_t, 256>> strong_syndromes_;  // 18 positions, RS(19,16) rows
  // spread_[r]: bit b of r moved to bit 4b (a pin's pattern over 8 beats).
  std::array<uint32_t, 256> spread_{};
};

}  // namespace cairn

#endif  // CAIRN_CODEC_DRAM_FAULTSIM_H_
