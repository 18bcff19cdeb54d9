#include "compat/fti/fti_config.h"

#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "compat/common/ini_file.h"

namespace cairn_compat {
namespace {

constexpr int64_t kFtiIoHdf5 = 5;  // ckpt_io of FTI's HDF5 output (FTI_IO_HDF5)

Result<int64_t> Integer(const IniEntry& e, const std::string& where) {
  char* end = nullptr;
  long long n = std::strtoll(e.value.c_str(), &end, 10);
  if (e.value.empty() || *end != '\0') {
    return Status::Error(where + ": " + e.key + " = '" + e.value + "' is not an integer");
  }
  return static_cast<int64_t>(n);
}

std::string LogLevel(int64_t verbosity) {
  if (verbosity <= 1) return "debug";
  if (verbosity == 2) return "info";
  if (verbosity == 3) return "warn";
  return "error";
}

// [basic] keys that map to Cairn or to the layer; false: not one of them.
Result<bool> ApplyBasic(const IniEntry& e, const std::string& where, FtiOptions* o) {
  const std::string key = Lower(e.key);
  CairnSettings& s = o->cairn;
  if (key == "ckpt_dir") {
    s.SetNodeLocalPath(e.value);
    return true;
  }
  if (key == "glbl_dir") {
    std::string dir = AbsolutePath(e.value);
    s.Set("tiers.pfs.path", dir + "/cairn");
    s.Set("general.dir", dir);
    return true;
  }
  static const std::set<std::string> kIntegers = {
      "head", "node_size", "ckpt_l1", "ckpt_l2", "ckpt_l3", "ckpt_l4", "keep_last_ckpt",
      "keep_l4_ckpt", "verbosity", "ckpt_io", "group_size"};
  if (!kIntegers.count(key)) return false;
  auto n = Integer(e, where);
  if (!n.ok()) return n.status();
  if (key == "head" && *n != 0) {
    s.Warn(where, "head = " + e.value + ": Cairn dedicates no head ranks; every rank computes and "
                  "drains run on a thread of each rank (FTI_COMM_WORLD is every rank)");
  } else if (key == "node_size" && *n > 0) {
    s.Set("topology.ranks_per_node", *n);  // FTI also takes consecutive ranks as a node
  } else if (key.rfind("ckpt_l", 0) == 0) {
    int level = key.back() - '0';
    o->interval_minutes[level] = static_cast<int>(*n);
    if ((level == 2 || level == 3) && *n > 0) o->redundancy_where[level] = where;
  } else if (key == "keep_last_ckpt") {
    o->keep_last_checkpoint = *n != 0;
  } else if (key == "keep_l4_ckpt" && *n != 0) {
    // FTI archives its level-4 checkpoints only. Cairn drains every version
    // to the global directory and keeps the same number of versions of every
    // checkpoint per tier: raising tiers.pfs.keep would keep every level's
    // versions there, and its public API cannot keep some versions of a name
    // while deleting the others at FTI_Finalize.
    s.Warn(where, "keep_l4_ckpt = " + e.value + ": Cairn cannot keep only the level-4 "
                  "checkpoints; FTI_Finalize keeps all checkpoints with keep_last_ckpt = 1, "
                  "none otherwise");
  } else if (key == "verbosity") {
    s.Set("general.log_level", LogLevel(*n));
  } else if (key == "ckpt_io" && *n != 1) {
    s.Warn(where, "ckpt_io = " + e.value + ": Cairn writes its own part files (POSIX, direct I/O)");
    o->hdf5_output = *n == kFtiIoHdf5;
  } else if (key == "group_size" && *n > 1) {
    o->group_size = static_cast<int>(*n);
  }
  return true;
}

// [advanced] keys that map to the layer; false: not one of them.
// fast_forward makes FTI_Snapshot's minutes pass that many times faster
// (FTI divides its iterations per minute by it), FTI's knob for testing
// checkpoint intervals in a short run; FTI_Init refuses a value outside
// 1..10, as FTI's does.
Result<bool> ApplyAdvanced(const IniEntry& e, const std::string& where, FtiOptions* o) {
  if (Lower(e.key) != "fast_forward") return false;
  auto n = Integer(e, where);
  if (!n.ok()) return n.status();
  if (*n < 1 || *n > 10) {
    return Status::Error(where + ": fast_forward = " + e.value + " is not 1..10 (FTI refuses it too)");
  }
  o->fast_forward = static_cast<int>(*n);
  return true;
}

// Cairn encodes every version of a job with one scheme: Reed-Solomon over
// groups of group_size nodes surviving half of each (FTI's level 3) when
// level 3 has an interval, else a partner copy (level 2) when level 2 has
// one. Levels 1 and 4 then get that protection too.
void RequestLevelRedundancy(FtiOptions* o) {
  if (!o->redundancy_where[3].empty()) {
    o->cairn.RequestRedundancy("rs", o->group_size, /*half the group*/ -1, o->redundancy_where[3],
                               /*by_default=*/false);
  } else if (!o->redundancy_where[2].empty()) {
    o->cairn.RequestRedundancy("partner", 0, 1, o->redundancy_where[2],
                               /*by_default=*/false);
  }
}

}  // namespace

Result<FtiOptions> ReadFtiConfig(const std::string& path) {
  auto entries = ReadIniFile(path, kFtiIni);
  if (!entries.ok()) return entries.status();
  FtiOptions o;
  // Keys without a Cairn meaning, by section: one warning per section.
  std::map<std::string, std::vector<std::string>> ignored;
  bool has_ckpt_dir = false;
  for (const auto& e : *entries) {
    std::string where = path + ":" + std::to_string(e.line);
    std::string section = Lower(e.section);
    has_ckpt_dir |= section == "basic" && Lower(e.key) == "ckpt_dir";
    if (section == "basic" || section == "advanced") {
      auto applied = section == "basic" ? ApplyBasic(e, where, &o) : ApplyAdvanced(e, where, &o);
      if (!applied.ok()) return applied.status();
      if (*applied) continue;
    }
    ignored[section].push_back(e.key);
  }
  for (const auto& [section, keys] : ignored) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    std::string why = section == "restart"
                          ? " (FTI's own bookkeeping: Cairn restarts when the previous run left a "
                            "recoverable checkpoint, which FTI_Finalize removes)"
                          : "";
    o.cairn.Warn(path + " [" + section + "]", "no Cairn meaning, ignored: " + list + why);
  }
  if (!has_ckpt_dir) return Status::Error(path + ": [basic] ckpt_dir is missing");
  RequestLevelRedundancy(&o);
  return o;
}

}  // namespace cairn_compat
