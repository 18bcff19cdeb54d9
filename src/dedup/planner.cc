#include "dedup/planner.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "dedup/top_k.h"

namespace cairn {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

bool DedupPlanner::SameSlot(const PageView& view, size_t i) const {
  return previous_ && i < previous_->lengths.size() && previous_->lengths[i] == view.page(i).length;
}

std::vector<PageDigest> DedupPlanner::Digests(const PageView& view,
                                              const std::vector<bool>* changed,
                                              uint64_t* hashed) const {
  const bool trust_changed = changed != nullptr && changed->size() == view.size();
  std::vector<PageDigest> digests(view.size());
  for (size_t i = 0; i < view.size(); ++i) {
    if (trust_changed && !(*changed)[i] && SameSlot(view, i)) {
      digests[i] = previous_->locations[i].digest;
    } else {
      digests[i] = hasher_.Hash(view.page(i).data, view.page(i).length);
      ++*hashed;
    }
  }
  return digests;
}

void DedupPlanner::ReferPrevious(const std::vector<PageDigest>& digests, DedupPlan* plan) const {
  // A reference is resolved by digest in the referenced copy, so a page
  // whose index moved (the regions were resized) may still refer to it.
  const size_t comparable = std::min(digests.size(), previous_->locations.size());
  for (size_t i = 0; i < comparable; ++i) {
    const PageRecord& before = previous_->locations[i];
    // Short pages and pages that collided are never references (they are
    // found by digest alone).
    if (!before.shareable || before.digest != digests[i]) continue;
    PageRecord& r = plan->records[i];
    r.kind = PageKind::kPrevious;
    r.rank = before.rank;
    r.version = before.version;
    plan->referenced_versions.insert(before.version);
  }
}

DedupPlanner::LocalHashes DedupPlanner::DedupLocally(const PageView& view,
                                                     const std::vector<PageDigest>& digests,
                                                     DedupPlan* plan) const {
  LocalHashes local_hashes;
  for (size_t i = 0; i < view.size(); ++i) {
    PageRecord& r = plan->records[i];
    if (r.kind != PageKind::kData) continue;
    if (!view.whole(i)) {
      r.shareable = false;
      continue;
    }
    auto [first, inserted] = local_hashes.emplace(digests[i], i);
    if (inserted) continue;  // line 6-7: a new hash, Reference nil
    const PageSpan& a = view.page(first->second);
    const PageSpan& b = view.page(i);
    if (options_.verify && std::memcmp(a.data, b.data, b.length) != 0) {
      // Equal digests, different bytes: stored, and never found by digest.
      r.shareable = false;
      ++plan->collisions;
      continue;
    }
    r.kind = PageKind::kLocalDup;  // line 9: Reference = MyRank
  }
  return local_hashes;
}

Status DedupPlanner::DedupCollectively(Comm& comm, const LocalHashes& local_hashes,
                                       DedupPlan* plan) const {
  auto start = std::chrono::steady_clock::now();
  std::vector<PageDigest> mine;
  mine.reserve(local_hashes.size());
  for (const auto& [digest, page] : local_hashes) mine.push_back(digest);
  HashFreqSet hash_freq = LocalHashFreq(std::move(mine), comm.rank(), options_.threshold);
  CAIRN_ASSIGN_OR_RETURN(HashFreqSet top_k, AllReduceTopK(comm, std::move(hash_freq), hasher_.digest_bytes(),
                                                          options_.threshold));
  plan->reduce_seconds = SecondsSince(start);
  // Lines 17-21: digest -> owner for the pages another rank stores.
  std::unordered_map<PageDigest, int32_t, PageDigestHash> owned_elsewhere;
  for (const HashFreq& t : top_k) {
    if (t.owner != comm.rank() && local_hashes.count(t.digest)) owned_elsewhere[t.digest] = t.owner;
  }
  if (owned_elsewhere.empty()) return Status::Ok();
  for (PageRecord& r : plan->records) {
    bool same_as_first = r.kind == PageKind::kLocalDup || (r.kind == PageKind::kData && r.shareable);
    if (!same_as_first) continue;
    auto it = owned_elsewhere.find(r.digest);
    if (it == owned_elsewhere.end()) continue;
    r.kind = PageKind::kRemote;
    r.rank = it->second;
  }
  return Status::Ok();
}

Result<DedupPlan> DedupPlanner::Plan(Comm& comm, const PageView& view, int64_t version,
                                     const std::vector<bool>* changed) {
  DedupPlan plan;
  plan.version = version;
  auto start = std::chrono::steady_clock::now();
  uint64_t hashed = 0;
  std::vector<PageDigest> digests = Digests(view, changed, &hashed);
  plan.hash_seconds = SecondsSince(start);
  plan.records.resize(view.size());
  for (size_t i = 0; i < view.size(); ++i) {
    plan.records[i].digest = digests[i];
    plan.records[i].rank = comm.rank();
    plan.records[i].version = version;
  }
  plan.full = !options_.incremental || !previous_ ||
              previous_->since_full + 1 >= options_.full_every || previous_->version >= version;
  if (!plan.full) ReferPrevious(digests, &plan);
  LocalHashes local_hashes = DedupLocally(view, digests, &plan);
  // Alone, a rank holds no page another rank could store for it: local
  // dedup has already found every duplicate.
  if (options_.collective && comm.size() > 1) {
    CAIRN_RETURN_IF_ERROR(DedupCollectively(comm, local_hashes, &plan));
  }
  plan.counts = CountPages(plan.records, view);
  plan.counts.hashed = hashed;
  return plan;
}

void DedupPlanner::Committed(const DedupPlan& plan, const PageView& view, int rank) {
  if (!options_.incremental) return;
  Previous next;
  next.version = plan.version;
  next.since_full = plan.full || !previous_ ? 0 : previous_->since_full + 1;
  next.locations = plan.records;
  next.lengths.resize(view.size());
  for (size_t i = 0; i < view.size(); ++i) {
    next.lengths[i] = view.page(i).length;
    PageRecord& where = next.locations[i];
    // Where the bytes are, as a later version refers to them: kLocalDup
    // pages are found by digest in this rank's copy, kRemote ones in the
    // owner's; kPrevious ones stay where they were.
    if (where.kind == PageKind::kData || where.kind == PageKind::kLocalDup) {
      where.rank = rank;
      where.version = plan.version;
    }
    if (!view.whole(i)) where.shareable = false;
  }
  previous_ = std::move(next);
}

PageCounts CountPages(const std::vector<PageRecord>& records, const PageView& view) {
  PageCounts c;
  for (size_t i = 0; i < records.size(); ++i) {
    switch (records[i].kind) {
      case PageKind::kData:
        ++c.unique;
        c.data_bytes += view.page(i).length;
        break;
      case PageKind::kLocalDup: ++c.local_dup; break;
      case PageKind::kRemote: ++c.remote_ref; break;
      case PageKind::kPrevious: ++c.unchanged; break;
    }
  }
  return c;
}

}  // namespace cairn
