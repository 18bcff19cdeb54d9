// Engine, the deduplication steps of the two pipelines (engine.h,
// engine_dedup.h): planning before a version is written, and phase one of
// restoring a paged version.
#include <functional>
#include <map>

#include "base/log.h"
#include "runtime/catalog.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/engine.h"

namespace cairn {

void Engine::NoteChangedPages(int id, ChangedPages pages) {
  changed_pages_[id] = std::move(pages);
}

Status Engine::PlanDedup(const std::string& name, int64_t version, TierKind kind) {
  if (!dedup_) return Status::Ok();
  // The pages go into the tier as they are hashed where every rank of a
  // node writes at once: the write waves of a lower I/O parallelism (and
  // its measurement) come after the plan's collective steps.
  const IoParallelism& parallelism = IoParallelismFor(kind);
  const auto& sized = io_parallelism_[static_cast<int>(kind)];
  const bool measuring = sized->tuner && !sized->tuner->done();
  Tier* stream_to = nullptr;
  if (!measuring && (parallelism.write <= 0 || parallelism.write >= comm_->ranks_on_node())) {
    MutexLock lock(&mu_);
    // As WriteVersion does: an earlier run's copy of this version goes
    // before the new one is written.
    if (RemoveCopy(*tier(kind), name, version, /*remove_empty_dir=*/false).ok()) {
      stream_to = tier(kind);
    }
  }
  return dedup_->Plan(*comm_, name, SortedRegions(), version, changed_pages_, stream_to);
}

Result<bool> Engine::IsDeduplicated(const std::string& name, const AgreedVersion& agreed) {
  bool paged = false;
  for (int k = 0; k < kTierKinds && !paged; ++k) {
    if (!tiers_[k]) continue;
    auto m = CheckCopy(*tiers_[k], name, agreed.version, comm_->rank(), comm_->size());
    if (!m.ok() || m->run_id != agreed.run_id || m->files.empty()) continue;
    paged = IsPagedPart(*tiers_[k], name, agreed.version, m->files.front());
  }
  CAIRN_ASSIGN_OR_RETURN(int64_t any, comm_->Max(paged ? 1 : 0));
  return any == 1;
}

namespace {

// The manifest of the copy of (tier, version) if it checks, or if only
// its part's size is wrong and a sidecar may rebuild it (*part_size_wrong
// set): Engine::CheckCopyOrRepairable.
using CopyCheck =
    std::function<Result<Manifest>(const Tier& tier, int64_t version, bool* part_size_wrong)>;
// Rebuilds the part file of (tier, version) from its ECC sidecar; `cause`
// is why the copy needs it.
using PartRepair = std::function<Result<RepairedPart>(
    const Tier& tier, int64_t version, const FileEntry& part, const FileEntry& parity,
    const Status& cause)>;

// This rank's checked paged copies of one checkpoint, by version, each
// loaded once from the fastest tier that holds a usable one; a copy that
// fails its check is rebuilt from its ECC sidecar where it has one.
class PagedCopies {
 public:
  PagedCopies(const std::array<std::unique_ptr<Tier>, kTierKinds>& tiers, std::string name,
              int rank, CopyCheck check, PartRepair repair)
      : tiers_(tiers), name_(std::move(name)), rank_(rank), check_(std::move(check)),
        repair_(std::move(repair)) {}

  // The copy of `version` on tier k, if it is complete, paged and checks.
  Result<const PagedCopy*> OnTier(int k, int64_t version, const Manifest** manifest) {
    auto key = std::make_pair(k, version);
    auto it = loaded_.find(key);
    if (it == loaded_.end()) it = loaded_.emplace(key, LoadFrom(k, version)).first;
    if (!it->second.ok()) return it->second.status();
    if (manifest != nullptr) *manifest = &it->second->manifest;
    return it->second->copy.get();
  }

  // The copy of `version` from the fastest tier that has a usable one.
  Result<const PagedCopy*> Any(int64_t version) {
    Status last = Error(Code::kNotFound, "no copy of '{}' version {} on rank {}", name_, version,
                        rank_);
    for (int k = 0; k < kTierKinds; ++k) {
      if (!tiers_[k]) continue;
      Result<const PagedCopy*> copy = OnTier(k, version, nullptr);
      if (copy.ok()) return copy;
      if (copy.status().code() != Code::kNotFound) last = copy.status();
    }
    return last;
  }

 private:
  struct Loaded {
    Manifest manifest;
    std::unique_ptr<PagedCopy> copy;
  };
  Result<Loaded> LoadFrom(int k, int64_t version) {
    const Tier& t = *tiers_[k];
    bool part_size_wrong = false;
    CAIRN_ASSIGN_OR_RETURN(Manifest m, check_(t, version, &part_size_wrong));
    // A truncated part may have lost what says it is paged: its sidecar
    // rebuilds it below, and the rebuilt bytes must load as a pages file.
    if (m.files.empty() ||
        (!part_size_wrong && !IsPagedPart(t, name_, version, m.files.front()))) {
      return Error(Code::kNotFound, "copy of '{}' version {} on tier '{}' is not paged", name_,
                   version, t.name());
    }
    const FileEntry& part = m.files.front();
    Result<std::unique_ptr<PagedCopy>> copy =
        part_size_wrong ? Result<std::unique_ptr<PagedCopy>>(Error(
                              Code::kCorrupt, "'{}' on tier '{}' is not {} bytes long", part.name,
                              t.name(), part.size))
                        : PagedCopy::Load(t, name_, version, part);
    const FileEntry* parity = FindParityEntry(m);
    if (copy.status().code() == Code::kCorrupt && parity != nullptr) {
      CAIRN_ASSIGN_OR_RETURN(RepairedPart repaired,
                             repair_(t, version, part, *parity, copy.status()));
      copy = PagedCopy::Load(
          NewBytesReadableFile(repaired.bytes, t.FilePath(name_, version, part.name)), name_,
          version, part);
    }
    CAIRN_RETURN_IF_ERROR(copy.status());
    return Loaded{std::move(m), std::move(copy).value()};
  }

  const std::array<std::unique_ptr<Tier>, kTierKinds>& tiers_;
  std::string name_;
  int rank_;
  CopyCheck check_;
  PartRepair repair_;
  std::map<std::pair<int, int64_t>, Result<Loaded>> loaded_;
};

}  // namespace

Status Engine::StageDeduplicated(const std::string& name, const AgreedVersion& agreed,
                                 StagedCopy* staged) {
  const std::vector<Region> regions = SortedRegions();
  PagedCopies copies(tiers_, name, comm_->rank(),
                     [this, &name](const Tier& t, int64_t version, bool* part_size_wrong) {
                       return CheckCopyOrRepairable(t, name, version, part_size_wrong);
                     },
                     [this, &name](const Tier& t, int64_t version, const FileEntry& part,
                                   const FileEntry& parity, const Status& cause) {
                       return RepairAndCount(t, name, version, part, parity, cause, "restart");
                     });
  const PagedCopy* mine = nullptr;
  const Manifest* manifest = nullptr;
  Status local = Error(Code::kNotFound, "no copy of '{}' version {} on this rank", name,
                       agreed.version);
  for (int k = 0; k < kTierKinds && mine == nullptr; ++k) {
    if (!tiers_[k]) continue;
    const Manifest* m = nullptr;
    Result<const PagedCopy*> copy = copies.OnTier(k, agreed.version, &m);
    Status s = copy.status();
    if (s.ok() && m->run_id != agreed.run_id) s = Error(Code::kNotFound, "copy of another run");
    if (s.ok()) s = CheckPagedRegions((*copy)->header(), regions);
    if (s.ok()) {
      for (size_t i = 1; i < m->files.size() && s.ok(); ++i) {
        if (m->files[i].kind == FileKind::kRouted) s = VerifyFile(*tiers_[k], name, agreed.version, m->files[i]);
      }
    }
    if (s.ok()) {
      mine = *copy;
      manifest = m;
      staged->tier = k;
      local = s;
    } else if (s.code() != Code::kNotFound) {
      Log(LogLevel::kWarn, "copy of '{}' version {} on tier '{}' is unusable: {}", name,
          agreed.version, tiers_[k]->name(), s.ToString());
      local = s;
    }
  }
  std::vector<uint8_t> image;
  PagedCopyLoader load = [&](int64_t version) { return copies.Any(version); };
  Status resolved = ResolvePagedImage(*comm_, mine, load, &image);
  if (!local.ok()) return local;
  CAIRN_RETURN_IF_ERROR(resolved.Annotate(fmt::format("'{}' version {}", name, agreed.version)));
  staged->bytes = manifest->DataBytes();
  staged->created = manifest->created;
  staged->part = StagedImage(std::move(image));
  return Status::Ok();
}

}  // namespace cairn
