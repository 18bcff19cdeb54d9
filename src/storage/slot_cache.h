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
// Thread-safety: all methods are thread-safe.
#ifndef CAIRN_STORAGE_SLOT_CACHE_H_
#define CAIRN_STORAGE_SLOT_CACHE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "env/env.h"

namespace cairn {

class SlotCache {
 public:
  // Slots live in free_dir; this process uses and parks only files whose
  // names start with `owner` (its rank's prefix), so ranks sharing a node
  // never take each other's slots.
  SlotCache(Env* env, std::string free_dir, std::string owner, int max_free, bool mapped,
            const WriteOptions& file_options);

  // A writable file at `path` for exactly `size` bytes, made from a free
  // slot when there is one (else a new file).
  Result<std::unique_ptr<WritableFile>> Create(const std::string& path, uint64_t size);
  // `from` was renamed to `to`: keep its mapping under the new name.
  void Renamed(const std::string& from, const std::string& to);
  // The file at path is no longer needed: park it as a free slot, or delete
  // it when max_free slots are parked already.
  Status Retire(const std::string& path);
  // The file at path is gone (deleted by someone): drop its mapping.
  void Forget(const std::string& path);

 private:
  // REQUIRES: mu_ held.
  std::string TakeFreeSlotLocked();

  Env* env_;
  std::string free_dir_;
  std::string owner_;
  int max_free_;
  bool mapped_mode_;
  WriteOptions file_options_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<MappedFile>> mapped_;  // GUARDED_BY(mu_)
  int next_slot_ = 0;                                          // GUARDED_BY(mu_)
};

}  // namespace cairn

#endif  // CAIRN_STORAGE_SLOT_CACHE_H_
