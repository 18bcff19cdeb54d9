// EngineDedup, the checkpoint side: planning and writing paged part files
// (engine_dedup.h).
#include "runtime/engine_dedup.h"

#include <algorithm>
#include <set>

#include "format/layout.h"
#include "runtime/pages_writer.h"

namespace cairn {
namespace {

PageHashKind HashKindFor(DedupHash hash) {
  switch (hash) {
    case DedupHash::kXxh3_128: return PageHashKind::kXxh3_128;
    case DedupHash::kSha1: return PageHashKind::kSha1;
    case DedupHash::kSha256: return PageHashKind::kSha256;
    case DedupHash::kTestCollide: return PageHashKind::kTestCollide;
  }
  return PageHashKind::kXxh3_128;
}

}  // namespace

DedupOptions DedupOptionsFor(const DedupSettings& settings) {
  DedupOptions o;
  o.collective = settings.collective();
  o.incremental = settings.incremental();
  o.hash = HashKindFor(settings.hash);
  o.verify = settings.verify;
  o.threshold = static_cast<size_t>(settings.threshold);
  o.full_every = settings.full_every;
  o.probe_every = settings.probe_every;
  o.min_saving = settings.min_saving;
  return o;
}

EngineDedup::EngineDedup(const DedupSettings& settings) : settings_(settings) {}

Status EngineDedup::Plan(Comm& comm, const std::string& name, const std::vector<Region>& regions,
                         int64_t version, const ChangedPagesByRegion& changed, Tier* stream_to) {
  NameState& state = names_.try_emplace(name, DedupOptionsFor(settings_)).first->second;
  // The last plan's memory goes to this one.
  if (plan_) state.planner.Recycle(std::move(*plan_));
  plan_.reset();
  planned_ = &state;
  streamed_.reset();
  DedupPlanner& planner = planned_->planner;
  regions_ = regions;
  std::vector<PageView::RegionBytes> bytes;
  for (const Region& r : regions) {
    bytes.push_back({r.id, static_cast<const uint8_t*>(r.ptr), r.bytes()});
  }
  view_.Assign(bytes, static_cast<uint32_t>(settings_.page_size));
  const std::vector<bool> mask =
      ChangedPageMask(regions, planned_->committed_regions, view_.page_size(), changed,
                      planner.previous_version());
  std::unique_ptr<PagesFileWriter> writer;
  // A full version of an incremental mode stores many more pages than
  // those between, so each kind is expected to store what its last did.
  const std::optional<uint64_t>& expected = planner.PlansFull(version)
                                                ? planned_->stored_bytes_full
                                                : planned_->stored_bytes_referring;
  const bool nearly_full = !expected || *expected >= view_.total_bytes() / 10 * 9;
  if (stream_to != nullptr && nearly_full && !planner.WritesWhole()) {
    writer = std::make_unique<PagesFileWriter>(stream_to, name, version, PartFileName(comm.rank()),
                                               FullPartBytes(regions, comm.rank(), comm.size()));
  }
  Result<DedupPlan> plan =
      planner.Plan(comm, view_, version, mask.empty() ? nullptr : &mask, writer.get());
  if (plan.ok()) {
    plan_ = std::move(plan).value();
    if (plan_->streamed) streamed_ = std::move(writer);
  }
  // Only the collective step can fail, and it agrees on its outcome; the
  // other modes take no collective step here (each costs a round trip of
  // every rank, dear on an oversubscribed node).
  CAIRN_RETURN_IF_ERROR(plan.status());
  references_.clear();
  // A whole version refers to none, on every rank (DedupPlanner::Plan).
  if (!settings_.incremental() || plan_->whole) return Status::Ok();
  // The versions every rank's pages refer to: each copy's manifest lists
  // all of them, so that retention on any rank keeps what any rank needs.
  // A rank refers to at most full_every older versions.
  const size_t width = static_cast<size_t>(std::max(1, settings_.full_every));
  std::vector<int64_t> mine(width, -1);
  size_t i = 0;
  for (int64_t v : plan_->referenced_versions) mine[i++ % width] = v;
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> all, comm.AllgatherWords(mine));
  std::set<int64_t> union_of;
  for (int64_t v : all) {
    if (v >= 0) union_of.insert(v);
  }
  references_.assign(union_of.begin(), union_of.end());
  return Status::Ok();
}

// The header of this rank's pages file of `records` over `regions`.
PagesHeader EngineDedup::HeaderFor(const std::string& name, int64_t version, int rank, int nranks,
                                   const std::vector<Region>& regions,
                                   std::vector<PageRecord> records) const {
  PagesHeader header;
  header.hash = HashKindFor(settings_.hash);
  header.page_size = static_cast<uint32_t>(settings_.page_size);
  header.name = name;
  header.version = version;
  header.rank = rank;
  header.nranks = nranks;
  for (const Region& r : regions) header.regions.push_back({r.id, r.elem_size, r.count});
  header.pages = std::move(records);
  return header;
}

uint64_t EngineDedup::FullPartBytes(const std::vector<Region>& regions, int rank,
                                    int nranks) const {
  // Any name fits: one slot size serves every checkpoint name.
  return HeaderFor(std::string(kMaxNameLength, 'n'), 0, rank, nranks, regions, {})
      .LongestFileSize();
}

bool EngineDedup::StreamedInto(const Tier& tier, int64_t version) const {
  return streamed_ && streamed_->tier() == &tier && streamed_->version() == version;
}

Result<FileEntry> EngineDedup::WritePart(Tier& tier, const std::string& name, int64_t version,
                                         int rank, int nranks) {
  // The plan lends the header its records while the file is written (a
  // copy would be a megabyte per 64 MiB of pages, in fresh memory).
  PagesHeader header = HeaderFor(name, version, rank, nranks, regions_, std::move(plan_->records));
  std::unique_ptr<PagesFileWriter> writer;
  if (StreamedInto(tier, version)) {
    writer = std::move(streamed_);
  } else {
    // Not written while planned (a collective step ran, or another tier
    // was chosen): the stored pages in one go, from the finished plan.
    streamed_.reset();
    writer = std::make_unique<PagesFileWriter>(&tier, name, version, PartFileName(rank),
                                               header.FileSize());
    std::vector<size_t> stored;
    for (size_t i = 0; i < header.pages.size(); ++i) {
      if (header.pages[i].kind == PageKind::kData) stored.push_back(i);
    }
    writer->Store(view_, stored);
  }
  Result<FileEntry> entry = writer->Finish(header);
  plan_->records = std::move(header.pages);
  return entry;
}

void EngineDedup::Committed(int rank) {
  if (!plan_ || planned_ == nullptr) return;
  planned_->planner.Committed(*plan_, view_, rank);
  planned_->committed_regions = regions_;
  (plan_->full ? planned_->stored_bytes_full : planned_->stored_bytes_referring) =
      plan_->counts.data_bytes;
}

void EngineDedup::Forget() {
  streamed_.reset();
  for (auto& [name, state] : names_) {
    state.planner.Forget();
    state.committed_regions.clear();
  }
}

}  // namespace cairn
