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
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "comm/comm.h"
#include "env/env.h"
#include "format/manifest.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/part_io.h"
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
  int versions_rolled_back = 0;  // older versions tried after `requested` failed
};

class Engine {
 public:
  // Collective. env and clock must outlive the engine.
  static Result<std::unique_ptr<Engine>> Create(std::unique_ptr<Comm> comm, const Config& config,
                                                Env* env, Clock* clock);
  ~Engine();

  Status Protect(int id, void* ptr, uint64_t count, uint64_t elem_size);
  Status Unprotect(int id);
  Status Checkpoint(const std::string& name, int64_t version);  // collective
  Status Wait();
  Result<int64_t> RestartTest(const std::string& name, int64_t max_version);  // collective
  Result<RestartReport> Restart(const std::string& name, int64_t version);   // collective
  Result<std::string> RouteFile(const std::string& logical);
  Status Finalize();  // collective

  const Comm& comm() const { return *comm_; }
  const Config& config() const { return config_; }

  // ECC sidecar: shards of memory-tier part files this engine has corrected
  // from their sidecars (restarts and drains) since it was created.
  uint64_t ecc_shards_corrected();

 private:
  static constexpr int64_t kNone = -1;  // "no version"

  Engine(std::unique_ptr<Comm> comm, const Config& config, Env* env, Clock* clock);
  Status Open();

  Tier* tier(TierKind kind) const { return tiers_[static_cast<int>(kind)].get(); }
  std::vector<Region> SortedRegions() const;
  // Routed files waiting for the next checkpoint: logical name -> path.
  Result<std::map<std::string, std::string>> PendingRoutedFiles() const;

  // Writes this rank's copy of the version to tier (part, routed files,
  // manifest last).
  Status WriteVersion(Tier& tier, const std::string& name, int64_t version);
  // Removes this rank's copy of the version from tier (manifest first).
  // Ranks sharing the tier may be writing the same version right now: the
  // directory is removed only when asked (when the version is retired).
  Status RemoveCopy(Tier& tier, const std::string& name, int64_t version,
                    bool remove_empty_dir = true);
  // Collective: agrees whether every rank succeeded; on failure returns the
  // local error or one naming a failed rank. *any_no_space tells whether
  // some rank failed because its tier was full.
  Status Agree(const Status& local, bool* any_no_space);
  // Collective: the newest version each tier holds complete on every rank.
  Result<std::array<int64_t, kTierKinds>> GloballyCompleteVersions(const std::string& name);
  void ApplyRetention(const std::string& name, const std::array<int64_t, kTierKinds>& global);
  void ScheduleDrains(TierKind from, const std::string& name, int64_t version,
                      std::vector<Status>* sync_errors);
  Status Drain(TierKind from, TierKind to, const std::string& name, int64_t version);

  // This rank's recoverable versions (any tier), newest first, <= max.
  std::set<int64_t, std::greater<>> LocalRecoverable(const std::string& name, int64_t max_version);
  // Collective agreement on the newest version in every rank's set, <= max.
  Result<int64_t> AgreeOnVersion(const std::string& name, int64_t max_version);
  // This rank's part of restoring `version`; *source names the tier used.
  Status RestoreLocal(const std::string& name, int64_t version, std::string* source,
                      uint64_t* bytes);
  Status CheckRestoreShape(const std::string& name, int64_t version);

  // ECC sidecar (docs/format.md "ECC sidecar"; runtime/ecc_sidecar.h).
  // CheckCopy, or, if only the part's size is wrong and the copy has a
  // sidecar, the manifest for a repair (*part_size_wrong set).
  Result<Manifest> CheckCopyOrRepairable(const Tier& t, const std::string& name, int64_t version,
                                         bool* part_size_wrong);
  // The part repaired from its sidecar into a private buffer, then read into
  // the regions; kCorrupt naming `cause` if it cannot be repaired.
  // Repairs a damaged part from its sidecar, counts and logs the shards
  // corrected; `what` names the pipeline ("restart", "drain").
  Result<RepairedPart> RepairAndCount(const Tier& t, const std::string& name, int64_t version,
                                      const FileEntry& part, const FileEntry& parity,
                                      const Status& cause, const char* what);
  Status RestoreRepairedPart(const Tier& t, const std::string& name, int64_t version,
                             const FileEntry& part, const FileEntry& parity,
                             const std::vector<Region>& regions, const Status& cause);
  // The part repaired from its sidecar, written and committed on `to`.
  Status DrainRepairedPart(const Tier& from, Tier& to, const std::string& name, int64_t version,
                           const FileEntry& part, const FileEntry& parity, const Status& cause);
  uint64_t ecc_shards_corrected_ = 0;  // GUARDED_BY(mu_)
  // (end of ECC sidecar)

  std::unique_ptr<Comm> comm_;
  Config config_;
  Env* env_;
  Clock* clock_;
  std::array<std::unique_ptr<Tier>, kTierKinds> tiers_;
  std::map<int, Region> regions_;
  std::string route_dir_;
  int64_t checkpoints_ = 0;  // calls to Checkpoint that committed
  std::set<std::string> names_written_;

  // Serializes tier changes between the application thread (commit,
  // retention) and the flusher thread (drains).
  std::mutex mu_;
  // (tier, version) a drain will read or is reading; a multiset because
  // one source feeds drains to several tiers.
  std::multiset<std::pair<int, int64_t>> pinned_;  // GUARDED_BY(mu_)
  std::unique_ptr<Flusher> flusher_;
};

}  // namespace cairn

#endif  // CAIRN_RUNTIME_ENGINE_H_
