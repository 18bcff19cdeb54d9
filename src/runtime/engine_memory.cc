// Engine, the memory tier's lifecycle: its slots are reserved when regions
// are protected, so that the first checkpoints copy at memcpy speed, and its
// copies are released at a clean finalize once a lower tier holds them,
// since /dev/shm is RAM and outlives the job (engine.h).
#include "base/log.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/engine.h"

namespace cairn {
namespace {

// Bytes of `rank`'s files in the version's directory on tier.
uint64_t OwnCopyBytes(const Tier& t, const std::string& name, int64_t version, int rank) {
  uint64_t bytes = 0;
  auto files = t.Files(name, version);
  if (!files.ok()) return 0;
  const std::string prefix = RankFilePrefix(rank);
  for (const auto& f : *files) {
    if (f.compare(0, prefix.size(), prefix) != 0) continue;
    auto size = t.env()->FileSize(t.FilePath(name, version, f));
    if (size.ok()) bytes += *size;
  }
  return bytes;
}

std::string Megabytes(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

}  // namespace

Tier* Engine::FastLevelTier() const {
  Tier* memory = tier(TierKind::kMemory);
  return memory != nullptr ? memory : tier(TierKind::kPmem);
}

int Engine::MemorySlotsPerRank() const {
  const Tier* fast = FastLevelTier();
  const TierKind kind = fast != nullptr ? fast->kind() : TierKind::kMemory;
  bool drains = false;
  for (int below = static_cast<int>(kind) + 1; below < kTierKinds; ++below) {
    drains = drains || tiers_[below] != nullptr;
  }
  return config_.KeepFor(kind) + 1 + (drains ? 1 : 0);
}

void Engine::ReserveMemorySlots() {
  // The fast level's slots (memory, or pmem when memory is off) are made
  // ahead and mapped, so that a run's first checkpoints copy into faulted-in
  // pages too.
  Tier* memory = FastLevelTier();
  // Under the ssd policy no version goes to memory: its slots would only
  // take RAM from the application.
  if (memory == nullptr || config_.placement.policy == PlacementPolicy::kSsd) return;
  // A part's size depends only on its regions (format/part.h), so the slot
  // is sized before any checkpoint has a name or a version.
  // With [dedup] the part is a pages file, and a slot fits the largest one
  // (every page stored), as a plain part's fits the plain part.
  const std::vector<Region> regions = SortedRegions();
  uint64_t part_bytes =
      dedup_ ? dedup_->FullPartBytes(regions, comm_->rank(), comm_->size())
             : MakePartHeader("", 0, comm_->rank(), comm_->size(), regions).FileSize();
  std::vector<uint64_t> sizes = {part_bytes};
  if (std::optional<RsCodeId> code = EccCodeFor(memory->config().ecc)) {
    sizes.push_back(EccGeometryFor(RsCode(*code), part_bytes).FileSize());  // its sidecar
  }
  memory->ReserveSlots(sizes, MemorySlotsPerRank());
}

int64_t Engine::NewestSafeBelowMemory(const std::string& name) const {
  int64_t newest = kNone;
  for (TierKind kind : {TierKind::kPmem, TierKind::kSsd, TierKind::kPfs}) {
    const Tier* t = tier(kind);
    auto versions = t ? t->Versions(name) : Result<std::vector<int64_t>>(std::vector<int64_t>{});
    if (!versions.ok()) continue;
    for (auto v = versions->rbegin(); v != versions->rend() && *v > newest; ++v) {
      if (CheckCopy(*t, name, *v, comm_->rank(), comm_->size()).ok()) {
        newest = *v;
        break;
      }
    }
  }
  return newest;
}

Engine::MemoryRelease Engine::ReleaseMemoryTier() {
  MemoryRelease out;
  Tier* memory = tier(TierKind::kMemory);
  if (memory == nullptr) return out;
  const bool keep_all = memory->config().keep_at_finalize;
  // Parked slots hold no data; kept with the copies, they spare the next
  // run's reservation the page allocation.
  if (!keep_all) out.slot_bytes = memory->ReleaseParkedSlots();
  auto names = memory->Names();
  if (!names.ok()) return out;
  MutexLock lock(&mu_);
  for (const auto& name : *names) {
    auto versions = memory->Versions(name);
    if (!versions.ok()) continue;
    // Older versions count as safe too: a restart takes the newest
    // recoverable one, and a drain superseded by newer versions' never ran
    // because the lower tier would not have kept it.
    const int64_t safe_up_to = keep_all ? kNone : NewestSafeBelowMemory(name);
    for (int64_t v : *versions) {
      if (!HasManifest(*memory, name, v, comm_->rank())) continue;
      uint64_t bytes = OwnCopyBytes(*memory, name, v, comm_->rank());
      if (keep_all) {
        ++out.kept_copies;
        out.kept_bytes += bytes;
      } else if (v > safe_up_to) {
        ++out.only_copies;
        out.only_bytes += bytes;
      } else if (Status s = RemoveCopy(*memory, name, v, /*remove_empty_dir=*/true,
                                       PartFate::kDelete);
                 s.ok()) {
        ++out.released_copies;
        out.released_bytes += bytes;
      } else {
        Log(LogLevel::kWarn, "releasing the memory copy of '{}' version {}: {}", name, v,
            s.ToString());
      }
    }
  }
  return out;
}

void Engine::ReportKept(const MemoryRelease& mine,
                        const std::map<std::string, std::array<int64_t, kTierKinds>>& newest) {
  std::vector<double> sums = {
      static_cast<double>(mine.released_copies), static_cast<double>(mine.released_bytes),
      static_cast<double>(mine.kept_copies),     static_cast<double>(mine.kept_bytes),
      static_cast<double>(mine.only_copies),     static_cast<double>(mine.only_bytes),
      static_cast<double>(mine.slot_bytes)};
  if (!comm_->AllreduceSum(sums).ok() || comm_->rank() != 0) return;
  std::vector<std::string> parts;
  const std::string per_node = comm_->nodes() > 1 ? " and on every other node" : "";
  for (const auto& [name, versions] : newest) {
    std::vector<std::string> where;
    for (TierKind kind : {TierKind::kPmem, TierKind::kSsd, TierKind::kPfs}) {
      if (versions[static_cast<int>(kind)] < 0) continue;
      where.push_back(fmt::format("{} v{} ({}{})", TierKindName(kind),
                                  versions[static_cast<int>(kind)], tier(kind)->root(),
                                  kind == TierKind::kPfs ? "" : per_node));
    }
    if (!where.empty()) parts.push_back(fmt::format("kept {} on {}", name, fmt::join(where, " and ")));
  }
  const Tier* memory = tier(TierKind::kMemory);
  const std::string shm = memory ? memory->root() + per_node : "";
  // Counts are of rank copies (one part, sidecar and manifest per rank and
  // version), summed over the job.
  std::vector<std::string> released;
  if (sums[0] > 0) released.push_back(fmt::format("{} memory copies ({})", sums[0], Megabytes(sums[1])));
  if (sums[6] > 0) released.push_back(fmt::format("spare slots ({})", Megabytes(sums[6])));
  if (!released.empty()) {
    parts.push_back(fmt::format("released {} from {}", fmt::join(released, " and "), shm));
  }
  if (sums[2] > 0) {
    parts.push_back(fmt::format("kept {} memory copies ({}) in {} (tiers.memory.keep_at_finalize)",
                                sums[2], Megabytes(sums[3]), shm));
  }
  if (sums[4] > 0) {
    parts.push_back(fmt::format(
        "kept {} memory copies ({}) in {}: no lower tier holds them, and they take that much "
        "RAM until deleted",
        sums[4], Megabytes(sums[5]), shm));
  }
  // At warn level, the default threshold, only while copies stay in RAM: a
  // user must see without configuring anything that they take memory until
  // deleted. A finalize that leaves every version safe below memory is
  // routine and says so at info level.
  const bool ram_kept = sums[2] > 0 || sums[4] > 0;
  if (!parts.empty()) Log(ram_kept ? LogLevel::kWarn : LogLevel::kInfo, "{}", fmt::join(parts, "; "));
}

}  // namespace cairn
