// Engine: one process's Cairn. Holds the protected regions, this node's
// tiers and the flusher, and runs the two pipelines of DESIGN.md: checkpoint
// (write the version to its tier, commit it collectively, drain it to lower
// tiers in the background, apply retention) and restart (agree on the newest
// version every rank can recover, read each part from the fastest valid
// copy, fall back to slower copies and older versions).
// Thread-safety: the public methods are called from the application thread
// only (they are collective); the flusher thread touches tiers under mu_.
#ifndef CAIRN_RUNTIME_ENGINE_H_
#define CAIRN_RUNTIME_ENGINE_H_

#include <array>
#include <deque>
#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "base/mutex.h"
#include "comm/comm.h"
#include "env/env.h"
#include "format/manifest.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/engine_dedup.h"
#include "runtime/engine_redundancy.h"
#include "runtime/part_io.h"
#include "policy/interval_advisor.h"
#include "policy/retention.h"
#include "runtime/io_parallelism.h"
#include "runtime/placement_controller.h"
#include "storage/flusher.h"
#include "storage/tier.h"

namespace cairn {

// What a restart did, for the caller and for the log.
struct RestartReport {
  int64_t requested = -1;
  int64_t version = -1;      // restored
  std::string tier;          // this rank's source
  uint64_t bytes = 0;        // this rank's bytes read
  double seconds = 0;
  // Rollback distance (recovery order, paper section 3.4), the same on
  // every rank. `newest` is the newest version of the checkpoint that any
  // rank has a manifest of on any tier, recoverable or not and whatever
  // `requested` was: the state the job had reached.
  int64_t newest = -1;
  int64_t rollback_versions = 0;  // newest - version
  // Between the manifests' creation times (wall clock) of `newest` and of
  // `version`, each the latest over ranks; 0 when none is readable.
  double rollback_seconds = 0;
  // Agreed versions that some rank then failed to restore (damage found
  // while reading) before `version` succeeded: part of the rollback, which
  // also counts versions the agreement skipped because a rank had no
  // complete copy. (Was versions_rolled_back.)
  int versions_failed = 0;
  // Shards of this rank's memory-tier parts corrected from their ECC
  // sidecars during this restart.
  uint64_t ecc_shards_corrected = 0;
  // Parts of the restored version rebuilt from redundancy groups before
  // the restore, in the whole job, and the scheme ("" when none were).
  int parts_rebuilt = 0;
  std::string redundancy;
};

// What the background work (drains, ECC encodes) did between two waits
// (cairn_checkpoint_wait).
struct WaitCounts {
  int done = 0;        // copies committed on a lower tier
  int failed = 0;      // copies that could not be made (warnings)
  int superseded = 0;  // queued drains dropped: their target keeps newer ones
  int ecc_encoded = 0;  // memory copies whose ECC sidecar was committed
  int ecc_failed = 0;   // encodes that failed: the copy stays, without ECC
  int ecc_skipped = 0;  // queued encodes dropped for a newer version's
  std::string last_failure;  // the last failure's message, a drain's or an encode's ("" if none)
};

// What a checkpoint call did.
struct CheckpointReport {
  int64_t version = -1;
  int64_t number = 0;                  // checkpoint call number in this run, from 1
  Placement placement = Placement::kMemory;  // the collective decision
  TierKind tier = TierKind::kMemory;   // where it was committed (not for kSkip)
  ClcRule rule = ClcRule::kFixedMemory;
  bool forced = false;
  std::string reason;                  // the controller's reason line
  uint64_t bytes = 0;                  // this rank's bytes written (part, files, manifest)
  double seconds = 0;                  // time inside the call
  // [dedup] (docs/dedup.md): this rank's pages by what was stored for
  // them, and the time spent hashing and in the collective reduction.
  PageCounts pages;
  double hash_seconds = 0;
  double reduce_seconds = 0;
  bool dedup_whole = false;  // written as a plain part (DedupPlan::whole)
  // The memory tier's ECC (docs/ecc.md): seconds from the commit to the
  // moment this rank's copy became protected by its sidecar; 0 when the
  // sidecar was written inside the call (tiers.memory.ecc_sync); -1 while
  // it is not protected: the background encode has not finished (Wait
  // covers it), was skipped for a newer version or failed, or the copy has
  // no sidecar (ecc = none, another tier).
  double ecc_protected_after = -1;
};

class Engine {
 public:
  // Collective. env and clock must outlive the engine.
  static Result<std::unique_ptr<Engine>> Create(std::unique_ptr<Comm> comm, const Config& config,
                                                Env* env, Clock* clock);
  ~Engine();

  Status Protect(int id, void* ptr, uint64_t count, uint64_t elem_size);
  Status Unprotect(int id);
  // For the next Checkpoint call only: the pages of region `id` written
  // since `pages.since_version` (a dirty-page tracker's, transparent mode).
  // With incremental dedup the others keep that version's digests instead
  // of being hashed, when it is the previous version of the checkpoint's
  // name and the region has not moved (ChangedPageMask); otherwise the note
  // is ignored. A later note for the same id replaces this one.
  void NoteChangedPages(int id, ChangedPages pages);
  // Collective. force: this version must get a durable copy (the SSD tier,
  // or the first enabled tier below memory) whatever the policy.
  Status Checkpoint(const std::string& name, int64_t version, bool force = false);
  // The last successful checkpoint call (version -1 before the first), with
  // the progress of its background ECC encode.
  CheckpointReport last_checkpoint();
  // Blocks until background work is done. A drain that failed does not
  // fail the wait (its version is committed on a faster tier): it is
  // logged as a warning and counted in last_wait().
  Status Wait();
  // What the drains did between the two last calls of Wait.
  const WaitCounts& last_wait() const { return last_wait_; }
  // Collective: whether a checkpoint is due by [placement] interval (the
  // same answer on every rank: due as soon as one rank finds it due).
  Result<bool> ShouldCheckpoint();
  Result<int64_t> RestartTest(const std::string& name, int64_t max_version);  // collective
  Result<RestartReport> Restart(const std::string& name, int64_t version);   // collective
  Result<std::string> RouteFile(const std::string& logical);
  Status Finalize();  // collective
  // Collective: removes every version of name from every tier (engine_delete.cc).
  Status Delete(const std::string& name);
  // Collective: removes one version of name from every tier; refused while
  // a kept version's pages refer to it ([dedup]). Deleting a version no
  // tier holds succeeds.
  Status DeleteVersion(const std::string& name, int64_t version);
  // Collective: a rank that refused a collective call before it reached the
  // engine (a NULL argument, unknown flags) takes part in the call's first
  // agreement with `refused`, so that every rank fails with its cause
  // instead of waiting for it. Every collective call starts with one.
  Status RefuseCall(const Status& refused) { return comm_->Agree(refused); }

  const Comm& comm() const { return *comm_; }
  // For collectives of the C API outside the pipelines (api/transparent_c.cc).
  Comm& mutable_comm() { return *comm_; }
  const Config& config() const { return config_; }

  // ECC sidecar: shards of memory-tier part files this engine has corrected
  // from their sidecars (restarts and drains) since it was created.
  uint64_t ecc_shards_corrected();

 private:
  static constexpr int64_t kNone = -1;  // "no version"

  Engine(std::unique_ptr<Comm> comm, const Config& config, Env* env, Clock* clock);
  Status Open();
  // kInvalidArgument for a bad checkpoint name or a negative version. Every
  // collective step that can fail on one rank ends in comm_->Agree, so that
  // every rank returns the failing rank's code and message.
  static Status ValidateRequest(const std::string& name, int64_t version);
  // Collective, right after a call's first agreement: the same checkpoint
  // name and version on every rank, or kInvalidArgument on every rank (a
  // version some ranks wrote as 2 and others as 3 could never be restored).
  Status AgreeOnTarget(const std::string& name, int64_t version);

  Tier* tier(TierKind kind) const { return tiers_[static_cast<int>(kind)].get(); }
  std::vector<Region> SortedRegions() const;
  // [dedup]: whether the regions, with region `id` of `bytes` in place of
  // any it had, fit in one rank's page index (DigestIndex::kMaxPages).
  Status CheckDedupPageCount(int id, uint64_t bytes) const;
  // Part files a rank's memory tier needs at once: the versions kept, the
  // one being written, and, with a lower tier, one more while the oldest
  // is still pinned by its drain.
  int MemorySlotsPerRank() const;
  // The fast placement level: the memory tier, or the pmem tier when memory
  // is off (null when both are); its slots are the ones made ahead.
  Tier* FastLevelTier() const;
  // Starts (or resizes) the memory tier's slot reservation for the
  // protected regions, in the background (engine.cc).
  void ReserveMemorySlots();

  // What a clean finalize did with this rank's memory tier (engine.cc).
  struct MemoryRelease {
    uint64_t released_copies = 0;  // deleted: a lower tier holds them or newer
    uint64_t released_bytes = 0;
    uint64_t slot_bytes = 0;       // parked slots released
    uint64_t kept_copies = 0;      // tiers.memory.keep_at_finalize
    uint64_t kept_bytes = 0;
    uint64_t only_copies = 0;      // kept: no lower tier holds them
    uint64_t only_bytes = 0;
  };
  // Deletes this rank's memory-tier copies that a lower tier holds
  // complete, or a newer version of (a restart takes the newer one), and
  // its parked slots, unless tiers.memory.keep_at_finalize.
  MemoryRelease ReleaseMemoryTier();
  // The newest version of name that this rank holds complete on a tier
  // below memory, or kNone.
  int64_t NewestSafeBelowMemory(const std::string& name) const;
  // Collective: rank 0 tells the user what the job keeps and where
  // (`newest`: per checkpoint name, the newest version complete per tier).
  void ReportKept(const MemoryRelease& mine,
                  const std::map<std::string, std::array<int64_t, kTierKinds>>& newest);
  // Routed files waiting for the next checkpoint: logical name -> path.
  Result<std::map<std::string, std::string>> PendingRoutedFiles() const;

  // Checkpoint after validation: decide the placement, write and commit on
  // that tier (falling to lower tiers when full), retention, drains.
  Status PlaceAndCommit(const std::string& name, int64_t version, bool force,
                        CheckpointReport* report);
  // The first enabled tier below `kind`, if any.
  std::optional<TierKind> NextTierBelow(TierKind kind) const;
  // Ok if this node's next version (node_bytes) fits in the capacity of
  // tier `kind`, after deleting this rank's oldest copies there that a
  // lower tier holds too; else kNoSpace saying how full it is.
  Status MakeRoomOnTier(TierKind kind, const std::string& name, uint64_t node_bytes);
  // The tier a placement means on this node: the first enabled tier at or
  // below memory (kMemory) or ssd (kSsd).
  TierKind TierFor(Placement placement) const;
  // The node's first rank appends the call to the placement history that
  // `cairn status` reads (runtime/placement_history.h).
  void AppendHistory(const std::string& name, const CheckpointReport& report);
  // [io] parallelism for tier `kind`, resolved at its first use (the
  // node's checkpoint size picks the energy optimum).
  const IoParallelism& IoParallelismFor(TierKind kind);
  // Collective, after a committed write to `kind` that took `seconds` here:
  // feeds the tuner of a measured default (the job's slowest rank counts).
  void RecordWriteTime(TierKind kind, double seconds);
  // Runs io on this rank in its turn: the node's ranks take turns in waves
  // of `parallelism` (0: all at once). Every rank of the node must call it.
  Status InWaves(int parallelism, const std::function<Status()>& io);
  // Writes this rank's copy of the version to tier (part, routed files,
  // manifest last); the bytes written.
  Result<uint64_t> WriteVersion(Tier& tier, const std::string& name, int64_t version);
  // Removes this rank's copy of the version from tier (manifest first).
  // Ranks sharing the tier may be writing the same version right now: the
  // directory is removed only when asked (when the version is retired).
  // kPark parks the part file as a slot for the next version; kDelete
  // frees its memory (finalize). Under mu_, as every tier change the
  // flusher's drains could race with.
  enum class PartFate { kPark, kDelete };
  Status RemoveCopy(Tier& tier, const std::string& name, int64_t version,
                    bool remove_empty_dir = true, PartFate part = PartFate::kPark) REQUIRES(mu_);
  // This rank's copies of `name` on tier k as retention sees them (copies a
  // job of another size wrote are left out); `committed` is the version
  // this run has just committed (kNone: none), which is pinned and makes
  // higher versions and earlier runs' copies of it superseded.
  std::vector<StoredVersion> StoredCopies(int k, const std::string& name, int64_t committed)
      REQUIRES(mu_);
  // Collective: of this rank's copies on each tier (`stored`), the versions
  // every rank holds complete.
  Result<std::array<std::vector<int64_t>, kTierKinds>> VersionsEverywhere(
      const std::array<std::vector<StoredVersion>, kTierKinds>& stored);
  // Collective: deletes this rank's copies that retention says to
  // (policy/retention.h), given what every rank holds complete; the newest
  // version each tier holds complete on every rank (kNone: none).
  Result<std::array<int64_t, kTierKinds>> ApplyRetention(const std::string& name,
                                                         int64_t committed);
  // Collective, for Delete and DeleteVersion: once no drain runs, removes
  // this rank's copies of name (every version, or only `only`) from every
  // tier, then one rank per tier directory removes what no rank of this job
  // owns there (the name's directory, or the version's); errors annotated
  // with `what`. The copies this rank removed.
  Result<int> RemoveFromEveryTier(const std::string& name, std::optional<int64_t> only,
                                  const std::string& what);
  // Drains a committed version to the tiers below `from` that take it.
  void ScheduleDrains(TierKind from, const std::string& name, int64_t version,
                      std::vector<Status>* sync_errors);
  // Whether version of name is above the one this run committed last: left
  // behind by a rollback, never to be kept.
  bool AbandonedLocked(const std::string& name, int64_t version) const REQUIRES(mu_);
  // One drain, pinning the source and the target until it is done or
  // superseded by `keep` newer drains to the same tier (Flusher::AddSuperseding).
  void ScheduleDrain(TierKind from, TierKind to, const std::string& name, int64_t version,
                     std::vector<Status>* sync_errors);
  Status Drain(TierKind from, TierKind to, const std::string& name, int64_t version);
  // One attempt at copying the version to `to`; on failure the partial
  // copy is removed.
  Status CopyVersionDown(TierKind from, TierKind to, const std::string& name, int64_t version);
  // Deletes this rank's oldest copy on `to` of a version older than
  // `version` that nothing pins; false if there is none.
  bool MakeRoomBelow(TierKind to, const std::string& name, int64_t version);
  // At start: this rank's newest copy of each checkpoint that a lower tier
  // lacks (an earlier run died during its final drain) is drained again.
  void ResumeAbandonedDrains();

  // One restart's cache of this rank's copies: each read and checked once
  // (engine_restart.cc).
  class RestartCopies;
  // A version every rank can recover, and the run whose copies to use
  // (every rank's copy must come from the same run: Manifest::run_id).
  struct AgreedVersion {
    int64_t version = kNone;
    uint64_t run_id = 0;
  };
  // This rank's recoverable versions (any tier), newest first, <= max, each
  // with the runs that wrote its usable copies.
  std::map<int64_t, std::set<uint64_t>, std::greater<>> LocalRecoverable(RestartCopies& copies,
                                                                         int64_t max_version);
  // Collective agreement on the newest version in every rank's set, <= max,
  // and on the newest run every rank has a copy of it from; version kNone
  // when there is none. A negative max_version means the newest.
  Result<AgreedVersion> AgreeOnVersion(RestartCopies& copies, int64_t max_version);
  // AgreeOnVersion below `version` (which failed): kNone below version 0.
  Result<AgreedVersion> AgreeOnOlderVersion(RestartCopies& copies, int64_t version);
  // Collective, when no version is recoverable: kMismatch naming the job
  // sizes if some rank passed over copies that a job of another size wrote,
  // else ok.
  Status OtherJobSizeError(RestartCopies& copies);
  // Collective, where no version can be restored: warns (rank 0) when some
  // ranks hold versions of the name nonetheless.
  Status WarnOfVersionsNotOnEveryRank(RestartCopies& copies, int64_t max_version);
  // A copy of one version that this rank has checked whole (phase one of a
  // restore), ready to be copied into the protected regions (phase two).
  struct StagedCopy {
    int tier = -1;                           // index into tiers_
    std::shared_ptr<const StagedPart> part;  // checked; what phase two copies from
    uint64_t bytes = 0;                      // data bytes (part and routed files)
    double created = 0;                      // its manifest's creation time
  };
  // Phase one of restoring `agreed` on this rank: the first copy, fastest
  // tier first, whose part and routed files check whole. Touches neither
  // application memory nor routed files. Copies of other runs, or whose
  // regions differ from the protected ones, are passed over.
  Status StageLocal(RestartCopies& copies, const AgreedVersion& agreed, StagedCopy* staged);
  // Checks every byte of copy (tier k, version), repairing its part from
  // the ECC sidecar if needed; fills *staged but its tier.
  Status VerifyCopy(RestartCopies& copies, int k, int64_t version,
                    const std::vector<Region>& regions, StagedCopy* staged);
  // Phase two: the routed files out, then the part into the regions.
  // REQUIRES: StageLocal(copies, that version, staged) succeeded on every rank.
  Status CopyStaged(RestartCopies& copies, int64_t version, const StagedCopy& staged);
  // Ok if some copy of `agreed` on this rank holds the protected regions;
  // kMismatch if copies exist but none does. Touches no application memory.
  Status CheckRestoreShape(RestartCopies& copies, const AgreedVersion& agreed);
  // Collective: fills report's newest and rollback fields, given the
  // restored version and this rank's creation time of it.
  Status MeasureRollback(RestartCopies& copies, double restored_created, RestartReport* report);

  // ECC sidecar (docs/format.md "ECC sidecar"; runtime/ecc_sidecar.h).
  // CheckCopy, or, if only the part's size is wrong and the copy has a
  // sidecar, the manifest for a repair (*part_size_wrong set).
  Result<Manifest> CheckCopyOrRepairable(const Tier& t, const std::string& name, int64_t version,
                                         bool* part_size_wrong);
  // Repairs a damaged part from its sidecar into a private buffer, counts
  // and logs the shards corrected; `what` names the pipeline ("restart",
  // "drain"); kCorrupt naming `cause` if it cannot be repaired.
  Result<RepairedPart> RepairAndCount(const Tier& t, const std::string& name, int64_t version,
                                      const FileEntry& part, const FileEntry& parity,
                                      const Status& cause, const char* what);
  // The part repaired from its sidecar, written and committed on `to`.
  Status DrainRepairedPart(const Tier& from, Tier& to, const std::string& name, int64_t version,
                           const FileEntry& part, const FileEntry& parity, const Status& cause);
  uint64_t ecc_shards_corrected_ GUARDED_BY(mu_) = 0;
  // Whether a copy of this engine's on `kind` gets an ECC sidecar.
  bool WantsEccSidecar(TierKind kind) const;
  // After the version committed on the memory tier: encodes its sidecar on
  // the flusher thread (engine_ecc.cc), pinning the copy meanwhile. A
  // queued encode of an older version of name is superseded: skipped,
  // that version stays unprotected.
  // `number` is the checkpoint call's (CheckpointReport::number).
  void ScheduleEccEncode(const std::string& name, int64_t version, int64_t number);
  // The job: encodes and commits the sidecar, then lists it in the
  // manifest with the time; unpins. Failure leaves the copy committed
  // without ECC (a warning).
  Status EncodeEccPinned(const std::string& name, int64_t version, int64_t number,
                         double committed);
  // Rewrites the manifest of `encoded` (the copy the sidecar was encoded
  // from) to list `sidecar`, unless the copy was replaced meanwhile; the
  // protection time written.
  Result<double> ListEccSidecar(Tier& t, const Manifest& encoded, const FileEntry& sidecar);
  // The last checkpoint call whose sidecar is encoded in the background,
  // for last_checkpoint().
  struct EccProgress {
    int64_t number = 0;           // the call's CheckpointReport::number
    double protected_after = -1;  // as CheckpointReport::ecc_protected_after
  };
  EccProgress ecc_progress_ GUARDED_BY(mu_);
  // (end of ECC sidecar)

  // Deduplication ([dedup]; engine_dedup*.cc, docs/dedup.md); null when off.
  // Collective: plans this version's pages before it is written on tier
  // `kind`, writing them there as they are hashed where it can
  // (EngineDedup::Plan).
  Status PlanDedup(const std::string& name, int64_t version, TierKind kind);
  // Collective: whether the agreed version's copies are paged (any rank's).
  Result<bool> IsDeduplicated(const std::string& name, const AgreedVersion& agreed);
  // Collective phase one of restoring a paged version: this rank's copy,
  // fastest tier first, with every reference resolved (from this rank's
  // older copies or from the ranks that store the pages); this rank's
  // outcome, after every exchange (the caller agrees).
  Status StageDeduplicated(const std::string& name, const AgreedVersion& agreed,
                           StagedCopy* staged);
  std::unique_ptr<EngineDedup> dedup_;
  ChangedPagesByRegion changed_pages_;  // for the next checkpoint (NoteChangedPages)

  // Cross-node redundancy (engine_redundancy_steps.cc; docs/redundancy.md).
  // Encodes the version just committed on tier `kind` with its groups, on
  // the flusher thread or (redundancy.sync, or no thread of its own for
  // MPI) now, collecting a failure in sync_errors. Pins the copy meanwhile.
  void ScheduleProtection(TierKind kind, const std::string& name, int64_t version,
                          std::vector<Status>* sync_errors);
  // The flusher's job for the ticket-th version scheduled on (kind, name):
  // encodes the newest version every rank has queued there, dropping the
  // older queued ones (coalesced, as drains are), or nothing when an
  // earlier job already took this ticket's version. Collective over the
  // encode comm exactly when it encodes; every rank decides the same.
  Status ProtectNewestQueued(TierKind kind, const std::string& name, uint64_t ticket);
  Status ProtectPinned(TierKind kind, const std::string& name, int64_t version);
  // Collective, before a restart agrees on a version: rebuilds the newest
  // protected version <= max_version (any when negative) that some rank
  // has no node-local copy of, from the groups, and writes the rebuilt
  // copies back; older versions are tried while a rebuild fails. Errors
  // only when the ranks cannot communicate; a rebuild that failed is
  // logged and kept in last_rebuild_error_.
  Status RebuildLostCopies(const std::string& name, int64_t max_version);
  // The newest version <= max_version this rank holds protected on a
  // node-local tier, or kNone.
  int64_t NewestProtected(const std::string& name, int64_t max_version) REQUIRES(mu_);
  std::unique_ptr<EngineRedundancy> redundancy_;
  // Versions waiting for their background encode on one (tier, name), in
  // the order they were scheduled, which is the same on every rank.
  struct ProtectionQueue {
    uint64_t scheduled = 0;  // tickets handed out: 1, 2, ...
    uint64_t taken = 0;      // tickets whose version was encoded or dropped
    std::deque<int64_t> versions;  // those of tickets taken + 1 .. scheduled
  };
  std::map<std::pair<int, std::string>, ProtectionQueue> protection_queues_ GUARDED_BY(mu_);
  // The last rebuild (of any version of last_rebuild_.name), reported by
  // the restart that restores that version.
  struct LastRebuild {
    std::string name;
    RebuildSummary summary;
  };
  LastRebuild last_rebuild_;
  Status last_rebuild_error_;

  std::unique_ptr<Comm> comm_;
  Config config_;
  Env* env_;
  Clock* clock_;
  std::array<std::unique_ptr<Tier>, kTierKinds> tiers_;
  // The job locks of the tier directories this rank locks for the job
  // (storage/job_lock.h); held until Finalize or destruction.
  std::vector<std::unique_ptr<FileLock>> tier_locks_;
  std::map<int, Region> regions_;
  std::string route_dir_;
  std::unique_ptr<PlacementController> controller_;
  PlacementOutcome last_outcome_;
  IntervalAdvisor interval_;
  struct SizedIoParallelism {
    IoParallelism chosen;
    bool sized = false;  // chosen knowing the node's checkpoint size
    // No profile on any rank: the write parallelism is being measured.
    std::optional<ParallelismTuner> tuner;
  };
  std::array<std::optional<SizedIoParallelism>, kTierKinds> io_parallelism_;
  CheckpointReport last_checkpoint_;
  // This run's identity in every manifest it writes: rank 0's wall clock in
  // nanoseconds at cairn_init, so that a later run's copies are the newer.
  uint64_t run_id_ = 0;
  int64_t checkpoints_ = 0;  // calls to Checkpoint that committed
  std::set<std::string> names_written_;
  // (name, tier kind) -> the newest version of name, and the tier it is on,
  // whose drain to that tier `every` skipped: drained at finalize where
  // finalize_newest asks for it. Application thread only.
  std::map<std::pair<std::string, int>, std::pair<TierKind, int64_t>> skipped_newest_;

  // Serializes tier changes between the application thread (commit,
  // retention) and the flusher thread (drains).
  Mutex mu_;
  // (tier, version) a drain will read or is reading; a multiset because
  // one source feeds drains to several tiers.
  std::multiset<std::pair<int, int64_t>> pinned_ GUARDED_BY(mu_);
  WaitCounts background_ GUARDED_BY(mu_);  // since the last Wait
  // The version of each name this run committed last: a higher version
  // still being drained was abandoned by a rollback (AbandonedLocked).
  std::map<std::string, int64_t> last_committed_ GUARDED_BY(mu_);
  WaitCounts last_wait_;  // what the last Wait saw
  std::unique_ptr<Flusher> flusher_;
};

}  // namespace cairn

#endif  // CAIRN_RUNTIME_ENGINE_H_
