// The pmem tier's writes (docs/pmem.md, "The pmem tier"): a part file is a
// reused slot mapped into the process, filled with a non-temporal copy
// (streaming stores bypass the caches, so nothing is left to flush but the
// unaligned edges, which the copy flushes itself) and fenced at the end of
// each append; Sync() then adds what the medium needs beyond the CPU: nothing
// on persistent memory (DAX) or tmpfs, msync on an ordinary file.
// Thread-safety: the writes are thread-safe; each append fences its own
// thread's streaming stores.
#ifndef CAIRN_STORAGE_PMEM_WRITES_H_
#define CAIRN_STORAGE_PMEM_WRITES_H_

#include <string>

#include "base/status.h"
#include "storage/slot_cache.h"

namespace cairn {

// Probes the medium under root (env/pmem_map.h) and says once if it is not
// persistent memory. kIo naming root if the probe fails.
Result<MappedWrites> PmemTierWrites(const std::string& root);

}  // namespace cairn

#endif  // CAIRN_STORAGE_PMEM_WRITES_H_
