#include "dedup/hash_merger.h"

#include <algorithm>
#include <cstring>

#include "format/bytes.h"

namespace cairn {
namespace {

bool ByDigest(const HashFreq& a, const HashFreq& b) { return a.digest < b.digest; }

// Line 23-25: the `threshold` highest counts survive; the set stays sorted.
void Truncate(HashFreqSet* set, size_t threshold) {
  if (set->size() <= threshold) return;
  auto more_frequent = [](const HashFreq& a, const HashFreq& b) {
    return a.count != b.count ? a.count > b.count : a.digest < b.digest;
  };
  std::nth_element(set->begin(), set->begin() + static_cast<ptrdiff_t>(threshold), set->end(),
                   more_frequent);
  set->resize(threshold);
  std::sort(set->begin(), set->end(), ByDigest);
}

}  // namespace

void HashMerger(const HashFreqSet& left, const HashFreqSet& right, int nranks, size_t threshold,
                HashFreqSet* result_set) {
  std::vector<uint64_t> page_load(static_cast<size_t>(nranks), 0);  // lines 2-4
  HashFreqSet& result = *result_set;
  result.clear();
  result.reserve(left.size() + right.size());
  // Tuples that both sides hold: (index in result, owner on the right);
  // the result holds the left one's until the owner is chosen.
  std::vector<std::pair<size_t, int32_t>> shared;
  size_t i = 0;
  size_t j = 0;
  // Lines 6-13 in one walk over both sorted sets, which leaves the result
  // sorted: a tuple only one side holds goes in as it is and charges its
  // owner.
  auto take_alone = [&](const HashFreq& t) {
    result.push_back(t);
    ++page_load[static_cast<size_t>(t.owner)];
  };
  while (i < left.size() || j < right.size()) {
    if (j == right.size() || (i < left.size() && left[i].digest < right[j].digest)) {
      take_alone(left[i++]);
    } else if (i == left.size() || right[j].digest < left[i].digest) {
      take_alone(right[j++]);
    } else {
      shared.emplace_back(result.size(), right[j].owner);
      result.push_back({left[i].digest, left[i].count + right[j].count, left[i].owner});
      ++i;
      ++j;
    }
  }
  // Lines 14-22, only once every unavoidable load is known.
  for (auto [at, right_owner] : shared) {
    int32_t& owner = result[at].owner;
    if (!(page_load[static_cast<size_t>(owner)] < page_load[static_cast<size_t>(right_owner)])) {
      owner = right_owner;
    }
    ++page_load[static_cast<size_t>(owner)];
  }
  Truncate(&result, threshold);
}

void LocalHashFreq(std::vector<PageDigest>* digests, int rank, size_t threshold,
                   HashFreqSet* result) {
  std::sort(digests->begin(), digests->end());
  digests->erase(std::unique(digests->begin(), digests->end()), digests->end());
  result->clear();
  result->reserve(digests->size());
  for (const PageDigest& d : *digests) result->push_back({d, 1, rank});
  Truncate(result, threshold);
}

std::string EncodeHashFreqSet(const HashFreqSet& set, size_t digest_bytes) {
  ByteWriter w;
  w.data().reserve(9 + set.size() * (digest_bytes + 12));
  w.U8(static_cast<uint8_t>(digest_bytes));
  w.U64(set.size());
  for (const HashFreq& t : set) {
    w.Bytes(std::string_view(reinterpret_cast<const char*>(t.digest.bytes.data()), digest_bytes));
    w.U64(t.count);
    w.U32(static_cast<uint32_t>(t.owner));
  }
  return std::move(w.data());
}

Status DecodeHashFreqSet(std::string_view bytes, size_t digest_bytes, int nranks,
                         const std::string& origin, HashFreqSet* result) {
  ByteReader r(bytes);
  uint8_t width = r.U8();
  uint64_t n = r.U64();
  if (!r.ok() || width != digest_bytes || n > r.remaining() / (digest_bytes + 12)) {
    return Error(Code::kCorrupt, "top-K set from {}: truncated or of another digest width", origin);
  }
  HashFreqSet& set = *result;
  set.resize(n);
  for (HashFreq& t : set) {
    t.digest = PageDigest{};  // zero-padded past digest_bytes, whatever the set held
    r.CopyTo(t.digest.bytes.data(), digest_bytes);
    t.count = r.U64();
    t.owner = static_cast<int32_t>(r.U32());
    if (t.owner < 0 || t.owner >= nranks) {
      return Error(Code::kCorrupt, "top-K set from {}: owner rank {} of {} ranks", origin, t.owner,
                   nranks);
    }
    if (t.count == 0 || t.count > static_cast<uint64_t>(nranks)) {
      return Error(Code::kCorrupt, "top-K set from {}: a page held by {} of {} ranks", origin,
                   t.count, nranks);
    }
  }
  // Strictly ascending: HashMerger's walk takes each digest once per side.
  const bool ascending =
      std::adjacent_find(set.begin(), set.end(), [](const HashFreq& a, const HashFreq& b) {
        return !(a.digest < b.digest);
      }) == set.end();
  if (!r.ok() || r.remaining() != 0 || !ascending) {
    return Error(Code::kCorrupt, "top-K set from {}: malformed", origin);
  }
  return Status::Ok();
}

}  // namespace cairn
