#include "cli/verify_restorable.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "cli/output.h"

namespace cairn {

RestorableTotals CheckRestorable(const std::vector<CopyInfo>& copies,
                                 const std::set<const CopyInfo*>& unusable,
                                 const std::set<RankOfRun>& rebuildable, bool json) {
  // (name, version, run id) -> the run's size, the ranks held anywhere,
  // and the older versions its pages refer to ([dedup]).
  struct Run {
    int nranks = 0;
    std::set<int> held;
    std::set<int64_t> references;
  };
  std::map<std::tuple<std::string, int64_t, uint64_t>, Run> runs;
  for (const CopyInfo& c : copies) {
    // Only a manifest says which run and job size a copy belongs to.
    if (c.state != CopyState::kComplete) continue;
    Run& run = runs[{c.name, c.version, c.run_id}];
    run.nranks = std::max(run.nranks, c.nranks);
    if (unusable.count(&c) == 0) run.held.insert(c.rank);
    run.references.insert(c.manifest.references.begin(), c.manifest.references.end());
  }
  RestorableTotals totals;
  std::map<std::string, bool> name_restorable;
  // (name, version) of the runs found restorable; older versions first (the
  // map's order), so a version's references are judged before it.
  std::set<std::pair<std::string, int64_t>> restorable;
  for (const auto& [key, run] : runs) {
    const auto& [name, version, run_id] = key;
    std::vector<int> missing;
    for (int r = 0; r < run.nranks; ++r) {
      if (run.held.count(r) == 0 && rebuildable.count({name, version, run_id, r}) == 0) {
        missing.push_back(r);
      }
    }
    std::vector<int64_t> unresolved;
    for (int64_t v : run.references) {
      if (v < version && restorable.count({name, v}) == 0) unresolved.push_back(v);
    }
    const bool ok = missing.empty() && unresolved.empty();
    name_restorable[name] = name_restorable[name] || ok;
    if (ok) {
      restorable.insert({name, version});
      continue;
    }
    ++totals.versions_not_restorable;
    if (json) {
      PrintJsonLine({{"name", name}, {"version", version}, {"run_id", run_id},
                     {"nranks", run.nranks}, {"finding", "NOT-RESTORABLE"}, {"ranks", missing},
                     {"references_not_restorable", unresolved}});
    } else if (!missing.empty()) {
      fmt::print("NOT-RESTORABLE '{}' version {} (run {}, {} ranks): no usable copy of rank(s) "
                 "{} on any tier, and no redundancy group rebuilds them\n",
                 name, version, RunIdText(run_id), run.nranks, fmt::join(missing, ", "));
    } else {
      fmt::print("NOT-RESTORABLE '{}' version {} (run {}, {} ranks): its pages refer to "
                 "version(s) {}, which cannot be restored\n",
                 name, version, RunIdText(run_id), run.nranks, fmt::join(unresolved, ", "));
    }
  }
  for (const auto& [name, restorable] : name_restorable) {
    if (restorable) continue;
    totals.names_without_version.push_back(name);
    if (json) {
      PrintJsonLine({{"name", name}, {"finding", "NOTHING-RESTORABLE"}});
    } else {
      fmt::print("NOTHING-RESTORABLE '{}': no version has a usable copy of every rank; a "
                 "restart starts over\n",
                 name);
    }
  }
  return totals;
}

}  // namespace cairn
