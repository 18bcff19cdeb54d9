// Engine: opening, regions, routed files, finalize, and what both pipelines
// share (agreement, removing a copy, ECC repair); the pipelines are in
// engine_checkpoint.cc and engine_restart.cc (engine.h).
#include "runtime/engine.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "base/log.h"
#include "codec/crc32c.h"
#include "env/process_info.h"
#include "format/layout.h"
#include "format/page_table.h"
#include "runtime/catalog.h"
#include "runtime/config_agreement.h"
#include "runtime/ecc_sidecar.h"
#include "storage/job_lock.h"

namespace cairn {
namespace {

bool IsOwnFile(const std::string& file, int rank) {
  std::string prefix = RankFilePrefix(rank);
  return file.compare(0, prefix.size(), prefix) == 0;
}

using TierArray = std::array<std::unique_ptr<Tier>, kTierKinds>;

// A thread that works while the application computes, niced by
// [general] background_nice. The default (0) shares the cores fairly: a
// higher value keeps the background work out of the application's way
// (the ECC checkpoint's ratio to none 0.91-1.15 at 19 instead of
// 1.24-1.46, 2 ranks on 2 cores), but a job that keeps every core busy
// then starves its drains and encodes (docs/config.md, docs/ecc.md).
ThreadOptions BackgroundThread(const Config& config, std::string name) {
  return ThreadOptions{.name = std::move(name), .nice = static_cast<int>(config.background_nice)};
}

// This node's enabled tiers, each root made and checked private to the user
// (Tier::PrepareRoot).
Status OpenTiers(Env* env, const Config& config, int node, TierArray* tiers) {
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN((*tiers)[k], OpenNodeTier(env, config, static_cast<TierKind>(k), node));
    if (!(*tiers)[k]) continue;
    CAIRN_RETURN_IF_ERROR((*tiers)[k]->PrepareRoot().Annotate(
        fmt::format("opening tier '{}'", (*tiers)[k]->name())));
  }
  return Status::Ok();
}

// Locks every tier directory for the job (storage/job_lock.h), each by one
// process: the lowest rank with the same directory on the same host. So the
// ranks of a node share the lock of a node-local tier, every rank that of
// the shared pfs, and virtual nodes on one host that of a path without
// {node}, without ever contending with each other. Collective; the result
// is agreed, so every rank fails when another job holds any directory.
Result<std::vector<std::unique_ptr<FileLock>>> LockTierDirectories(Comm& comm,
                                                                   const TierArray& tiers) {
  const std::string host = HostName();
  std::vector<int64_t> keys(kTierKinds, 0);  // 0: tier not enabled
  for (int k = 0; k < kTierKinds; ++k) {
    if (!tiers[k]) continue;
    const std::string& root = tiers[k]->root();
    uint64_t key = uint64_t{Crc32c(host.data(), host.size())} << 32 |
                   Crc32c(root.data(), root.size());
    keys[k] = static_cast<int64_t>(key | 1);
  }
  CAIRN_ASSIGN_OR_RETURN(auto all, comm.AllgatherWords(keys));
  std::vector<std::unique_ptr<FileLock>> locks;
  Status status;
  for (int k = 0; k < kTierKinds && status.ok(); ++k) {
    bool lower_rank_has_it = false;
    for (int r = 0; r < comm.rank(); ++r) {
      for (int j = 0; j < kTierKinds; ++j) lower_rank_has_it |= all[r * kTierKinds + j] == keys[k];
    }
    if (keys[k] == 0 || lower_rank_has_it) continue;
    auto lock = LockTierDirectory(*tiers[k], "");
    if (!lock.ok()) status = lock.status();
    if (lock.ok() && *lock) locks.push_back(std::move(lock).value());
  }
  CAIRN_RETURN_IF_ERROR(comm.Agree(status));
  return locks;
}

// Removes what this rank left on tier in a run that died mid-write:
// temporary files and copies whose manifest was never written.
// REQUIRES: the job holds the tier's lock (they are no other job's files).
Status RemoveLeftovers(Tier& tier, int rank) {
  CAIRN_ASSIGN_OR_RETURN(auto names, tier.Names());
  for (const auto& name : names) {
    CAIRN_ASSIGN_OR_RETURN(auto versions, tier.Versions(name));
    for (int64_t v : versions) {
      CAIRN_ASSIGN_OR_RETURN(auto files, tier.Files(name, v));
      bool has_manifest = std::count(files.begin(), files.end(), ManifestFileName(rank));
      for (const auto& f : files) {
        if (IsOwnFile(f, rank) && (!has_manifest || f.find(".tmp.") != std::string::npos)) {
          CAIRN_RETURN_IF_ERROR(tier.Remove(name, v, f));
        }
      }
      CAIRN_RETURN_IF_ERROR(tier.RemoveVersionDirIfEmpty(name, v));
    }
  }
  return Status::Ok();
}

}  // namespace

Engine::Engine(std::unique_ptr<Comm> comm, const Config& config, Env* env, Clock* clock)
    : comm_(std::move(comm)),
      config_(config),
      env_(env),
      clock_(clock),
      interval_(config.interval, clock) {
  if (config.dedup.mode != DedupMode::kOff) dedup_ = std::make_unique<EngineDedup>(config.dedup);
}

Engine::~Engine() {
  if (flusher_) flusher_->Shutdown();
}

Result<std::unique_ptr<Engine>> Engine::Create(std::unique_ptr<Comm> comm, const Config& config,
                                               Env* env, Clock* clock) {
  // First, so that every later step is taken by ranks that agree on it.
  CAIRN_RETURN_IF_ERROR(AgreeOnConfig(*comm, config));
  // A configuration made in code never went through LoadConfig's checks.
  CAIRN_RETURN_IF_ERROR(config.CheckDedupWithEcc());
  std::unique_ptr<Engine> engine(new Engine(std::move(comm), config, env, clock));
  CAIRN_RETURN_IF_ERROR(engine->comm_->Agree(engine->Open()));
  std::vector<int64_t> run{engine->comm_->rank() == 0
                               ? std::llround(clock->WallSeconds() * 1e9)
                               : int64_t{0}};
  CAIRN_RETURN_IF_ERROR(engine->comm_->AllreduceMax(run));
  engine->run_id_ = static_cast<uint64_t>(run[0]);
  // The fast level's capacity bounds the clc size test.
  CAIRN_ASSIGN_OR_RETURN(engine->controller_,
                         PlacementController::Open(engine->comm_.get(), engine->config_, env, clock,
                                                   engine->FastLevelTier(),
                                                   engine->tier(TierKind::kSsd)));
  CAIRN_ASSIGN_OR_RETURN(engine->redundancy_,
                         EngineRedundancy::Open(*engine->comm_, engine->config_.redundancy));
  engine->ResumeAbandonedDrains();
  return engine;
}

Status Engine::Open() {
  SetLogLevel(LogLevelNamed(config_.log_level));
  SetLogRank(comm_->rank());
  // Every rank reaches the lock's collective, so a failure to open is
  // agreed first; and nothing is removed before the job holds the locks:
  // until then the files may be another job's.
  CAIRN_RETURN_IF_ERROR(comm_->Agree(OpenTiers(env_, config_, comm_->node(), &tiers_)));
  CAIRN_ASSIGN_OR_RETURN(tier_locks_, LockTierDirectories(*comm_, tiers_));
  for (auto& t : tiers_) {
    if (t) CAIRN_RETURN_IF_ERROR(RemoveLeftovers(*t, comm_->rank()));
  }
  for (auto& t : tiers_) {
    // One parked part file per rank and tier is what steady state needs:
    // the next checkpoint takes it as the oldest kept version is retired.
    // The memory tier keeps one more while a drain pins the oldest version.
    int max_free = 1;
    if (t && t.get() == FastLevelTier()) {
      max_free = MemorySlotsPerRank() - config_.KeepFor(t->kind());
      // A copy with an ECC sidecar retires two slot files.
      if (EccCodeFor(t->config().ecc)) max_free *= 2;
    }
    if (t) {
      t->EnableSlots(RankFilePrefix(comm_->rank()), max_free,
                     BackgroundThread(config_, "cairn-slots"));
    }
  }
  route_dir_ = JoinPath(JoinPath(tier(TierFor(Placement::kMemory))->root(), ".route"),
                        fmt::format("r{:06}", comm_->rank()));
  CAIRN_ASSIGN_OR_RETURN(flusher_, Flusher::Start(env_, BackgroundThread(config_, "cairn-flush")));
  Log(LogLevel::kInfo, "rank {} of {} on node {} of {}; placement policy '{}'", comm_->rank(),
      comm_->size(), comm_->node(), comm_->nodes(), PlacementPolicyName(config_.placement.policy));
  return Status::Ok();
}

Status Engine::Protect(int id, void* ptr, uint64_t count, uint64_t elem_size) {
  if (id < 0) return Error(Code::kInvalidArgument, "region id {} is negative", id);
  if (ptr == nullptr) return Error(Code::kInvalidArgument, "region {}: pointer is NULL", id);
  if (count == 0 || elem_size == 0) {
    return Error(Code::kInvalidArgument, "region {}: size is zero ({} x {} bytes)", id, count,
                 elem_size);
  }
  if (count > std::numeric_limits<uint64_t>::max() / elem_size) {
    return Error(Code::kInvalidArgument, "region {}: {} x {} bytes overflows", id, count,
                 elem_size);
  }
  if (dedup_) CAIRN_RETURN_IF_ERROR(CheckDedupPageCount(id, count * elem_size));
  regions_[id] = Region{id, ptr, count, elem_size};
  ReserveMemorySlots();
  return Status::Ok();
}

Status Engine::CheckDedupPageCount(int id, uint64_t bytes) const {
  const uint64_t page = static_cast<uint64_t>(config_.dedup.page_size);
  uint64_t pages = PagesIn(bytes, page);
  for (const auto& [other, r] : regions_) {
    if (other != id) pages += PagesIn(r.bytes(), page);
  }
  if (pages <= DigestIndex::kMaxPages) return Status::Ok();
  return Error(Code::kInvalidArgument,
               "region {}: the regions would make {} pages of dedup.page_size = {} bytes, more "
               "than the {} a rank's deduplicated checkpoint holds; raise dedup.page_size",
               id, pages, page, DigestIndex::kMaxPages);
}

Status Engine::Unprotect(int id) {
  if (regions_.erase(id) == 0) return Error(Code::kNotFound, "region {} is not protected", id);
  ReserveMemorySlots();
  return Status::Ok();
}

std::vector<Region> Engine::SortedRegions() const {
  std::vector<Region> out;
  for (const auto& [id, r] : regions_) out.push_back(r);  // std::map: sorted by id
  return out;
}

Result<std::map<std::string, std::string>> Engine::PendingRoutedFiles() const {
  std::map<std::string, std::string> out;
  auto entries = env_->ListDir(route_dir_);
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return out;
    return entries.status();
  }
  for (const auto& e : *entries) {
    if (!e.is_dir && ValidateName("file", e.name).ok()) out[e.name] = JoinPath(route_dir_, e.name);
  }
  return out;
}

Status Engine::RemoveCopy(Tier& t, const std::string& name, int64_t version,
                          bool remove_empty_dir, PartFate part) {
  CAIRN_ASSIGN_OR_RETURN(auto files, t.Files(name, version));
  std::string manifest = ManifestFileName(comm_->rank());
  // The manifest goes first: from then on the copy counts as incomplete.
  if (std::count(files.begin(), files.end(), manifest)) {
    CAIRN_RETURN_IF_ERROR(t.Remove(name, version, manifest));
  }
  for (const auto& f : files) {
    if (!IsOwnFile(f, comm_->rank()) || f == manifest) continue;
    // Part files and ECC sidecars are parked for reuse (the slot cache
    // keeps each for a file of its size); routed files are not.
    bool park = (f == PartFileName(comm_->rank()) || f == EccSidecarName(comm_->rank())) &&
                part == PartFate::kPark;
    CAIRN_RETURN_IF_ERROR(park ? t.Retire(name, version, f) : t.Remove(name, version, f));
  }
  return remove_empty_dir ? t.RemoveVersionDirIfEmpty(name, version) : Status::Ok();
}

Status Engine::ValidateRequest(const std::string& name, int64_t version) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", name));
  if (version < 0) return Error(Code::kInvalidArgument, "version {} is negative", version);
  return Status::Ok();
}

Status Engine::AgreeOnTarget(const std::string& name, int64_t version) {
  // Minima of each value and of its negation: the range over the ranks.
  const int64_t name_hash = static_cast<int64_t>(std::hash<std::string>{}(name) >> 1);
  std::vector<int64_t> values = {version, -version, name_hash, -name_hash};
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMin(values));
  if (values[2] != -values[3]) {
    return Error(Code::kInvalidArgument,
                 "the ranks name different checkpoints in one collective call ('{}' on rank {})",
                 name, comm_->rank());
  }
  if (values[0] != -values[1]) {
    return Error(Code::kInvalidArgument,
                 "the ranks name different versions of '{}' in one collective call ({} to {}; {} "
                 "on rank {})",
                 name, values[0], -values[1], version, comm_->rank());
  }
  return Status::Ok();
}

Result<std::string> Engine::RouteFile(const std::string& logical) {
  CAIRN_RETURN_IF_ERROR(ValidateName("routed file name", logical));
  CAIRN_RETURN_IF_ERROR(env_->CreateDirs(route_dir_));
  return JoinPath(route_dir_, logical);
}

Status Engine::Finalize() {
  std::vector<Status> sync_errors;
  for (const auto& [at, newest] : skipped_newest_) {
    ScheduleDrain(newest.first, static_cast<TierKind>(at.second), at.first, newest.second,
                  &sync_errors);
  }
  skipped_newest_.clear();
  // A drain that failed is a warning (Wait, and Drain's log line for a
  // synchronous one): ReportKept says where each version is, and memory
  // copies that are not safe below stay.
  (void)Wait();
  flusher_->Shutdown();
  // Drained tiers learn which versions every rank holds only here and at
  // checkpoints, so their retention catches up now.
  std::map<std::string, std::array<int64_t, kTierKinds>> newest;
  for (const auto& name : names_written_) {
    CAIRN_ASSIGN_OR_RETURN(newest[name], ApplyRetention(name, kNone));
  }
  // /dev/shm is RAM, and outlives the job: what a lower tier holds is
  // released there, and the user is told what is kept where.
  MemoryRelease released = ReleaseMemoryTier();
  // The lock files go too (removed while held: storage/job_lock.h), so that
  // an emptied memory tier leaves no directory behind.
  for (auto& lock : tier_locks_) {
    Status removed = lock->ReleaseAndRemove();
    if (!removed.ok()) Log(LogLevel::kWarn, "{}", removed.ToString());
  }
  tier_locks_.clear();
  Status node_done = comm_->NodeBarrier();
  if (node_done.ok() && controller_->local_rank() == 0 && tier(TierKind::kMemory)) {
    tier(TierKind::kMemory)->RemoveEmptyDirectories();
  }
  ReportKept(released, newest);
  return comm_->Agree(node_done);  // also the final barrier
}

// ---- ECC sidecar (software chipkill for the memory tier)

uint64_t Engine::ecc_shards_corrected() {
  MutexLock lock(&mu_);
  return ecc_shards_corrected_;
}

Result<Manifest> Engine::CheckCopyOrRepairable(const Tier& t, const std::string& name,
                                               int64_t version, bool* part_size_wrong) {
  *part_size_wrong = false;
  auto checked = CheckCopy(t, name, version, comm_->rank(), comm_->size());
  if (checked.ok() || checked.status().code() != Code::kCorrupt) return checked;
  // A part of the wrong size (truncated) may still be rebuilt from its
  // sidecar: the shards it lost are erasures.
  auto repairable = CheckCopyForRepair(t, name, version, comm_->rank(), comm_->size());
  if (!repairable.ok()) return checked;
  *part_size_wrong = true;
  return repairable;
}

Result<RepairedPart> Engine::RepairAndCount(const Tier& t, const std::string& name,
                                            int64_t version, const FileEntry& part,
                                            const FileEntry& parity, const Status& cause,
                                            const char* what) {
  auto repaired = RepairPart(t, name, version, part, parity);
  if (!repaired.ok()) {
    return Error(Code::kCorrupt, "{}; not repairable from its ECC sidecar: {}", cause.ToString(),
                 repaired.status().ToString());
  }
  {
    MutexLock lock(&mu_);
    ecc_shards_corrected_ += repaired->shards_corrected;
  }
  Log(LogLevel::kInfo,
      "{}: '{}' version {} on tier {}: {} shard(s) in {} stripe(s) corrected from the ECC "
      "sidecar ({})",
      what, name, version, t.name(), repaired->shards_corrected, repaired->stripes_repaired,
      cause.ToString());
  return repaired;
}

}  // namespace cairn
