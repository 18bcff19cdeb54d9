#include "policy/retention.h"

#include <algorithm>

namespace cairn {

std::vector<int64_t> VersionsToDelete(const std::vector<StoredVersion>& versions, int keep,
                                      int64_t globally_complete) {
  std::vector<int64_t> out;
  if (globally_complete < 0) return out;
  std::vector<StoredVersion> newest_first = versions;
  std::sort(newest_first.begin(), newest_first.end(),
            [](const StoredVersion& a, const StoredVersion& b) { return a.version > b.version; });
  int kept = 0;
  for (const auto& v : newest_first) {
    if (v.complete && kept < keep) {
      ++kept;
      continue;
    }
    if (v.version >= globally_complete || v.pinned) continue;
    out.push_back(v.version);
  }
  return out;
}

}  // namespace cairn
