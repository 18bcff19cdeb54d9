// Fuzzes the Reed-Solomon decoders (codec/rs_code.h) of all three codes.
// The input picks a code, a stripe count, a test and a seed, and its
// remaining bytes are the data. Each shard is a buffer of exactly `len`
// bytes, so ASan catches any read or write past a shard. Three tests:
//  - errors: a codeword with, per stripe, up to `detectable` wrong symbols.
//    Correct must restore every stripe with <= `correctable` errors to the
//    original, and report every other one uncorrectable and leave it as is;
//    Check must predict Correct;
//  - erasures: an erasure list taken from the input, valid or not. A valid
//    one must be rebuilt bit-exactly (Rebuild and RebuildBase); an invalid
//    one refused with kInvalidArgument, touching nothing;
//  - garbage: shards that are no codeword at all. The optimized decoder
//    must agree with its reference twin, and every stripe it corrects must
//    be a codeword afterwards.
// The reference twins are slow (a search over every position and value), so
// they run on the first kMaxBaseStripes stripes only.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "codec/rs_code.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

// Most inputs decode a few hundred stripes at most; one in 16 runs a
// little past kCheckBlock (4096), so that the optimized decoder's second
// block and its tail of fewer than 8 stripes are reached without making
// every run that slow.
constexpr size_t kLongRun = 4096;
constexpr uint8_t kLongRunShapes = 16;
constexpr size_t kMaxBaseStripes = 64;

const RsCode& CodeFor(int index) {
  static const std::array<RsCode, 3> codes = {RsCode(RsCodeId::kRs36_32),
                                              RsCode(RsCodeId::kRs18_16),
                                              RsCode(RsCodeId::kRs19_16)};
  return codes[index];
}

// n shards of exactly len bytes each.
struct Shards {
  Shards(int n, size_t len) : bytes(n, std::vector<uint8_t>(len)) {}
  std::vector<uint8_t*> Pointers() {
    std::vector<uint8_t*> p;
    for (auto& s : bytes) p.push_back(s.data());
    return p;
  }
  std::vector<const uint8_t*> ConstPointers() const {
    std::vector<const uint8_t*> p;
    for (const auto& s : bytes) p.push_back(s.data());
    return p;
  }
  Shards Prefix(size_t len) const {
    Shards out(static_cast<int>(bytes.size()), len);
    for (size_t j = 0; j < bytes.size(); ++j) {
      std::copy_n(bytes[j].begin(), len, out.bytes[j].begin());
    }
    return out;
  }
  std::vector<std::vector<uint8_t>> bytes;
};

// Fills shards [0, count) from `material`, cycled; from the rng if empty.
void Fill(Shards* shards, int count, const std::vector<uint8_t>& material, std::mt19937_64* rng) {
  size_t next = 0;
  for (int j = 0; j < count; ++j) {
    for (auto& byte : shards->bytes[j]) {
      byte = material.empty() ? static_cast<uint8_t>((*rng)()) : material[next++ % material.size()];
    }
  }
}

Shards Codeword(const RsCode& code, size_t len, const std::vector<uint8_t>& material,
                std::mt19937_64* rng) {
  Shards word(code.n(), len);
  Fill(&word, code.k(), material, rng);
  Shards base = word.Prefix(std::min(len, kMaxBaseStripes));
  auto pointers = word.Pointers();
  auto base_pointers = base.Pointers();
  CAIRN_FUZZ_CHECK(code.Encode(pointers, len).ok(), "{}: Encode failed", code.name());
  CAIRN_FUZZ_CHECK(code.EncodeBase(base_pointers, base.bytes[0].size()).ok(),
                   "{}: EncodeBase failed", code.name());
  CAIRN_FUZZ_CHECK(word.Prefix(base.bytes[0].size()).bytes == base.bytes,
                   "{}: Encode and EncodeBase differ", code.name());
  return word;
}

// Wrong symbols in `errors[t]` distinct shards of stripe t.
void AddErrors(const RsCode& code, Shards* word, const std::vector<int>& errors,
               std::mt19937_64* rng) {
  std::vector<int> order(code.n());
  for (size_t t = 0; t < errors.size(); ++t) {
    for (int j = 0; j < code.n(); ++j) order[j] = j;
    for (int e = 0; e < errors[t]; ++e) {  // the first errors[t] of a random permutation
      std::swap(order[e], order[e + (*rng)() % (code.n() - e)]);
      word->bytes[order[e]][t] ^= static_cast<uint8_t>(1 + (*rng)() % 255);  // never 0
    }
  }
}

void TestErrors(const RsCode& code, size_t len, const std::vector<uint8_t>& material,
                std::mt19937_64* rng) {
  const Shards original = Codeword(code, len, material, rng);
  std::vector<int> errors(len);
  for (auto& e : errors) e = static_cast<int>((*rng)() % (code.detectable() + 1));
  Shards received = original;
  AddErrors(code, &received, errors, rng);

  std::vector<StripeOutcome> predicted(len), outcomes(len);
  auto checked = code.Check(received.ConstPointers(), len, predicted);
  Shards corrected = received;
  auto pointers = corrected.Pointers();
  auto report = code.Correct(pointers, len, outcomes);
  CAIRN_FUZZ_CHECK(checked.ok() && report.ok(), "{}: decode refused valid shards", code.name());
  CAIRN_FUZZ_CHECK(*checked == *report && predicted == outcomes, "{}: Check does not predict Correct",
                   code.name());
  // Correct restores the stripes it can and leaves the others as received.
  Shards expected = received;
  for (size_t t = 0; t < len; ++t) {
    const bool correctable = errors[t] <= code.correctable();
    if (correctable) {
      for (int j = 0; j < code.n(); ++j) expected.bytes[j][t] = original.bytes[j][t];
    }
    const DecodeState want = errors[t] == 0 ? DecodeState::kClean
                             : correctable  ? DecodeState::kCorrected
                                            : DecodeState::kUncorrectable;
    CAIRN_FUZZ_CHECK(outcomes[t].state == want, "{}: stripe {} with {} errors decoded as {}",
                     code.name(), t, errors[t], DecodeStateName(outcomes[t].state));
  }
  for (int j = 0; j < code.n(); ++j) {
    CAIRN_FUZZ_CHECK(corrected.bytes[j] == expected.bytes[j], "{}: shard {} is wrong after Correct",
                     code.name(), j);
  }
}

// What ValidateErased accepts: at most m distinct shards in [0, n).
bool ValidErasures(const RsCode& code, const std::vector<int>& erased) {
  if (erased.size() > static_cast<size_t>(code.m())) return false;
  std::vector<bool> seen(code.n());
  for (int e : erased) {
    if (e < 0 || e >= code.n() || seen[e]) return false;
    seen[e] = true;
  }
  return true;
}

// Drawn from just outside the valid range, so that bad lists are tried too.
std::vector<int> ConsumeErasures(const RsCode& code, FuzzedDataProvider* in) {
  std::vector<int> erased(in->ConsumeIntegralInRange(0, code.m() + 1));
  for (auto& e : erased) e = in->ConsumeIntegralInRange(-1, code.n());
  return erased;
}

void TestErasures(const RsCode& code, size_t len, const std::vector<int>& erased,
                  const std::vector<uint8_t>& material, std::mt19937_64* rng) {
  const Shards original = Codeword(code, len, material, rng);
  Shards damaged = original;
  const bool valid = ValidErasures(code, erased);
  if (valid) {
    for (int e : erased) {
      for (auto& byte : damaged.bytes[e]) byte = static_cast<uint8_t>((*rng)());
    }
  }
  Shards rebuilt = damaged;
  auto pointers = rebuilt.Pointers();
  Status status = code.Rebuild(pointers, len, erased);
  if (!valid) {
    CAIRN_FUZZ_CHECK(status.code() == Code::kInvalidArgument, "{}: bad erasure list: {}",
                     code.name(), status.ToString());
    CAIRN_FUZZ_CHECK(rebuilt.bytes == damaged.bytes, "{}: a refused Rebuild wrote", code.name());
    return;
  }
  CAIRN_FUZZ_CHECK(status.ok(), "{}: Rebuild: {}", code.name(), status.ToString());
  CAIRN_FUZZ_CHECK(rebuilt.bytes == original.bytes, "{}: Rebuild is not bit-exact", code.name());
  Shards base = damaged.Prefix(std::min(len, kMaxBaseStripes));
  auto base_pointers = base.Pointers();
  status = code.RebuildBase(base_pointers, base.bytes[0].size(), erased);
  CAIRN_FUZZ_CHECK(status.ok(), "{}: RebuildBase: {}", code.name(), status.ToString());
  CAIRN_FUZZ_CHECK(base.bytes == original.Prefix(base.bytes[0].size()).bytes,
                   "{}: RebuildBase is not bit-exact", code.name());
}

void TestGarbage(const RsCode& code, size_t len, const std::vector<uint8_t>& material,
                 std::mt19937_64* rng) {
  Shards received(code.n(), std::min(len, kMaxBaseStripes));
  len = received.bytes[0].size();
  Fill(&received, code.n(), material, rng);
  std::vector<StripeOutcome> outcomes(len), base_outcomes(len);
  Shards fast = received, base = received;
  auto fast_pointers = fast.Pointers();
  auto base_pointers = base.Pointers();
  auto report = code.Correct(fast_pointers, len, outcomes);
  auto base_report = code.CorrectBase(base_pointers, len, base_outcomes);
  CAIRN_FUZZ_CHECK(report.ok() && base_report.ok(), "{}: decode refused valid shards",
                   code.name());
  CAIRN_FUZZ_CHECK(*report == *base_report && outcomes == base_outcomes && fast.bytes == base.bytes,
                   "{}: Correct and CorrectBase disagree", code.name());
  std::vector<StripeOutcome> after(len);
  auto recheck = code.Check(fast.ConstPointers(), len, after);
  CAIRN_FUZZ_CHECK(recheck.ok(), "{}: Check refused valid shards", code.name());
  for (size_t t = 0; t < len; ++t) {
    CAIRN_FUZZ_CHECK(outcomes[t].state != DecodeState::kCorrected ||
                         after[t].state == DecodeState::kClean,
                     "{}: stripe {} corrected into a non-codeword", code.name(), t);
  }
}

void FuzzOne(FuzzedDataProvider* in) {
  const RsCode& code = CodeFor(in->ConsumeIntegralInRange(0, 2));
  const int test = in->ConsumeIntegralInRange(0, 2);
  const uint8_t shape = in->ConsumeIntegral<uint8_t>();
  const size_t len = shape < kLongRunShapes ? kLongRun + shape : shape - kLongRunShapes;
  std::mt19937_64 rng(in->ConsumeIntegral<uint64_t>());
  const std::vector<int> erased = test == 1 ? ConsumeErasures(code, in) : std::vector<int>{};
  const std::vector<uint8_t> material = in->ConsumeRemainingBytes<uint8_t>();
  switch (test) {
    case 0: TestErrors(code, len, material, &rng); break;
    case 1: TestErasures(code, len, erased, material, &rng); break;
    default: TestGarbage(code, len, material, &rng); break;
  }
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  cairn::fuzz::FuzzOne(&in);
  return 0;
}
