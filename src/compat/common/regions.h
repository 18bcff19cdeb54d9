// regions.h — the memory regions a peer layer hands to Cairn, and restoring a
// version whose regions are not (or not all) the ones protected now.
//
// Cairn restores a version only into protected regions of the same ids,
// counts and element sizes. The peers are looser: VeloC and FTI let an
// application ask for a variable's stored size after a restart began
// (VELOC_Recover_size, FTI_GetStoredSize), protect it afterwards, and
// recover variables one by one. StagedVersion restores a version into
// buffers of its own, shaped by the version's recorded layout
// (layout_journal.h), from which the layer copies out what is asked for.
// Not thread-safe (the peers' APIs are per process).
#ifndef CAIRN_COMPAT_COMMON_REGIONS_H_
#define CAIRN_COMPAT_COMMON_REGIONS_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "compat/common/outcome.h"

namespace cairn_compat {

// The shape of one region: count elements of elem_size bytes.
struct Shape {
  size_t count = 0;
  size_t elem_size = 0;
  size_t bytes() const { return count * elem_size; }
  bool operator==(const Shape&) const = default;
};

// Region id -> shape: what a version holds (or what is protected).
using Layout = std::map<int, Shape>;

// An application's region: where it is and its shape.
struct Region {
  void* ptr = nullptr;
  Shape shape;
};
using Regions = std::map<int, Region>;

Layout LayoutOf(const Regions& regions);

// What is protected in Cairn, kept equal to a wanted set with the fewest
// cairn_protect / cairn_unprotect calls (protecting again an unchanged
// region is skipped: Cairn keeps its slot).
class CairnRegions {
 public:
  // Makes Cairn's protected set exactly `wanted`.
  Status Sync(const Regions& wanted);
  const Regions& protected_regions() const { return registered_; }

 private:
  Regions registered_;
};

// cairn_restart of exactly `version` of `name`: a fallback to another version
// is an error here, since the caller asked for that version's memory and
// files (cairn_restart_test names the newest recoverable one).
Status RestoreExactly(const std::string& name, int version);

// A version restored into buffers of its own.
class StagedVersion {
 public:
  // Restores `version` of `name` into fresh buffers shaped by `layout`, then
  // leaves Cairn's protected set as `afterwards`. On failure holds nothing.
  Status Fetch(CairnRegions& cairn, const std::string& name, int version, const Layout& layout,
               const Regions& afterwards);
  // The restored bytes of region id, or nullptr if the version has none.
  const std::vector<char>* Find(int id) const;
  const Layout& layout() const { return layout_; }
  // The CAIRN_E_* code of the last Fetch's cairn_restart (CAIRN_SUCCESS if
  // it succeeded or was not reached): CAIRN_E_MISMATCH says the layout was
  // not the version's.
  int restore_error() const { return restore_error_; }
  void Clear();

 private:
  Layout layout_;
  int restore_error_ = 0;
  std::map<int, std::vector<char>> buffers_;
};

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_COMMON_REGIONS_H_
