// Tier: one storage level (memory, pmem, ssd or pfs) as a directory tree of
// checkpoint versions: <root>/<name>/v<version>/<file>. A Tier knows places
// and the commit protocol (temporary name, persist, rename, persist the
// directory); it knows nothing of what the bytes mean (that is format/).
// Each process uses its own Tier objects; several processes may share one
// root (ranks of one node, or the shared pfs), each writing its own files.
// Thread-safety: a Tier may be used from the application thread and the
// flusher thread at once; its only mutable state, the slot cache, locks.
#ifndef CAIRN_STORAGE_TIER_H_
#define CAIRN_STORAGE_TIER_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "env/env.h"
#include "storage/slot_cache.h"

namespace cairn {

// The largest version a checkpoint can have: the C API names versions as int.
inline constexpr int64_t kMaxVersion = std::numeric_limits<int>::max();

// A file under construction; visible under its final name only after
// Commit(). Destroying it uncommitted removes the temporary file.
class PendingFile {
 public:
  // slots: where the file came from, if it is a memory-tier slot (or null).
  PendingFile(Env* env, std::unique_ptr<WritableFile> file, std::string tmp, std::string path,
              bool persist, SlotCache* slots);
  ~PendingFile();
  WritableFile& file() { return *file_; }
  // Persists (if the tier requires it), closes and renames into place, then
  // persists the directory.
  Status Commit();

 private:
  Env* env_;
  std::unique_ptr<WritableFile> file_;
  std::string tmp_;
  std::string path_;
  bool persist_;
  SlotCache* slots_;
  bool committed_ = false;
};

class Tier {
 public:
  // root is the expanded directory of this process's node.
  Tier(Env* env, TierKind kind, std::string root, const TierConfig& config);

  TierKind kind() const { return kind_; }
  const char* name() const { return TierKindName(kind_); }
  const std::string& root() const { return root_; }
  const TierConfig& config() const { return config_; }
  Env* env() const { return env_; }
  // Whether writes must be made durable (fsync; on the pmem tier's mapped
  // slots a fence and what the medium needs): false for tmpfs memory.
  bool persists() const { return kind_ != TierKind::kMemory; }
  // Memory and pmem: part files are slots mapped into the process and
  // filled by copying (pmem: streaming, storage/pmem_writes.h).
  bool MapsSlots() const { return kind_ == TierKind::kMemory || kind_ == TierKind::kPmem; }

  // <root>/<name>/v<10 digits>: the one place the directory naming lives.
  std::string VersionDir(const std::string& name, int64_t version) const;
  // The version whose directory is called dir_name, or nullopt if VersionDir
  // makes no such name (other files, or digits beyond kMaxVersion): the one
  // parser of version directory names.
  static std::optional<int64_t> ParseVersionDirName(std::string_view dir_name);
  std::string FilePath(const std::string& name, int64_t version, const std::string& file) const;

  // Starts writing `file` of a version (creating directories as needed).
  // expected_size lets the tier refuse early when it is full.
  Result<std::unique_ptr<PendingFile>> Create(const std::string& name, int64_t version,
                                              const std::string& file, uint64_t expected_size);
  // Writes a small file through the whole commit protocol.
  Status PutFile(const std::string& name, int64_t version, const std::string& file,
                 const std::string& bytes);
  Result<std::unique_ptr<ReadableFile>> Open(const std::string& name, int64_t version,
                                             const std::string& file) const;
  // The whole file; kInvalidArgument naming it when it is longer than
  // max_bytes (a file read from storage is never trusted to be small).
  Result<std::string> GetFile(const std::string& name, int64_t version, const std::string& file,
                              uint64_t max_bytes = std::numeric_limits<uint64_t>::max()) const;
  Status Remove(const std::string& name, int64_t version, const std::string& file);
  // Removes a file that is no longer needed; with slots enabled, a large
  // file of the slot owner is parked for reuse instead of deleted.
  Status Retire(const std::string& name, int64_t version, const std::string& file);
  // Reuse large files of `owner` (a rank's file-name prefix) through a
  // SlotCache under FreeSlotDir(), keeping at most max_free parked; the
  // reservation thread runs as `reserver` says.
  void EnableSlots(const std::string& owner, int max_free,
                   const ThreadOptions& reserver = ThreadOptions{.name = "cairn-slots"});
  // <root>/.free: where retired part files are parked for reuse.
  std::string FreeSlotDir() const;
  // Memory and pmem tiers with slots: in the background, have `count`
  // files of each of `sizes` bytes (a part's, its ECC sidecar's) of the
  // slot owner mapped and faulted in (SlotCache::Reserve), so that even a
  // run's first checkpoints copy at memcpy speed. Slots count against the
  // capacity: only as many are made as fit. No-op elsewhere; sizes too
  // small to be worth a slot are left out.
  void ReserveSlots(const std::vector<uint64_t>& sizes, int count);
  // Blocks until ReserveSlots has nothing left to do.
  void WaitForSlots();
  // Unmaps `map` in the background where the tier has a slot thread
  // (SlotCache::UnmapLater), else now: for a restart's mapping of a part.
  void UnmapLater(std::unique_ptr<MappedFile> map) const;
  // What a SlotHold holds back of the tier's slot thread while it lives.
  enum class SlotWork {
    // Everything (SlotCache::Pause): a restart holds the fast tier's, so
    // that faulting in slots does not take the memory bandwidth and the
    // core the restart needs.
    kAll,
    // The deletion of surplus slot files (SlotCache::HoldDeletions): a
    // checkpoint holds every tier's; the reservation goes on.
    kDeletions,
  };
  // No-op for a null tier or one without slots.
  class SlotHold {
   public:
    SlotHold(Tier* tier, SlotWork work);
    ~SlotHold();
    SlotHold(const SlotHold&) = delete;
    SlotHold& operator=(const SlotHold&) = delete;

   private:
    SlotCache* slots_;
    SlotWork work_;
  };
  // Cancels the reservation and deletes the owner's parked slots; the bytes
  // they held (0 without slots).
  uint64_t ReleaseParkedSlots();
  // Removes what is empty under root (checkpoint names, .free, .route), then
  // root and each parent directory made from a placeholder of the tier's
  // path ({user}, {dirkey}, {node}, ...), never the literal part of the
  // path the user wrote. Best effort: ranks sharing the tier may still
  // have files in it.
  void RemoveEmptyDirectories();
  // Removes the version directory if nothing is left in it (best effort).
  Status RemoveVersionDirIfEmpty(const std::string& name, int64_t version);

  // Creates root (0700, with its parents) and checks that it and every
  // directory above it made for Cairn (OwnedDirs) are private to the user
  // (Env::CheckPrivateDir): one that another user made first, in a
  // world-writable place such as /dev/shm, is refused, never used. kIo
  // naming the path, its owner and mode.
  Status PrepareRoot();
  // Root and the directories above it that Cairn makes, innermost first:
  // those named from a placeholder of the tier's path ({user}, {node},
  // {dirkey}) and everything below the data directory {dir}. The literal
  // part the user wrote and {dir} itself are the user's.
  std::vector<std::string> OwnedDirs() const;

  // Checkpoint names stored here, and the versions (directories) of one.
  Result<std::vector<std::string>> Names() const;
  Result<std::vector<int64_t>> Versions(const std::string& name) const;
  Result<std::vector<std::string>> Files(const std::string& name, int64_t version) const;
  // Bytes of all files under root (all ranks of this node), parked slots
  // included: what counts against the capacity.
  Result<uint64_t> UsedBytes() const;
  // Bytes held by checkpoint versions only: the room a new version has is
  // capacity - VersionBytes(), since it is written into a parked slot or
  // parked slots are released to make room for it.
  Result<uint64_t> VersionBytes() const;

 private:
  Env* env_;
  TierKind kind_;
  std::string root_;
  TierConfig config_;
  // kNoSpace naming the tier unless `bytes` more fit in its capacity; when
  // they do not, this owner's parked slots are released first.
  Status EnsureRoom(uint64_t bytes);
  // CreateDirs, then CheckPrivateDir on the name's and the version's
  // directory (each made or reused for Cairn).
  Status CreateVersionDir(const std::string& name, int64_t version);
  // Bytes of the files in one directory (missing: 0).
  uint64_t DirBytes(const std::string& dir) const;

  std::string slot_owner_;
  // Declared last: destroyed (its reservation thread joined) first, while
  // the members its room check reads are still alive.
  std::unique_ptr<SlotCache> slots_;
};

// The node whose directory under TierPathNodeParent is called dir_name: the
// decimal form std::to_string gives a node number in int range, or nullopt
// for anything else ("007" names no node's directory; "99999999999" is
// beyond int), so a stray directory is skipped instead of misread.
std::optional<int> ParseNodeDirName(std::string_view dir_name);

}  // namespace cairn

#endif  // CAIRN_STORAGE_TIER_H_
