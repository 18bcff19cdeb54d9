// DedupPlanner: decides, for each page of one checkpoint of this rank,
// whether it is stored (kData) or a reference, and where the referenced
// bytes are (format/page_table.h): Algorithm 1 of the collective-dedup
// paper — local dedup (lines 2-11), the collective top-K with designated
// owners (lines 12-21) — and dedup in time, the paper's future work: a page
// unchanged since the previous committed version refers to where that
// version's page is, except in a full version every `full_every`.
// The planner remembers the previous committed version's page locations
// (Committed) and nothing else: after a restart the next version is full.
// Thread-safety: one planner per rank, used from the application's thread.
#ifndef CAIRN_DEDUP_PLANNER_H_
#define CAIRN_DEDUP_PLANNER_H_

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "base/status.h"
#include "comm/comm.h"
#include "dedup/digest_index.h"
#include "dedup/page_hash.h"
#include "dedup/page_view.h"
#include "dedup/top_k.h"
#include "format/page_table.h"

namespace cairn {

struct DedupOptions {
  bool collective = false;   // the top-K step (collective: every rank plans together)
  bool incremental = false;  // references to the previous version
  PageHashKind hash = PageHashKind::kXxh3_128;
  // Compare bytes before a page counts as a duplicate of a local page;
  // a page whose digest matches but whose bytes differ is stored.
  bool verify = false;
  size_t threshold = size_t{1} << 17;  // TopK size
  int full_every = 8;                  // incremental: every Nth version is full
  // Collective: after a top-K that found no page two ranks hold, the next
  // versions skip the step until the probe_every-th (1: never skip). And
  // in every mode, after a version whose references saved at most
  // `min_saving` of the pages of every rank, the next versions are written
  // whole, without a plan, until the probe_every-th (Plan).
  int probe_every = 8;
  double min_saving = 0.02;
};

struct PageCounts {
  uint64_t unique = 0;      // kData: stored here
  uint64_t local_dup = 0;   // kLocalDup
  uint64_t remote_ref = 0;  // kRemote
  uint64_t unchanged = 0;   // kPrevious
  uint64_t data_bytes = 0;  // bytes of the kData pages
  // Pages whose digest was computed; the others kept the previous
  // version's (a `changed` mask said they were not written).
  uint64_t hashed = 0;
  // Of those, pages hashed in the pass that copied them to the tier
  // (StoredPageSink::CopyAhead): they cost no hashing pass of their own,
  // and no hash_seconds.
  uint64_t hashed_in_copy = 0;
};

struct DedupPlan {
  int64_t version = 0;
  // Written as a plain part, its pages neither hashed nor planned: the
  // ranks' last planned version saved too little (no records then).
  bool whole = false;
  bool full = true;  // no page refers to an older version
  std::vector<PageRecord> records;  // one per page of the view
  PageCounts counts;
  uint64_t collisions = 0;  // verify found equal digests of different bytes
  // Older versions this rank's records refer to (kPrevious targets).
  std::set<int64_t> referenced_versions;
  double hash_seconds = 0;    // hashing passes of their own (see hashed_in_copy)
  double reduce_seconds = 0;  // the top-K reduction (0 without it)
  // The collective step ran (else the ranks agreed to skip it, or the
  // mode has none).
  bool collective = false;
  // Every stored page went to the sink while the plan was made, and the
  // pages it received are the stored ones (else what it received, if
  // anything, is to be dropped).
  bool streamed = false;
};

// Receives the pages a plan stores, in page order, while the plan is made:
// DedupPlanner::Plan hands over each chunk's stored pages right after
// hashing them, while they are still in cache, unless a later step is
// expected to change their records (a collective step after one that found
// pages two ranks hold). Where the plan ends unstreamed (a collective step
// found pages another rank stores, or none was expected to), the caller
// drops what the sink received and writes the pages from the finished plan.
class StoredPageSink {
 public:
  virtual ~StoredPageSink() = default;
  // `pages`: indices into the view, ascending, each kData and final.
  virtual void Store(const PageView& view, const std::vector<size_t>& pages) = 0;
  // Copies pages [first, last) to where the next stored bytes go before
  // the plan knows whether it stores them: one pass over them from memory
  // that writes them out and, with a `hasher` (one that HashesInCopy),
  // puts each page's digest in digests[i - first], hashed in the same pass
  // where it can be; without one, it leaves them in cache for hashing.
  // Either way, instead of a pass that hashes them and another that
  // writes them. A Store of exactly those pages next keeps them without
  // copying them again; any other call drops them. False where the sink
  // cannot (its file is not written through a mapping).
  virtual bool CopyAhead(const PageView& view, size_t first, size_t last,
                         const PageHasher* hasher, PageDigest* digests) {
    return false;
  }
};

class DedupPlanner {
 public:
  explicit DedupPlanner(const DedupOptions& options)
      : options_(options), hasher_(options.hash) {}

  const DedupOptions& options() const { return options_; }
  const PageHasher& hasher() const { return hasher_; }

  // Plans version `version` of the pages in `view`. Collective when
  // options().collective: every rank calls it for the same version, and
  // an error on one rank (a malformed reduction message) is every rank's.
  // `changed`, if given (one flag per page), says which pages may have
  // changed since the last committed version (transparent mode's dirty
  // tracking): the others keep that version's digests without being hashed
  // again. A page is trusted clean only where the previous version had a
  // page of the same length at the same index (the caller keeps indices
  // aligned: a region that grew adds pages at its end, which are hashed).
  // With a `sink`, the stored pages go to it while they are hashed, unless
  // a collective step is expected to find shared pages (plan.streamed says
  // whether what the sink received is the plan's stored pages).
  // The collective step is skipped when every rank agrees that its last
  // one found no page two ranks hold, up to options().probe_every. And the
  // version is `whole` (nothing hashed, the sink untouched) after a planned
  // one that saved at most options().min_saving of the pages of every rank,
  // up to the probe_every-th, which is planned again to find out whether
  // that changed: dedup costs nothing where it finds nothing. Every rank
  // decides that alone, from a history that changes only where all ranks
  // pass together (an agreed judgement, Committed, Forget), so the ranks
  // write the same versions whole without a round trip.
  // REQUIRES: view.size() <= DigestIndex::kMaxPages.
  Result<DedupPlan> Plan(Comm& comm, const PageView& view, int64_t version,
                         const std::vector<bool>* changed = nullptr,
                         StoredPageSink* sink = nullptr);

  // The plan's version is committed on every rank: the next version's
  // unchanged pages may refer to it (not to a whole one). `rank` is this
  // rank.
  void Committed(const DedupPlan& plan, const PageView& view, int rank);
  // Takes back a plan that is no longer needed, whose records the next
  // Plan is made in (see spare_records_).
  void Recycle(DedupPlan&& plan) {
    if (!plan.whole) spare_records_ = std::move(plan.records);
  }
  // The next version is full and takes the collective step (after a
  // restart, or a failed checkpoint whose version may be gone).
  void Forget() {
    previous_.reset();
    unshared_since_.reset();
    saved_little_since_.reset();
  }
  // Whether the plan of `version` stores every page that differs within
  // the rank: no reference to an older version (DedupPlan::full).
  bool PlansFull(int64_t version) const;
  // Whether the next version is written whole (DedupPlan::whole).
  bool WritesWhole() const;
  // The version the next plan's unchanged pages may refer to, if any.
  std::optional<int64_t> previous_version() const {
    return previous_ ? std::optional<int64_t>(previous_->version) : std::nullopt;
  }

 private:
  // Where the previous committed version's pages are.
  struct Previous {
    int64_t version = 0;
    int since_full = 0;                  // versions since its last full one
    std::vector<PageRecord> locations;   // kind kData where bytes may be referred to
    std::vector<uint32_t> lengths;
  };
  // Whether page i of `view` has a page of the same length at the same
  // index in the previous version (a clean page there holds its bytes).
  bool SameSlot(const PageView& view, size_t i) const;
  // Records of pages [begin, end) with their digests: `copied` ones (the
  // digests the sink computed as it copied the pages ahead, if it did),
  // hashed, or the previous version's where `changed` says the page did
  // not change (counted in plan->counts and plan->hash_seconds).
  void DigestPages(const PageView& view, size_t begin, size_t end,
                   const std::vector<bool>* changed, const PageDigest* copied, int rank,
                   DedupPlan* plan) const;
  // Whether page i keeps the previous version's digest without being
  // hashed: `changed` says it was not written, and SameSlot.
  bool KeepsPreviousDigest(const PageView& view, size_t i, const std::vector<bool>* changed) const;
  // Whether no page of [begin, end) keeps the previous version's digest
  // unhashed (DigestPages): a chunk with such a page is not copied ahead,
  // which would hash it and, unless it changed, copy it for nothing.
  bool AllMayHaveChanged(const PageView& view, size_t begin, size_t end,
                         const std::vector<bool>* changed) const;
  // kPrevious if page i's digest is the previous version's there.
  void ReferPrevious(size_t i, DedupPlan* plan) const;
  // Lines 2-11 for page i, unless it is already kPrevious.
  // `local_hashes`: digest -> the first page holding it (a kData page).
  void DedupLocally(const PageView& view, size_t i, DigestIndex* local_hashes,
                    DedupPlan* plan) const;
  // Collective: whether every rank skips the top-K step of this version.
  Result<bool> AllSkipCollective(Comm& comm) const;
  // Collective unless the plan did not look for unchanged pages (a full
  // version of an incremental mode) or probe_every is 1: whether every
  // rank saved at most options().min_saving of its pages, which starts the
  // versions written whole.
  Status JudgeSaving(Comm& comm, const DedupPlan& plan, size_t pages);
  struct CollectiveOutcome {
    bool shared = false;  // a page is held by two ranks or more
    bool stored_became_references = false;  // on this rank
  };
  // Lines 12-21: the pages of a digest whose designated owner is another
  // rank become references to it (local_hashes_: this version's digests).
  Result<CollectiveOutcome> DedupCollectively(Comm& comm, DedupPlan* plan);

  DedupOptions options_;
  PageHasher hasher_;
  std::optional<Previous> previous_;
  // Memory a plan is made in, kept from one version to the next: the
  // records and the index are a megabyte per 64 MiB of pages that, were
  // they allocated afresh (glibc maps blocks this large anew each time),
  // the kernel would fault in and zero page by page in every checkpoint.
  std::vector<PageRecord> spare_records_;
  DigestIndex local_hashes_;
  std::vector<PageDigest> local_digests_;  // the collective step's input
  TopKBuffers top_k_;
  // Versions (planned or whole) since a collective step found no page two
  // ranks hold; empty when the last one found some, or none ran.
  std::optional<int> unshared_since_;
  // Versions since a planned one saved too little on every rank (all
  // written whole but the last); empty when it saved enough, or none told.
  std::optional<int> saved_little_since_;
};

// Counts the records of each kind and the stored bytes.
PageCounts CountPages(const std::vector<PageRecord>& records, const PageView& view);

}  // namespace cairn

#endif  // CAIRN_DEDUP_PLANNER_H_
