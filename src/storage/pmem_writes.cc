#include "storage/pmem_writes.h"

#include "env/pmem_map.h"
#include "pmem/flush.h"

namespace cairn {
namespace {

void StreamAndFence(void* dst, const void* src, size_t n) {
  const pmem::FlushOps& ops = pmem::Ops();
  ops.copy_nt(dst, src, n);
  ops.drain();
}

}  // namespace

Result<MappedWrites> PmemTierWrites(const std::string& root) {
  CAIRN_ASSIGN_OR_RETURN(PmemMedium medium, ProbePmemMedium(root));
  if (!medium.is_pmem) WarnOnceNotPmem(root, medium.granularity);
  MappedWrites writes;
  writes.copy = StreamAndFence;
  if (!medium.is_pmem && !medium.memory_backed) {
    // An ordinary file: the page cache must reach the device.
    writes.persist = [](MappedFile& map) { return map.Sync(); };
  }
  return writes;
}

}  // namespace cairn
