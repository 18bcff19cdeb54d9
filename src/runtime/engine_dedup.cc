// EngineDedup, the checkpoint side: planning and writing paged part files
// (engine_dedup.h).
#include "runtime/engine_dedup.h"

#include <algorithm>
#include <set>

#include "format/layout.h"

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

// Appends the stored pages of `plan` in page order, checksumming them.
// Stored pages that follow each other in memory (a region's run of new
// pages: all of them when nothing is shared) go as one run, straight from
// the application's memory.
Status AppendDataPages(WritableFile& file, const PageView& view, const DedupPlan& plan,
                       ExtentChecksummer& sum) {
  const uint8_t* run = nullptr;
  uint64_t run_bytes = 0;
  for (size_t i = 0; i < view.size(); ++i) {
    if (plan.records[i].kind != PageKind::kData) continue;
    const PageSpan& p = view.page(i);
    if (run_bytes > 0 && run + run_bytes != p.data) {
      CAIRN_RETURN_IF_ERROR(AppendChecksummed(file, sum, run, run_bytes));
      run_bytes = 0;
    }
    if (run_bytes == 0) run = p.data;
    run_bytes += p.length;
  }
  return AppendChecksummed(file, sum, run, run_bytes);
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
  return o;
}

EngineDedup::EngineDedup(const DedupSettings& settings) : settings_(settings) {}

Status EngineDedup::Plan(Comm& comm, const std::string& name, const std::vector<Region>& regions,
                         int64_t version, const ChangedPagesByRegion& changed) {
  planned_ = &names_.try_emplace(name, DedupOptionsFor(settings_)).first->second;
  DedupPlanner& planner = planned_->planner;
  regions_ = regions;
  std::vector<PageView::RegionBytes> bytes;
  for (const Region& r : regions) {
    bytes.push_back({r.id, static_cast<const uint8_t*>(r.ptr), r.bytes()});
  }
  view_.emplace(bytes, static_cast<uint32_t>(settings_.page_size));
  plan_.reset();
  const std::vector<bool> mask =
      ChangedPageMask(regions, planned_->committed_regions, view_->page_size(), changed,
                      planner.previous_version());
  Result<DedupPlan> plan = planner.Plan(comm, *view_, version, mask.empty() ? nullptr : &mask);
  if (plan.ok()) plan_ = std::move(plan).value();
  // Only the collective step can fail, and it agrees on its outcome; the
  // other modes take no collective step here (each costs a round trip of
  // every rank, dear on an oversubscribed node).
  CAIRN_RETURN_IF_ERROR(plan.status());
  references_.clear();
  if (!settings_.incremental()) return Status::Ok();
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
  PagesHeader header = HeaderFor("", 0, rank, nranks, regions, {});
  std::vector<uint32_t> lengths = header.PageLengths();
  header.pages.resize(lengths.size());  // every record kData
  return header.FileSize();
}

Result<FileEntry> EngineDedup::WritePart(Tier& tier, const std::string& name, int64_t version,
                                         int rank, int nranks) {
  const PagesHeader header = HeaderFor(name, version, rank, nranks, regions_, plan_->records);
  std::string head = header.Encode();
  FileEntry entry;
  entry.kind = FileKind::kPart;
  entry.name = PartFileName(rank);
  entry.size = header.FileSize();
  CAIRN_ASSIGN_OR_RETURN(auto pending, tier.Create(name, version, entry.name, entry.size));
  WritableFile& file = pending->file();
  ExtentChecksummer head_sum(0);
  head_sum.Update(head.data(), head.size());
  CAIRN_RETURN_IF_ERROR(file.Append(head.data(), head.size()));
  const std::string padding(header.DataOffset() - head.size(), '\0');
  CAIRN_RETURN_IF_ERROR(file.Append(padding.data(), padding.size()));
  ExtentChecksummer data_sum(header.DataOffset());
  CAIRN_RETURN_IF_ERROR(AppendDataPages(file, *view_, *plan_, data_sum));
  entry.extents = {head_sum.Finish(), data_sum.Finish()};
  CAIRN_RETURN_IF_ERROR(pending->Commit());
  return entry;
}

void EngineDedup::Committed(int rank) {
  if (!plan_ || !view_ || planned_ == nullptr) return;
  planned_->planner.Committed(*plan_, *view_, rank);
  planned_->committed_regions = regions_;
}

void EngineDedup::Forget() {
  for (auto& [name, state] : names_) {
    state.planner.Forget();
    state.committed_regions.clear();
  }
}

}  // namespace cairn
