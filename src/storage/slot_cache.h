// SlotCache: a tier's reusable part files. Creating a fresh file costs an
// allocation per page or block: a fresh tmpfs file is written at a quarter
// of memcpy speed (DESIGN.md, performance notes), and O_DIRECT into a fresh
// ext4 file at half the speed of overwriting one in place. So a retired part
// file is not deleted but parked in the tier's .free/ directory, and the
// next part file of that rank is that slot, renamed into place and
// overwritten. On the memory tier (mapped mode) it is written through a
// mapping this process keeps, whose pages are already faulted in; the
// mapping follows its file across renames (it is tied to the inode), so the
// cache only tracks each file's current name. Elsewhere the slot is
// rewritten in place with `file_options`.
//
// Reservation (mapped mode): so that a run's first checkpoints need not
// wait for versions to retire, Reserve() makes the slots in the background,
// on a thread started through the Env: each slot file is made (or an
// unsuitable parked one resized) under a name Create never takes, mapped,
// faulted in page by page, and only then parked under a slot name. Create
// waits for a slot of its size while one is being made rather than write a
// fresh file beside it (both would fight for the same pages and cores).
// The same thread, in either mode, deletes the parked files beyond
// max_free, so that no checkpoint waits for a large file to be freed.
//
// Files in .free/: "<owner>slot<pid>.<n>", a parked slot, and
// "<owner>reserving<pid>.<n>", one being made (or left by a process that
// died making it: taken and remade like any parked file). A parked file is
// reused only if it is named so and is a regular file of this user, mode
// 0600 (Env::CheckPrivateFile), in a .free/ that is private to the user:
// never a symlink or a file someone else put there.
// Thread-safety: all methods are thread-safe.
#ifndef CAIRN_STORAGE_SLOT_CACHE_H_
#define CAIRN_STORAGE_SLOT_CACHE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "env/env.h"

namespace cairn {

// How bytes reach a mapped slot, and how a written slot is made durable:
// the memory tier copies with memcpy and has nothing to persist; the pmem
// tier streams past the caches and persists per its medium
// (storage/pmem_writes.h).
struct MappedWrites {
  void (*copy)(void* dst, const void* src, size_t n) = nullptr;  // null: memcpy
  std::function<Status(MappedFile& map)> persist;                // null: nothing
};

class SlotCache {
 public:
  // Whether the tier can hold `bytes` more (its capacity); asked before a
  // reservation makes or grows a slot file.
  using RoomCheck = std::function<bool(uint64_t bytes)>;

  // Slots live in free_dir; this process uses and parks only files whose
  // names start with `owner` (its rank's prefix), so ranks sharing a node
  // never take each other's slots. env must outlive the cache.
  SlotCache(Env* env, std::string free_dir, std::string owner, int max_free, bool mapped,
            const WriteOptions& file_options, RoomCheck room, ThreadOptions reserver);
  // Stops a reservation under way (the slot being made is parked as it is)
  // and joins its thread, then deletes the parked files beyond max_free
  // that the thread had not deleted yet.
  ~SlotCache();
  SlotCache(const SlotCache&) = delete;
  SlotCache& operator=(const SlotCache&) = delete;

  // Mapped mode: how files made from now on are written (default: memcpy).
  void SetMappedWrites(MappedWrites writes) EXCLUDES(mu_);
  // A writable file at `path` for exactly `size` bytes, made from a free
  // slot when there is one (else a new file); waits for a slot of that size
  // that the reservation is making.
  Result<std::unique_ptr<WritableFile>> Create(const std::string& path, uint64_t size)
      EXCLUDES(mu_);
  // Bytes the tier grows by if Create(size) is called now: 0 when a slot of
  // that size is parked or being made.
  uint64_t GrowthOfCreate(uint64_t size) EXCLUDES(mu_);
  // `from` was renamed to `to`: keep its mapping under the new name.
  void Renamed(const std::string& from, const std::string& to) EXCLUDES(mu_);
  // The file at path is no longer needed: park it as a free slot. Beyond
  // max_free parked slots, the background thread deletes one, off the
  // caller's path (or the call does, if no thread can start).
  Status Retire(const std::string& path) EXCLUDES(mu_);
  // The file at path is gone (deleted by someone): drop its mapping.
  void Forget(const std::string& path) EXCLUDES(mu_);

  // Mapped mode: in the background, have `count` slot files of each of
  // `sizes` (a part's, and its ECC sidecar's) mapped and faulted in by this
  // process, counting those that hold versions now. Replaces the previous
  // request. Best effort: stops where the tier's room or the file system
  // ends (later Creates make fresh files). No-op in unmapped mode.
  void Reserve(const std::vector<uint64_t>& sizes, int count) EXCLUDES(mu_);
  // Blocks until the reservation has nothing left to do, and the parked
  // files beyond max_free are deleted.
  void WaitReserved() EXCLUDES(mu_);
  // Holds the reservation back (the slot being made stops between two of
  // its pieces) until as many Resume calls: while a restart runs, which the
  // job waits for and which needs the memory bandwidth and the core that
  // faulting in slots takes. Create does not wait for a held slot.
  void Pause() EXCLUDES(mu_);
  void Resume() EXCLUDES(mu_);
  // Holds the deletion of surplus parked files (and UnmapLater's unmapping)
  // back until as many ReleaseDeletions calls; the reservation goes on.
  // A checkpoint holds them: on ext4 its own metadata writes (a manifest
  // deleted, a directory removed) waited 0.1-0.15 s each behind a large
  // file being freed.
  void HoldDeletions() EXCLUDES(mu_);
  void ReleaseDeletions() EXCLUDES(mu_);
  // Unmaps `map` on the reservation thread (after a pause ends), or now if
  // there is none: tearing down a large mapping's page table took ~0.3 of
  // a read() of the same bytes, which a restart need not wait for.
  void UnmapLater(std::unique_ptr<MappedFile> map) EXCLUDES(mu_);
  // Cancels the reservation and deletes every parked slot of the owner;
  // the bytes they held.
  uint64_t ReleaseParked() EXCLUDES(mu_);

 private:
  // A slot file the reservation makes: `from` (a parked file, or "" for a
  // new one) becomes `making`, then a parked slot.
  struct SlotJob {
    std::string from;
    std::string making;
    uint64_t size = 0;
    uint64_t growth = 0;  // bytes the tier grows by
    uint64_t generation = 0;
  };

  // Starts the background thread (reservation, trimming, unmapping) unless
  // it runs; whether it runs. A failure is logged as `without_it`.
  bool StartThreadLocked(const char* without_it) REQUIRES(mu_);
  // Whether name is one NewNameLocked makes for this owner.
  bool IsOwnSlot(const std::string& name) const;
  // IsOwnSlot, and the file is one Cairn made (logged when it is not).
  bool IsTrustedSlot(const std::string& name);
  // CreateDirs + CheckPrivateDir of free_dir_.
  Status CreateFreeDir();
  // The parked file Create(size) would take ("" if none): one mapped here
  // at that size if any; for a size the reservation does not make, the
  // smallest mapped here at a larger size; else any other but one mapped
  // here at another size that the reservation wants.
  std::string ChooseParkedLocked(uint64_t size) REQUIRES(mu_);
  // A parked slot, or a slot the reservation is making, of `size` bytes.
  bool SlotOfSizeComingLocked(uint64_t size) REQUIRES(mu_);
  bool MappedAt(const std::string& path, uint64_t size) const REQUIRES(mu_);
  // Parked slot names are unique per process and call.
  std::string NewNameLocked(const char* kind) REQUIRES(mu_);
  Result<std::unique_ptr<WritableFile>> OpenMappedLocked(const std::string& slot,
                                                         const std::string& path, uint64_t size)
      REQUIRES(mu_);

  // Own parked files, the one being made left out.
  int ParkedLocked() REQUIRES(mu_);
  // Deletes one parked file not mapped here while more than max_free are
  // parked (without the lock while deleting); whether it did.
  bool TrimOneLocked() REQUIRES(mu_);
  // The reservation thread's body.
  void ReserveLoop() EXCLUDES(mu_);
  // The next slot to make, or nullopt when the request is met.
  std::optional<SlotJob> NextJobLocked() REQUIRES(mu_);
  // Makes job.making a mapped, faulted-in file of job.size bytes (without
  // the lock: this is the slow part). Stops faulting early once the request
  // changes. Null when the tier has no room or the file cannot be made.
  std::shared_ptr<MappedFile> MakeSlot(const SlotJob& job) EXCLUDES(mu_);
  // Blocks while the reservation is paused, unless the job is superseded.
  void WaitWhilePaused(const SlotJob& job) EXCLUDES(mu_);
  // Parks the made slot (or deletes it if the reservation was released).
  void PublishLocked(const SlotJob& job, std::shared_ptr<MappedFile> map) REQUIRES(mu_);

  Env* env_;
  const ThreadOptions reserver_;  // the reservation thread's name and nice
  std::string free_dir_;
  std::string owner_;
  int max_free_;
  bool mapped_mode_;
  WriteOptions file_options_;
  RoomCheck room_;

  Mutex mu_;
  // Signalled when a slot is parked, the request changes, the reservation
  // goes idle, or the cache stops.
  CondVar changed_{&mu_};
  std::map<std::string, std::shared_ptr<MappedFile>> mapped_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<MappedFile>> to_unmap_ GUARDED_BY(mu_);
  MappedWrites writes_ GUARDED_BY(mu_);
  int next_slot_ GUARDED_BY(mu_) = 0;
  // The reservation's request: slot size -> count.
  std::map<uint64_t, int> wanted_ GUARDED_BY(mu_);
  bool reserving_ GUARDED_BY(mu_) = false;  // a request not yet met
  bool stopping_ GUARDED_BY(mu_) = false;
  int paused_ GUARDED_BY(mu_) = 0;          // Pause calls not yet resumed
  int deletions_held_ GUARDED_BY(mu_) = 0;  // HoldDeletions calls not yet released
  std::string making_ GUARDED_BY(mu_);      // the slot file being made, if any
  // Bumped whenever the slot being made is no longer wanted at its size;
  // read without the lock by MakeSlot to stop early.
  std::atomic<uint64_t> generation_{0};
  // Started by the first Reserve, or Retire beyond max_free; joined by the
  // destructor.
  std::unique_ptr<Thread> thread_ GUARDED_BY(mu_);
};

}  // namespace cairn

#endif  // CAIRN_STORAGE_SLOT_CACHE_H_
