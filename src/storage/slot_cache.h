// SlotCache: the memory tier's reusable part files. Creating a fresh tmpfs
// file costs a page allocation per 4 KiB and runs at a quarter of memcpy
// speed (DESIGN.md, performance notes); so a retired part file is not
// deleted but parked in the tier's .free/ directory, and the next part file
// of that rank is that slot, renamed into place and written through a
// mapping this process keeps, whose pages are already allocated and
// faulted in. The mapping follows its file across renames (it is tied to
// the inode), so the cache only has to track each file's current name.
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
  SlotCache(Env* env, std::string free_dir, std::string owner, int max_free);

  // A writable file at `path`, exactly `size` bytes, made from a free slot
  // when there is one (else a new file), written through a mapping.
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
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<MappedFile>> mapped_;  // GUARDED_BY(mu_)
  int next_slot_ = 0;                                          // GUARDED_BY(mu_)
};

}  // namespace cairn

#endif  // CAIRN_STORAGE_SLOT_CACHE_H_
