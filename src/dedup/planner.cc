#include "dedup/planner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

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

void DedupPlanner::DigestPages(const PageView& view, size_t begin, size_t end,
                               const std::vector<bool>* changed, const PageDigest* copied,
                               int rank, DedupPlan* plan) const {
  auto start = std::chrono::steady_clock::now();
  for (size_t i = begin; i < end; ++i) {
    PageRecord& r = plan->records[i];
    r.rank = rank;
    r.version = plan->version;
    if (copied != nullptr) {
      r.digest = copied[i - begin];
      ++plan->counts.hashed;
      ++plan->counts.hashed_in_copy;
    } else if (KeepsPreviousDigest(view, i, changed)) {
      r.digest = previous_->locations[i].digest;
    } else {
      r.digest = hasher_.Hash(view.page(i).data, view.page(i).length);
      ++plan->counts.hashed;
    }
  }
  if (copied == nullptr) plan->hash_seconds += SecondsSince(start);
}

bool DedupPlanner::KeepsPreviousDigest(const PageView& view, size_t i,
                                       const std::vector<bool>* changed) const {
  const bool trust_changed = changed != nullptr && changed->size() == view.size();
  return trust_changed && !(*changed)[i] && SameSlot(view, i);
}

bool DedupPlanner::AllMayHaveChanged(const PageView& view, size_t begin, size_t end,
                                     const std::vector<bool>* changed) const {
  for (size_t i = begin; i < end; ++i) {
    if (KeepsPreviousDigest(view, i, changed)) return false;
  }
  return true;
}

void DedupPlanner::ReferPrevious(size_t i, DedupPlan* plan) const {
  // A reference is resolved by digest in the referenced copy, so a page
  // whose index moved (the regions were resized) may still refer to it.
  if (i >= previous_->locations.size()) return;
  const PageRecord& before = previous_->locations[i];
  PageRecord& r = plan->records[i];
  // Short pages and pages that collided are never references (they are
  // found by digest alone).
  if (!before.shareable || before.digest != r.digest) return;
  r.kind = PageKind::kPrevious;
  r.rank = before.rank;
  r.version = before.version;
  plan->referenced_versions.insert(before.version);
}

void DedupPlanner::DedupLocally(const PageView& view, size_t i, DigestIndex* local_hashes,
                                DedupPlan* plan) const {
  PageRecord& r = plan->records[i];
  if (r.kind != PageKind::kData) return;
  if (!view.whole(i)) {
    r.shareable = false;
    return;
  }
  const std::optional<size_t> first = local_hashes->FindOrAdd(i);
  if (!first) return;  // line 6-7: a new hash, Reference nil
  const PageSpan& a = view.page(*first);
  const PageSpan& b = view.page(i);
  if (options_.verify && std::memcmp(a.data, b.data, b.length) != 0) {
    // Equal digests, different bytes: stored, and never found by digest.
    r.shareable = false;
    ++plan->collisions;
    return;
  }
  r.kind = PageKind::kLocalDup;  // line 9: Reference = MyRank
}

Result<bool> DedupPlanner::AllSkipCollective(Comm& comm) const {
  const bool mine = unshared_since_ && *unshared_since_ + 1 < options_.probe_every;
  // Agreed, not assumed: a rank that took the step while another skipped
  // it would wait for it forever.
  return comm.AllTrue(mine);
}

bool DedupPlanner::PlansFull(int64_t version) const {
  return !options_.incremental || !previous_ || previous_->since_full + 1 >= options_.full_every ||
         previous_->version >= version;
}

bool DedupPlanner::WritesWhole() const {
  return saved_little_since_ && *saved_little_since_ + 1 < options_.probe_every;
}

Status DedupPlanner::JudgeSaving(Comm& comm, const DedupPlan& plan, size_t pages) {
  // A full version of an incremental mode does not look for unchanged
  // pages. (A collective mode's version that skipped the step trusts the
  // last one, which found no page two ranks hold.)
  if (options_.probe_every <= 1 || (options_.incremental && plan.full)) return Status::Ok();
  const uint64_t saved = plan.counts.local_dup + plan.counts.remote_ref + plan.counts.unchanged;
  const bool little = static_cast<double>(saved) <= options_.min_saving * static_cast<double>(pages);
  CAIRN_ASSIGN_OR_RETURN(bool all_little, comm.AllTrue(little));
  if (all_little) {
    // As old as the last collective step's finding, so that the versions
    // written whole end when the next step is due.
    saved_little_since_ = unshared_since_.value_or(0);
  } else {
    saved_little_since_.reset();
  }
  return Status::Ok();
}

Result<DedupPlanner::CollectiveOutcome> DedupPlanner::DedupCollectively(Comm& comm,
                                                                        DedupPlan* plan) {
  auto start = std::chrono::steady_clock::now();
  local_hashes_.Digests(&local_digests_);
  LocalHashFreq(&local_digests_, comm.rank(), options_.threshold, &top_k_.set);
  CAIRN_RETURN_IF_ERROR(AllReduceTopK(comm, hasher_.digest_bytes(), options_.threshold, &top_k_));
  const HashFreqSet& top_k = top_k_.set;
  plan->reduce_seconds = SecondsSince(start);
  CollectiveOutcome outcome;
  outcome.shared = !top_k.empty();  // it holds only pages of two ranks or more
  // Lines 17-21: digest -> owner for the pages another rank stores.
  std::unordered_map<PageDigest, int32_t, PageDigestHash> owned_elsewhere;
  for (const HashFreq& t : top_k) {
    if (t.owner != comm.rank() && local_hashes_.Contains(t.digest)) owned_elsewhere[t.digest] = t.owner;
  }
  // Each digest in local_hashes_ is that of a stored page.
  outcome.stored_became_references = !owned_elsewhere.empty();
  if (!outcome.stored_became_references) return outcome;
  for (PageRecord& r : plan->records) {
    bool same_as_first = r.kind == PageKind::kLocalDup || (r.kind == PageKind::kData && r.shareable);
    if (!same_as_first) continue;
    auto it = owned_elsewhere.find(r.digest);
    if (it == owned_elsewhere.end()) continue;
    r.kind = PageKind::kRemote;
    r.rank = it->second;
  }
  return outcome;
}

Result<DedupPlan> DedupPlanner::Plan(Comm& comm, const PageView& view, int64_t version,
                                     const std::vector<bool>* changed, StoredPageSink* sink) {
  DedupPlan plan;
  plan.version = version;
  if (WritesWhole()) {
    ++*saved_little_since_;
    // The version after the whole ones takes the collective step, whose
    // last finding is as old as theirs.
    if (unshared_since_) ++*unshared_since_;
    plan.whole = true;
    plan.counts.unique = view.size();
    plan.counts.data_bytes = view.total_bytes();
    return plan;
  }
  plan.full = PlansFull(version);
  // Alone, a rank holds no page another rank could store for it: local
  // dedup has already found every duplicate.
  bool collective = options_.collective && comm.size() > 1;
  if (collective) {
    CAIRN_ASSIGN_OR_RETURN(bool skip, AllSkipCollective(comm));
    collective = !skip;
    if (skip) ++*unshared_since_;
  }
  // A collective step streams too where the last one found no page two
  // ranks hold, and so probably finds none again; if it finds stored pages
  // that another rank stores, the plan ends unstreamed.
  plan.streamed = sink != nullptr && (!collective || unshared_since_.has_value());
  plan.records = std::move(spare_records_);
  plan.records.assign(view.size(), PageRecord{});
  local_hashes_.Reset(view.size(), plan.records);
  std::vector<size_t> stored;
  // Chunks of pages small enough to stay in cache from their hashing to
  // the sink's copy, or from the sink's copy ahead to their hashing.
  constexpr uint64_t kChunkBytes = 256 << 10;
  const size_t chunk_pages = std::max<size_t>(1, kChunkBytes / view.page_size());
  // Copying a chunk ahead pays where it is stored whole, as in a full
  // version of changing data: the guess is that a chunk is stored whole if
  // the one before it was. Until the sink says it cannot copy ahead.
  bool sink_copies_ahead = plan.streamed;
  bool guess_whole = true;
  // Where the hash allows, the sink hashes the pages it copies ahead.
  const PageHasher* hash_in_copy = hasher_.HashesInCopy() ? &hasher_ : nullptr;
  std::vector<PageDigest> copied(hash_in_copy != nullptr ? chunk_pages : 0);
  for (size_t begin = 0; begin < view.size(); begin += chunk_pages) {
    const size_t end = std::min(view.size(), begin + chunk_pages);
    bool hashed_in_copy = false;
    if (sink_copies_ahead && guess_whole && AllMayHaveChanged(view, begin, end, changed)) {
      sink_copies_ahead = sink->CopyAhead(view, begin, end, hash_in_copy, copied.data());
      hashed_in_copy = sink_copies_ahead && hash_in_copy != nullptr;
    }
    DigestPages(view, begin, end, changed, hashed_in_copy ? copied.data() : nullptr, comm.rank(),
                &plan);
    for (size_t i = begin; i < end; ++i) local_hashes_.Prefetch(plan.records[i].digest);
    stored.clear();
    for (size_t i = begin; i < end; ++i) {
      if (!plan.full) ReferPrevious(i, &plan);
      DedupLocally(view, i, &local_hashes_, &plan);
      if (plan.records[i].kind == PageKind::kData) stored.push_back(i);
    }
    if (plan.streamed && !stored.empty()) sink->Store(view, stored);
    guess_whole = stored.size() == end - begin;
  }
  if (collective) {
    CAIRN_ASSIGN_OR_RETURN(CollectiveOutcome outcome, DedupCollectively(comm, &plan));
    plan.collective = true;
    if (outcome.stored_became_references) plan.streamed = false;
    if (outcome.shared) {
      unshared_since_.reset();
    } else {
      unshared_since_ = 0;
    }
  }
  const PageCounts digested = plan.counts;
  plan.counts = CountPages(plan.records, view);
  plan.counts.hashed = digested.hashed;
  plan.counts.hashed_in_copy = digested.hashed_in_copy;
  CAIRN_RETURN_IF_ERROR(JudgeSaving(comm, plan, view.size()));
  return plan;
}

void DedupPlanner::Committed(const DedupPlan& plan, const PageView& view, int rank) {
  if (plan.whole) {
    previous_.reset();  // its pages have no records to refer to
    return;
  }
  if (!options_.incremental) return;
  Previous next;
  next.version = plan.version;
  next.since_full = plan.full || !previous_ ? 0 : previous_->since_full + 1;
  // In the memory of the version it replaces (see spare_records_).
  if (previous_) {
    next.locations = std::move(previous_->locations);
    next.lengths = std::move(previous_->lengths);
  }
  next.locations.assign(plan.records.begin(), plan.records.end());
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
