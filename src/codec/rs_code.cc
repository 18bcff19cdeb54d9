#include "codec/rs_code.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <unordered_map>

#include <isa-l/erasure_code.h>

#include "base/mutex.h"
#include "base/vector_state.h"
#include "codec/gf256.h"

namespace cairn {

const char* DecodeStateName(DecodeState state) {
  switch (state) {
    case DecodeState::kClean: return "clean";
    case DecodeState::kCorrected: return "corrected";
    case DecodeState::kUncorrectable: return "uncorrectable";
  }
  return "unknown";
}

namespace {

// ISA-L takes int lengths; larger requests are cut into pieces of this size.
constexpr size_t kMaxIsalLen = size_t{1} << 30;
// Stripes checked per ec_encode_data call in Decode: the m scratch rows of
// this many bytes stay in L1 while they are scanned.
constexpr size_t kCheckBlock = 4096;

std::vector<uint8_t> InitIsalTables(int sources, int rows, const std::vector<uint8_t>& matrix) {
  std::vector<uint8_t> tables(size_t{32} * sources * rows);
  std::vector<uint8_t> a(matrix);  // ec_init_tables takes a non-const matrix
  ec_init_tables(sources, rows, a.data(), tables.data());
  return tables;
}

// Null shards are fine when there is nothing to read or write (len == 0).
template <typename Pointer>
Status ValidateShards(const char* name, int n, size_t count, const Pointer* shards, size_t len) {
  if (count != static_cast<size_t>(n)) {
    return Error(Code::kInvalidArgument, "{}: {} shards given, the code has {}", name, count, n);
  }
  for (size_t i = 0; i < count && len > 0; ++i) {
    if (shards[i] == nullptr) {
      return Error(Code::kInvalidArgument, "{}: shard {} is null", name, i);
    }
  }
  return Status::Ok();
}

// Multiplicative inverse by search: the reference twins use nothing but
// MulBase.
uint8_t InvBase(uint8_t a) {
  for (unsigned y = 1; y < 256; ++y) {
    if (gf256::MulBase(a, static_cast<uint8_t>(y)) == 1) return static_cast<uint8_t>(y);
  }
  return 0;
}

}  // namespace

static_assert(RsCode::kMaxN <= 64, "an erasure pattern is a 64-bit mask");

// What rebuilds one erasure pattern: the rows (one per erased shard, in
// ascending shard order) that map the first k surviving shards to the
// erased ones, expanded for ec_encode_data.
struct RsCode::ErasureDecoder {
  std::array<int, kMaxN> survivors{};
  std::array<int, kMaxM> erased{};
  int rows = 0;
  std::vector<uint8_t> tables;
};

// Least-recently-used map from erasure pattern to decoder. Entries are
// shared_ptr so that a Rebuild keeps using a decoder another thread evicts
// meanwhile; decoders are made outside the lock (two threads missing the
// same pattern at once both make it, and the first insert wins).
class RsCode::DecoderCache {
 public:
  std::shared_ptr<const ErasureDecoder> Find(uint64_t pattern) {
    MutexLock lock(&mu_);
    auto it = index_.find(pattern);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  std::shared_ptr<const ErasureDecoder> Insert(uint64_t pattern,
                                               std::shared_ptr<const ErasureDecoder> decoder) {
    MutexLock lock(&mu_);
    auto it = index_.find(pattern);
    if (it != index_.end()) return it->second->second;
    lru_.emplace_front(pattern, std::move(decoder));
    index_[pattern] = lru_.begin();
    if (lru_.size() > kDecoderCacheCapacity) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return lru_.front().second;
  }

  size_t size() {
    MutexLock lock(&mu_);
    return lru_.size();
  }

 private:
  using Lru = std::list<std::pair<uint64_t, std::shared_ptr<const ErasureDecoder>>>;
  Mutex mu_;
  Lru lru_ GUARDED_BY(mu_);  // most recent first
  std::unordered_map<uint64_t, Lru::iterator> index_ GUARDED_BY(mu_);
};

RsCode::RsCode(RsCodeId id) : id_(id) {
  switch (id) {
    case RsCodeId::kRs36_32:
      n_ = 36, k_ = 32, extended_ = false, correctable_ = 1, detectable_ = 3;
      break;
    case RsCodeId::kRs18_16:
      n_ = 18, k_ = 16, extended_ = false, correctable_ = 0, detectable_ = 2;
      break;
    case RsCodeId::kRs19_16:
      n_ = 19, k_ = 16, extended_ = true, correctable_ = 1, detectable_ = 2;
      break;
  }
  m_ = n_ - k_;
  cyclic_n_ = extended_ ? n_ - 1 : n_;
  cyclic_m_ = extended_ ? m_ - 1 : m_;

  // Parity-check matrix: a cyclic position j has locator X_j =
  // alpha^(cyclic_n-1-j) and column (1, X_j, X_j^2, ...); the extension
  // position (RS(19,16)'s p2) has column (0, .., 0, 1).
  h_.assign(static_cast<size_t>(m_) * n_, 0);
  for (int i = 0; i < m_; ++i) {
    for (int j = 0; j < cyclic_n_; ++j) {
      h_[i * n_ + j] = gf256::Exp(static_cast<unsigned>(i * (cyclic_n_ - 1 - j)));
    }
  }
  if (extended_) h_[(m_ - 1) * n_ + (n_ - 1)] = 1;

  // Generator polynomial g(x) = prod_{i < cyclic_m} (x + alpha^i), monic,
  // g[t] = coefficient of x^t (characteristic 2: minus is plus).
  std::array<uint8_t, kMaxM + 1> g{};
  g[0] = 1;
  for (int i = 0; i < cyclic_m_; ++i) {
    uint8_t root = gf256::Exp(static_cast<unsigned>(i));
    for (int t = i + 1; t > 0; --t) g[t] = g[t - 1] ^ gf256::Mul(g[t], root);
    g[0] = gf256::Mul(g[0], root);
  }

  // Systematic encoding puts parity(x) = d(x) x^cyclic_m mod g(x), so data
  // symbol i (coefficient of x^(cyclic_n-1-i)) adds x^(cyclic_n-1-i) mod g(x)
  // to the parity: column i of P is that remainder, its coefficient of
  // x^(cyclic_m-1-r) feeding parity symbol r. Walk the degrees upward,
  // multiplying the remainder by x each step.
  p_.assign(static_cast<size_t>(m_) * k_, 0);
  std::array<uint8_t, kMaxM> rem{};  // x^deg mod g, rem[t] = coeff of x^t
  rem[0] = 1;
  for (int deg = 0; deg < cyclic_n_; ++deg) {
    if (deg > 0) {
      uint8_t top = rem[cyclic_m_ - 1];
      for (int t = cyclic_m_ - 1; t > 0; --t) rem[t] = rem[t - 1] ^ gf256::Mul(top, g[t]);
      rem[0] = gf256::Mul(top, g[0]);
    }
    int i = cyclic_n_ - 1 - deg;  // the position whose locator is alpha^deg
    if (i < k_) {
      for (int r = 0; r < cyclic_m_; ++r) p_[r * k_ + i] = rem[cyclic_m_ - 1 - r];
    }
  }
  // The extension row: H_last c = 0 with H_last = (alpha^(2 deg_j) ..., 1),
  // so p2 = sum over the cyclic positions of H_last[j] c_j, and the cyclic
  // parity symbols are themselves linear in the data.
  if (extended_) {
    const int last = m_ - 1;
    for (int i = 0; i < k_; ++i) {
      uint8_t v = h_[last * n_ + i];
      for (int r = 0; r < cyclic_m_; ++r) {
        v ^= gf256::Mul(p_[r * k_ + i], h_[last * n_ + k_ + r]);
      }
      p_[last * k_ + i] = v;
    }
  }

  encode_tables_ = InitIsalTables(k_, m_, p_);
  decoders_ = std::make_unique<DecoderCache>();
}

RsCode::~RsCode() = default;
RsCode::RsCode(RsCode&&) noexcept = default;
RsCode& RsCode::operator=(RsCode&&) noexcept = default;

const char* RsCode::name() const {
  switch (id_) {
    case RsCodeId::kRs36_32: return "RS(36,32)";
    case RsCodeId::kRs18_16: return "RS(18,16)";
    case RsCodeId::kRs19_16: return "RS(19,16)";
  }
  return "RS(?)";
}

// ---------------------------------------------------------------- encode

Status RsCode::Encode(std::span<uint8_t* const> shards, size_t len) const {
  CAIRN_RETURN_IF_ERROR(ValidateShards(name(), n_, shards.size(), shards.data(), len));
  std::array<uint8_t*, kMaxN> data{};
  std::array<uint8_t*, kMaxM> parity{};
  for (size_t off = 0; off < len; off += kMaxIsalLen) {
    size_t piece = std::min(kMaxIsalLen, len - off);
    for (int i = 0; i < k_; ++i) data[i] = shards[i] + off;
    for (int r = 0; r < m_; ++r) parity[r] = shards[k_ + r] + off;
    ec_encode_data(static_cast<int>(piece), k_, m_,
                   const_cast<uint8_t*>(encode_tables_.data()), data.data(), parity.data());
    ClearUpperVectorHalves();
  }
  return Status::Ok();
}

// The textbook systematic encoder: divide d(x) x^cyclic_m by g(x) in a
// linear-feedback shift register, one stripe at a time; for RS(19,16),
// p2 = c(alpha^2) by Horner's rule. Only MulBase/ExpBase arithmetic.
Status RsCode::EncodeBase(std::span<uint8_t* const> shards, size_t len) const {
  CAIRN_RETURN_IF_ERROR(ValidateShards(name(), n_, shards.size(), shards.data(), len));
  std::array<uint8_t, kMaxM + 1> g{};
  g[0] = 1;
  for (int i = 0; i < cyclic_m_; ++i) {
    uint8_t root = gf256::ExpBase(static_cast<unsigned>(i));
    for (int t = i + 1; t > 0; --t) g[t] = g[t - 1] ^ gf256::MulBase(g[t], root);
    g[0] = gf256::MulBase(g[0], root);
  }
  const uint8_t beta = gf256::ExpBase(static_cast<unsigned>(cyclic_m_));  // alpha^2 for p2
  for (size_t s = 0; s < len; ++s) {
    std::array<uint8_t, kMaxM> reg{};  // reg[t]: coefficient of x^t of the remainder
    for (int i = 0; i < k_; ++i) {
      uint8_t feedback = shards[i][s] ^ reg[cyclic_m_ - 1];
      for (int t = cyclic_m_ - 1; t > 0; --t) reg[t] = reg[t - 1] ^ gf256::MulBase(feedback, g[t]);
      reg[0] = gf256::MulBase(feedback, g[0]);
    }
    for (int r = 0; r < cyclic_m_; ++r) shards[k_ + r][s] = reg[cyclic_m_ - 1 - r];
    if (extended_) {
      uint8_t v = 0;
      for (int j = 0; j < cyclic_n_; ++j) v = gf256::MulBase(v, beta) ^ shards[j][s];
      shards[n_ - 1][s] = v;
    }
  }
  return Status::Ok();
}

// ------------------------------------------------------ syndrome decoding

void RsCode::Syndromes(const uint8_t* codeword, uint8_t* syndromes) const {
  for (int i = 0; i < m_; ++i) {
    uint8_t s = 0;
    const uint8_t* row = &h_[i * n_];
    for (int j = 0; j < n_; ++j) s ^= gf256::Mul(row[j], codeword[j]);
    syndromes[i] = s;
  }
}

void RsCode::SyndromesBase(const uint8_t* codeword, uint8_t* syndromes) const {
  for (int i = 0; i < m_; ++i) {
    // S_i = c(alpha^i), c_0 being the highest-degree coefficient.
    uint8_t beta = gf256::ExpBase(static_cast<unsigned>(i));
    uint8_t s = 0;
    for (int j = 0; j < cyclic_n_; ++j) s = gf256::MulBase(s, beta) ^ codeword[j];
    // The extension symbol enters only the last syndrome, with coefficient 1.
    if (extended_ && i == m_ - 1) s ^= codeword[n_ - 1];
    syndromes[i] = s;
  }
}

SymbolDecode RsCode::DecodeSyndromes(const uint8_t* s) const {
  uint8_t any = 0;
  for (int i = 0; i < m_; ++i) any |= s[i];
  if (any == 0) return {};
  SymbolDecode unc{DecodeState::kUncorrectable, -1, 0};
  if (correctable_ == 0) return unc;
  // A single error e at cyclic position j gives S_i = e X_j^i; at the
  // extension position it gives S = (0, .., 0, e).
  if (extended_) {
    uint8_t cyclic = 0;
    for (int i = 0; i < cyclic_m_; ++i) cyclic |= s[i];
    if (cyclic == 0) return {DecodeState::kCorrected, n_ - 1, s[m_ - 1]};
  }
  if (s[0] == 0 || s[1] == 0) return unc;
  int deg = gf256::Log(s[1]) - gf256::Log(s[0]);
  if (deg < 0) deg += gf256::kOrder;
  if (deg >= cyclic_n_) return unc;  // the locator names no position of this (shortened) code
  const uint8_t x = gf256::Exp(static_cast<unsigned>(deg));
  // Every further syndrome must continue the geometric sequence S_0 X^i.
  // Accepting exactly the syndromes of single errors is what makes the
  // decoder detect 2 (RS(19,16), distance 4) or 3 (RS(36,32), distance 5)
  // errors: such a pattern never shares its syndrome with a single error.
  for (int i = 2; i < m_; ++i) {
    if (s[i] != gf256::Mul(s[i - 1], x)) return unc;
  }
  return {DecodeState::kCorrected, cyclic_n_ - 1 - deg, s[0]};
}

SymbolDecode RsCode::DecodeSyndromesBase(const uint8_t* s) const {
  bool any = false;
  for (int i = 0; i < m_; ++i) any |= s[i] != 0;
  if (!any) return {};
  SymbolDecode unc{DecodeState::kUncorrectable, -1, 0};
  if (correctable_ == 0) return unc;
  // Try every single error (position j, value e): its syndrome is e times
  // column j of H. The column is rebuilt here with ExpBase.
  SymbolDecode found = unc;
  int matches = 0;
  for (int j = 0; j < n_; ++j) {
    std::array<uint8_t, kMaxM> column{};
    for (int i = 0; i < m_; ++i) {
      if (j < cyclic_n_) {
        column[i] = gf256::ExpBase(static_cast<unsigned>(i * (cyclic_n_ - 1 - j)));
      } else {
        column[i] = (i == m_ - 1) ? 1 : 0;
      }
    }
    for (unsigned e = 1; e < 256; ++e) {
      bool match = true;
      for (int i = 0; i < m_ && match; ++i) {
        match = gf256::MulBase(static_cast<uint8_t>(e), column[i]) == s[i];
      }
      if (match) {
        ++matches;
        found = {DecodeState::kCorrected, j, static_cast<uint8_t>(e)};
      }
    }
  }
  // More than one match would mean distance < 3: then nothing is safe to fix.
  return matches == 1 ? found : unc;
}

// ------------------------------------------------------------ over shards

Result<DecodeReport> RsCode::StartDecode(uint8_t* const* shards, size_t len,
                                         std::span<StripeOutcome> outcomes) const {
  CAIRN_RETURN_IF_ERROR(ValidateShards(name(), n_, static_cast<size_t>(n_), shards, len));
  if (!outcomes.empty() && outcomes.size() < len) {
    return Error(Code::kInvalidArgument, "{}: {} outcome slots for {} stripes", name(),
                 outcomes.size(), len);
  }
  DecodeReport report;
  report.corrected_by_shard.assign(n_, 0);
  return report;
}

Result<DecodeReport> RsCode::Decode(uint8_t* const* shards, size_t len,
                                    std::span<StripeOutcome> outcomes, bool repair) const {
  CAIRN_ASSIGN_OR_RETURN(DecodeReport report, StartDecode(shards, len, outcomes));
  if (!outcomes.empty()) std::fill(outcomes.begin(), outcomes.begin() + len, StripeOutcome{});

  // Syndromes without an n-source dot product: every codeword satisfies
  // H_d d + H_p (P d) = 0 for all d, so H_d = H_p P (characteristic 2) and
  // the syndrome of a received (d', p') is S = H_d d' + H_p p' = H_p delta
  // with delta = P d' + p', the difference between the parity the data
  // implies and the parity stored. delta costs one ISA-L encode of the k
  // data shards (an n-source dot product is several times slower on this
  // machine once n passes ~32: measured 2-5 GB/s for 36 sources against
  // 10-15 for 16-32); only the rare stripes with delta != 0 pay for the
  // m x m product with H_p and the syndrome decoder.
  std::vector<uint8_t> scratch(static_cast<size_t>(m_) * kCheckBlock);
  std::array<uint8_t*, kMaxN> src{};
  std::array<uint8_t*, kMaxM> dst{};
  for (int r = 0; r < m_; ++r) dst[r] = scratch.data() + r * kCheckBlock;

  for (size_t off = 0; off < len; off += kCheckBlock) {
    const size_t block = std::min(kCheckBlock, len - off);
    for (int j = 0; j < k_; ++j) src[j] = shards[j] + off;
    ec_encode_data(static_cast<int>(block), k_, m_,
                   const_cast<uint8_t*>(encode_tables_.data()), src.data(), dst.data());
    ClearUpperVectorHalves();
    // Skip clean stripes eight at a time; decode only the others.
    size_t t = 0;
    while (t < block) {
      if (t + 8 <= block) {
        uint64_t acc = 0;
        for (int r = 0; r < m_; ++r) {
          uint64_t want, have;
          std::memcpy(&want, dst[r] + t, 8);
          std::memcpy(&have, shards[k_ + r] + off + t, 8);
          acc |= want ^ have;
        }
        if (acc == 0) {
          report.clean += 8;
          t += 8;
          continue;
        }
      }
      const size_t end = std::min(block, t + 8);
      for (; t < end; ++t) {
        std::array<uint8_t, kMaxM> delta{};
        uint8_t any = 0;
        for (int r = 0; r < m_; ++r) any |= delta[r] = dst[r][t] ^ shards[k_ + r][off + t];
        if (any == 0) {
          ++report.clean;
          continue;
        }
        std::array<uint8_t, kMaxM> syn{};
        for (int i = 0; i < m_; ++i) {
          for (int r = 0; r < m_; ++r) syn[i] ^= gf256::Mul(h_[i * n_ + k_ + r], delta[r]);
        }
        SymbolDecode d = DecodeSyndromes(syn.data());
        if (d.state == DecodeState::kCorrected) {
          ++report.corrected;
          ++report.corrected_by_shard[d.position];
          if (repair) shards[d.position][off + t] ^= d.error;
        } else {
          ++report.uncorrectable;
        }
        if (!outcomes.empty()) outcomes[off + t] = d;
      }
    }
  }
  return report;
}

Result<DecodeReport> RsCode::DecodeBase(uint8_t* const* shards, size_t len,
                                        std::span<StripeOutcome> outcomes, bool repair) const {
  CAIRN_ASSIGN_OR_RETURN(DecodeReport report, StartDecode(shards, len, outcomes));
  std::array<uint8_t, kMaxN> word{};
  std::array<uint8_t, kMaxM> syn{};
  for (size_t t = 0; t < len; ++t) {
    for (int j = 0; j < n_; ++j) word[j] = shards[j][t];
    SyndromesBase(word.data(), syn.data());
    SymbolDecode d = DecodeSyndromesBase(syn.data());
    switch (d.state) {
      case DecodeState::kClean: ++report.clean; break;
      case DecodeState::kCorrected:
        ++report.corrected;
        ++report.corrected_by_shard[d.position];
        if (repair) shards[d.position][t] ^= d.error;
        break;
      case DecodeState::kUncorrectable: ++report.uncorrectable; break;
    }
    if (!outcomes.empty()) outcomes[t] = d;
  }
  return report;
}

// Check reads only: the const_cast lets it share Decode with Correct, which
// writes only when `repair` is set (ISA-L reads its sources, never writes).
Result<DecodeReport> RsCode::Check(std::span<const uint8_t* const> shards, size_t len,
                                   std::span<StripeOutcome> outcomes) const {
  if (shards.size() != static_cast<size_t>(n_)) {
    return Error(Code::kInvalidArgument, "{}: {} shards given, the code has {}", name(),
                 shards.size(), n_);
  }
  return Decode(const_cast<uint8_t* const*>(shards.data()), len, outcomes, false);
}

Result<DecodeReport> RsCode::CheckBase(std::span<const uint8_t* const> shards, size_t len,
                                       std::span<StripeOutcome> outcomes) const {
  if (shards.size() != static_cast<size_t>(n_)) {
    return Error(Code::kInvalidArgument, "{}: {} shards given, the code has {}", name(),
                 shards.size(), n_);
  }
  return DecodeBase(const_cast<uint8_t* const*>(shards.data()), len, outcomes, false);
}

Result<DecodeReport> RsCode::Correct(std::span<uint8_t* const> shards, size_t len,
                                     std::span<StripeOutcome> outcomes) const {
  if (shards.size() != static_cast<size_t>(n_)) {
    return Error(Code::kInvalidArgument, "{}: {} shards given, the code has {}", name(),
                 shards.size(), n_);
  }
  return Decode(shards.data(), len, outcomes, true);
}

Result<DecodeReport> RsCode::CorrectBase(std::span<uint8_t* const> shards, size_t len,
                                         std::span<StripeOutcome> outcomes) const {
  if (shards.size() != static_cast<size_t>(n_)) {
    return Error(Code::kInvalidArgument, "{}: {} shards given, the code has {}", name(),
                 shards.size(), n_);
  }
  return DecodeBase(shards.data(), len, outcomes, true);
}

// ------------------------------------------------------------ erasures

namespace {

Status ValidateErased(const char* name, int n, int m, std::span<const int> erased) {
  if (erased.size() > static_cast<size_t>(m)) {
    return Error(Code::kInvalidArgument, "{}: {} erased shards, at most {} can be rebuilt", name,
                 erased.size(), m);
  }
  std::array<bool, RsCode::kMaxN> seen{};
  for (int e : erased) {
    if (e < 0 || e >= n) {
      return Error(Code::kInvalidArgument, "{}: erased shard {} is not in [0, {})", name, e, n);
    }
    if (seen[e]) return Error(Code::kInvalidArgument, "{}: shard {} erased twice", name, e);
    seen[e] = true;
  }
  return Status::Ok();
}

}  // namespace

size_t RsCode::cached_decoders() const { return decoders_->size(); }

// The ISA-L recipe: the systematic generator G (n x k, identity over P)
// maps data to codeword; the k surviving rows form an invertible matrix (the
// code is MDS), whose inverse recovers the data, and the erased rows of G
// times that inverse recover the erased shards directly from the survivors.
Result<std::shared_ptr<const RsCode::ErasureDecoder>> RsCode::DecoderFor(uint64_t pattern) const {
  if (auto cached = decoders_->Find(pattern)) return cached;
  auto d = std::make_shared<ErasureDecoder>();
  int count = 0;
  for (int j = 0; j < n_; ++j) {
    if (pattern >> j & 1) {
      d->erased[d->rows++] = j;
    } else if (count < k_) {
      d->survivors[count++] = j;
    }
  }
  auto g_row = [&](int row, int col) -> uint8_t {
    return row < k_ ? (row == col ? 1 : 0) : p_[(row - k_) * k_ + col];
  };
  std::vector<uint8_t> b(static_cast<size_t>(k_) * k_);
  std::vector<uint8_t> inv(static_cast<size_t>(k_) * k_);
  for (int r = 0; r < k_; ++r) {
    for (int c = 0; c < k_; ++c) b[r * k_ + c] = g_row(d->survivors[r], c);
  }
  if (gf_invert_matrix(b.data(), inv.data(), k_) != 0) {
    return Error(Code::kInternal, "{}: survivor matrix is singular (the code should be MDS)",
                 name());
  }
  std::vector<uint8_t> rows(static_cast<size_t>(d->rows) * k_);
  for (int r = 0; r < d->rows; ++r) {
    for (int c = 0; c < k_; ++c) {
      uint8_t v = 0;
      for (int t = 0; t < k_; ++t) v ^= gf256::Mul(g_row(d->erased[r], t), inv[t * k_ + c]);
      rows[r * k_ + c] = v;
    }
  }
  d->tables = InitIsalTables(k_, d->rows, rows);
  return decoders_->Insert(pattern, std::move(d));
}

Status RsCode::Rebuild(std::span<uint8_t* const> shards, size_t len,
                       std::span<const int> erased) const {
  CAIRN_RETURN_IF_ERROR(ValidateShards(name(), n_, shards.size(), shards.data(), len));
  CAIRN_RETURN_IF_ERROR(ValidateErased(name(), n_, m_, erased));
  if (erased.empty() || len == 0) return Status::Ok();
  uint64_t pattern = 0;
  for (int e : erased) pattern |= uint64_t{1} << e;
  CAIRN_ASSIGN_OR_RETURN(std::shared_ptr<const ErasureDecoder> d, DecoderFor(pattern));
  std::array<uint8_t*, kMaxN> src{};
  std::array<uint8_t*, kMaxM> dst{};
  for (size_t off = 0; off < len; off += kMaxIsalLen) {
    size_t piece = std::min(kMaxIsalLen, len - off);
    for (int c = 0; c < k_; ++c) src[c] = shards[d->survivors[c]] + off;
    for (int r = 0; r < d->rows; ++r) dst[r] = shards[d->erased[r]] + off;
    // ISA-L reads the tables, never writes them.
    ec_encode_data(static_cast<int>(piece), k_, d->rows, const_cast<uint8_t*>(d->tables.data()),
                   src.data(), dst.data());
    ClearUpperVectorHalves();
  }
  return Status::Ok();
}

// The textbook way, independent of G: zero the erased symbols, compute the
// syndromes S, and solve H_E e = S for the erased values (H_E: the erased
// columns of H, which are independent because any m columns are).
Status RsCode::RebuildBase(std::span<uint8_t* const> shards, size_t len,
                           std::span<const int> erased) const {
  CAIRN_RETURN_IF_ERROR(ValidateShards(name(), n_, shards.size(), shards.data(), len));
  CAIRN_RETURN_IF_ERROR(ValidateErased(name(), n_, m_, erased));
  const int cols = static_cast<int>(erased.size());
  if (cols == 0) return Status::Ok();
  std::array<uint8_t, kMaxN> word{};
  for (size_t t = 0; t < len; ++t) {
    for (int j = 0; j < n_; ++j) word[j] = shards[j][t];
    for (int e : erased) word[e] = 0;
    // Augmented system [H_E | S], m rows; column j of H by SyndromesBase of
    // a unit vector, so that nothing here depends on h_.
    std::array<std::array<uint8_t, kMaxM + 1>, kMaxM> a{};
    std::array<uint8_t, kMaxM> syn{};
    SyndromesBase(word.data(), syn.data());
    for (int c = 0; c < cols; ++c) {
      std::array<uint8_t, kMaxN> unit{};
      unit[erased[c]] = 1;
      std::array<uint8_t, kMaxM> column{};
      SyndromesBase(unit.data(), column.data());
      for (int r = 0; r < m_; ++r) a[r][c] = column[r];
    }
    for (int r = 0; r < m_; ++r) a[r][cols] = syn[r];
    // Gauss-Jordan elimination.
    int row = 0;
    for (int c = 0; c < cols; ++c) {
      int pivot = row;
      while (pivot < m_ && a[pivot][c] == 0) ++pivot;
      if (pivot == m_) {
        return Error(Code::kInternal, "{}: erased columns are dependent (the code should be MDS)",
                     name());
      }
      std::swap(a[pivot], a[row]);
      uint8_t scale = InvBase(a[row][c]);
      for (int x = 0; x <= cols; ++x) a[row][x] = gf256::MulBase(a[row][x], scale);
      for (int r = 0; r < m_; ++r) {
        if (r == row || a[r][c] == 0) continue;
        uint8_t f = a[r][c];
        for (int x = 0; x <= cols; ++x) a[r][x] ^= gf256::MulBase(f, a[row][x]);
      }
      ++row;
    }
    for (int c = 0; c < cols; ++c) shards[erased[c]][t] = a[c][cols];
  }
  return Status::Ok();
}

}  // namespace cairn
