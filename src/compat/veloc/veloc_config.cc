#include "compat/veloc/veloc_config.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "compat/common/ini_file.h"

namespace cairn_compat {
namespace {

// VeloC keys that Cairn reads no meaning from, with why.
const std::map<std::string, std::string>& IgnoredKeys() {
  static const std::map<std::string, std::string> keys = {
      {"watchdog_interval", "Cairn has no active backend to watch"},
      {"failure_domain", "Cairn takes nodes from the MPI topology ([topology])"},
      {"axl_type", "Cairn's drains are its own (direct I/O where the file system allows)"},
      {"aggregated", "Cairn writes one part file per rank"},
      {"meta", "checksums live inside Cairn's part files"},
      {"log_prefix", "Cairn logs to stderr (CAIRN_GENERAL_LOG_LEVEL)"},
      {"daos_pool", "DAOS is not a Cairn tier"},
      {"daos_cont", "DAOS is not a Cairn tier"},
      {"max_parallelism", "use CAIRN_IO_PARALLELISM"},
  };
  return keys;
}

// VeloC's "0: keep all" is Cairn's largest keep.
int64_t KeepCount(const std::string& value, bool* ok) {
  char* end = nullptr;
  long long n = std::strtoll(value.c_str(), &end, 10);
  *ok = !value.empty() && *end == '\0' && n >= 0;
  return n == 0 ? 1000000 : n;
}

// The seconds of an *_interval key (VeloC: < 0 off, 0 every checkpoint,
// > 0 at most one per that many seconds); one that is not an integer warns
// and counts as VeloC's default, 0.
long IntervalSeconds(const IniEntry& e, const std::string& where, CairnSettings* s) {
  char* end = nullptr;
  long seconds = std::strtol(e.value.c_str(), &end, 10);
  if (e.value.empty() || *end != '\0') {
    s->Warn(where, e.key + " = '" + e.value + "' is not an integer: taken as 0 (every checkpoint)");
    return 0;
  }
  return seconds;
}

// VeloC protects checkpoints with erasure coding across hosts (one parity
// over the ranks' failure domains) unless ec_interval < 0; seconds > 0 space
// the protected checkpoints out. Cairn's xor groups survive one lost node
// per group, for every version.
void ApplyEcInterval(const IniEntry& e, const std::string& where, CairnSettings* s) {
  const long seconds = IntervalSeconds(e, where, s);
  if (seconds < 0) return;
  s->RequestRedundancy("xor", 0, 1, where, /*by_default=*/false);
  if (seconds > 0) {
    s->Warn(where, "ec_interval = " + e.value + ": Cairn encodes every version (redundancy.scheme = "
                   "\"xor\"), not one every " + e.value + " seconds");
  }
}

// VeloC copies every checkpoint to persistent storage, none when
// persistent_interval < 0 (nor restores from there), and with seconds > 0
// at most one per interval.
void ApplyPersistentInterval(const IniEntry& e, const std::string& where, CairnSettings* s) {
  const long seconds = IntervalSeconds(e, where, s);
  if (seconds < 0) {
    s->Set("tiers.pfs.enabled", false);
  } else if (seconds > 0) {
    s->Warn(where, "persistent_interval = " + e.value + ": Cairn drains by checkpoint count, "
                   "not seconds: every version goes to persistent (set CAIRN_TIERS_PFS_EVERY "
                   "for every Nth)");
  }
}

Status ApplyKey(const IniEntry& e, const std::string& where, const std::string& suffix,
                CairnSettings* s) {
  const std::string key = Lower(e.key);
  if (key == "scratch") {
    s->SetNodeLocalPath(e.value + suffix);
  } else if (key == "persistent") {
    std::string dir = AbsolutePath(e.value) + suffix;
    s->Set("tiers.pfs.path", dir + "/cairn");
    s->Set("general.dir", dir);
  } else if (key == "mode") {
    std::string mode = Lower(e.value);
    if (mode != "sync" && mode != "async") {
      return Status::Error(where + ": mode '" + e.value + "' must be sync or async");
    }
    // sync: the checkpoint returns once the persistent copy is made.
    s->Set("tiers.ssd.flush", mode);
    s->Set("tiers.pfs.flush", mode);
  } else if (key == "max_versions" || key == "scratch_versions") {
    bool ok = false;
    int64_t keep = KeepCount(e.value, &ok);
    if (!ok) return Status::Error(where + ": " + e.key + " '" + e.value + "' is not an integer >= 0");
    s->Set(key == "max_versions" ? "tiers.pfs.keep" : "tiers." + s->node_local_tier() + ".keep",
           keep);
  } else if (key == "ec_interval") {
    ApplyEcInterval(e, where, s);
  } else if (key == "persistent_interval") {
    ApplyPersistentInterval(e, where, s);
  } else if (key == "chksum") {
    if (Lower(e.value) != "true") {
      s->Warn(where, "chksum = " + e.value + ": Cairn always checks CRC32C on every block");
    }
  } else if (auto it = IgnoredKeys().find(key); it != IgnoredKeys().end()) {
    s->Warn(where, "'" + e.key + "' has no Cairn meaning and is ignored: " + it->second);
  } else {
    s->Warn(where, "unknown VeloC key '" + e.key + "' is ignored");
  }
  return Status();
}

}  // namespace

Result<CairnSettings> TranslateVelocConfig(const std::string& path,
                                           const std::string& path_suffix) {
  auto entries = ReadIniFile(path, kVelocIni);
  if (!entries.ok()) return entries.status();
  CairnSettings settings("VeloC");
  // scratch first: scratch_versions names the tier scratch maps to.
  std::vector<IniEntry> ordered = *entries;
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const IniEntry& e) { return Lower(e.key) == "scratch"; });
  bool has_scratch = false, has_persistent = false;
  for (const auto& e : ordered) {
    std::string where = path + ":" + std::to_string(e.line);
    if (!e.section.empty()) where += " [" + e.section + "]";
    Status st = ApplyKey(e, where, path_suffix, &settings);
    if (!st.ok()) return st;
    has_scratch |= Lower(e.key) == "scratch";
    has_persistent |= Lower(e.key) == "persistent";
  }
  if (!has_scratch) return Status::Error(path + ": the required key 'scratch' is missing");
  bool has_ec_interval = std::any_of(ordered.begin(), ordered.end(),
                                     [](const IniEntry& e) { return Lower(e.key) == "ec_interval"; });
  if (!has_ec_interval) {
    // VeloC's default: erasure coding for every checkpoint.
    settings.RequestRedundancy("xor", 0, 1, path + " (no ec_interval: VeloC's default 0)",
                               /*by_default=*/true);
  }
  if (!has_persistent) settings.Set("tiers.pfs.enabled", false);
  // VeloC writes scratch, then persistent: the same two levels in Cairn,
  // unless scratch is the memory tier (then there is no ssd level).
  if (settings.node_local_tier() == "memory") settings.Set("tiers.ssd.enabled", false);
  return settings;
}

}  // namespace cairn_compat
