#include "policy/retention.h"

#include <algorithm>
#include <functional>
#include <set>

namespace cairn {
namespace {

// Takes out of `doomed` every version that a version staying refers to,
// newest first, so that a version kept for a reference keeps its own.
void KeepReferenced(const std::vector<StoredVersion>& versions, std::vector<int64_t>* doomed) {
  std::set<int64_t> deleted(doomed->begin(), doomed->end());
  std::vector<const StoredVersion*> newest_first;
  for (const StoredVersion& v : versions) newest_first.push_back(&v);
  std::sort(newest_first.begin(), newest_first.end(),
            [](const StoredVersion* a, const StoredVersion* b) { return a->version > b->version; });
  std::set<int64_t> needed;
  for (const StoredVersion* v : newest_first) {
    if (needed.count(v->version) && !v->superseded) deleted.erase(v->version);
    if (deleted.count(v->version)) continue;
    needed.insert(v->references.begin(), v->references.end());
  }
  doomed->assign(deleted.begin(), deleted.end());
}

}  // namespace

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
  KeepReferenced(versions, &out);
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

}  // namespace cairn
