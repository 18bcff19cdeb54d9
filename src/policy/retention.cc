#include "policy/retention.h"

#include <algorithm>
#include <functional>
#include <set>

namespace cairn {

std::vector<int64_t> VersionsToDelete(const std::vector<StoredVersion>& versions, int keep,
                                      const std::vector<int64_t>& everywhere) {
  std::vector<int64_t> newest_first = everywhere;
  std::sort(newest_first.begin(), newest_first.end(), std::greater<>());
  const std::set<int64_t> kept(newest_first.begin(),
                               newest_first.begin() + std::min<size_t>(newest_first.size(),
                                                                       static_cast<size_t>(std::max(keep, 0))));
  std::vector<int64_t> out;
  for (const StoredVersion& v : versions) {
    if (v.pinned) continue;
    if (v.superseded) {
      out.push_back(v.version);
      continue;
    }
    if (newest_first.empty() || v.version > newest_first.front() || kept.count(v.version)) continue;
    out.push_back(v.version);
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

}  // namespace cairn
