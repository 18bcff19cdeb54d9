#include "compat/scr/scr_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "compat/common/ini_file.h"

extern char** environ;

namespace cairn_compat {
namespace {

// A setting and where it came from ("scr.conf:3" or "SCR_FLUSH").
struct Setting {
  std::string value;
  std::vector<std::string> extra;
  std::string where;
};

// SCR parameters Cairn reads no meaning from, with why.
const std::map<std::string, std::string>& IgnoredParams() {
  static const std::map<std::string, std::string> params = {
      {"SCR_CHECKPOINT_OVERHEAD",
       "Cairn's interval is SCR_CHECKPOINT_INTERVAL/SECONDS or its failure model "
       "(CAIRN_PLACEMENT_INTERVAL=auto)"},
      {"SCR_CNTL_BASE", "Cairn keeps no control directory"},
      {"CNTLDIR", "Cairn keeps no control directory"},
      {"SCR_HALT_SECONDS", "Cairn has no halt conditions (SCR_Should_exit says 0)"},
      {"SCR_HALT_ENABLED", "Cairn has no halt conditions (SCR_Should_exit says 0)"},
      {"SCR_RUNS", "restarts are the job script's business with Cairn"},
      {"SCR_DB_ENABLE", "Cairn logs no database"}, {"SCR_DB_HOST", "Cairn logs no database"},
      {"SCR_DB_USER", "Cairn logs no database"}, {"SCR_DB_PASS", "Cairn logs no database"},
      {"SCR_DB_NAME", "Cairn logs no database"},
      {"SCR_LOG_ENABLE", "Cairn logs to stderr (CAIRN_GENERAL_LOG_LEVEL)"},
      {"SCR_GROUP", "Cairn groups ranks by its (virtual) node topology ([topology])"},
      {"STORE", "Cairn's tiers are [tiers.*]"},
      {"SCR_CRC_ON_COPY", "Cairn always checks CRC32C"},
      {"SCR_CRC_ON_FLUSH", "Cairn always checks CRC32C"},
      {"SCR_CRC_ON_DELETE", "Cairn always checks CRC32C"},
      {"SCR_MPI_BUF_SIZE", "no Cairn meaning"}, {"SCR_FILE_BUF_SIZE", "no Cairn meaning"},
      {"SCR_JOB_NAME", "no Cairn meaning"}, {"SCR_USER_NAME", "no Cairn meaning"},
      {"SCR_JOB_ID", "no Cairn meaning"}, {"SCR_ENABLE", "the Cairn layer is always enabled"},
      {"SCR_FETCH", "Cairn always fetches the newest recoverable checkpoint at restart"},
  };
  return params;
}

// Parameters that are read by the layer, not translated, or that are
// SCR_CONF_FILE itself: never warned about.
const std::set<std::string>& HandledParams() {
  static const std::set<std::string> params = {
      "SCR_CONF_FILE", "SCR_PREFIX", "SCR_CACHE_BASE", "CACHEDIR", "SCR_CACHE_SIZE",
      "SCR_FLUSH", "SCR_FLUSH_ASYNC", "SCR_COPY_TYPE", "SCR_SET_SIZE", "CKPT", "SCR_CHECKPOINT_INTERVAL",
      "SCR_CHECKPOINT_SECONDS", "SCR_DEBUG", "SCR_PREFIX_SIZE", "SCR_CACHE_BYPASS"};
  return params;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Result<std::map<std::string, Setting>> CollectSettings(const ScrConfigStore& app) {
  std::map<std::string, Setting> settings;
  for (const auto& [key, entry] : app.Latest()) {
    std::vector<std::string> extra;
    for (const auto& [child, value] : entry.children) extra.push_back(child + "=" + value);
    settings[key] = Setting{entry.value, extra, "SCR_Config(\"" + key + "=" + entry.value + "\")"};
  }
  std::string user_file;
  if (const char* env = std::getenv("SCR_CONF_FILE"); env != nullptr && *env) user_file = env;
  else if (auto set = settings.find("SCR_CONF_FILE"); set != settings.end()) user_file = set->second.value;
  if (const char* file = user_file.empty() ? nullptr : user_file.c_str()) {
    auto entries = ReadIniFile(file, kScrConf);
    if (!entries.ok()) return entries.status();
    for (const auto& e : *entries) {
      std::string key = Upper(e.key);
      // SCR keeps the first CACHEDIR (the fastest level); later ones are
      // further cache levels.
      if (key == "CACHEDIR" && settings.count(key) && settings[key].where.find(file) == 0) continue;
      settings[key] = Setting{e.value, e.extra, std::string(file) + ":" + std::to_string(e.line)};
    }
  }
  for (char** env = environ; *env != nullptr; ++env) {
    std::string entry = *env;
    size_t eq = entry.find('=');
    if (entry.rfind("SCR_", 0) != 0 || eq == std::string::npos) continue;
    std::string key = entry.substr(0, eq);
    settings[key] = Setting{entry.substr(eq + 1), {}, key};
  }
  return settings;
}

Result<int64_t> NonNegative(const Setting& s, const std::string& key) {
  char* end = nullptr;
  long long n = std::strtoll(s.value.c_str(), &end, 10);
  if (s.value.empty() || *end != '\0' || n < 0) {
    return Status::Error(s.where + ": " + key + " = '" + s.value + "' is not an integer >= 0");
  }
  return static_cast<int64_t>(n);
}

// The node-local cache: SCR_CACHE_BASE (or the first CACHEDIR) and its size.
void ApplyCache(const std::map<std::string, Setting>& all, ScrOptions* o) {
  auto base = all.find("SCR_CACHE_BASE");
  if (base == all.end()) base = all.find("CACHEDIR");
  if (base == all.end()) return;
  o->cairn.SetNodeLocalPath(base->second.value + "/scr");
  for (const auto& word : base->second.extra) {
    std::string key = word.substr(0, word.find('='));
    std::string value = word.substr(word.find('=') + 1);
    if (Lower(key) == "bytes") {
      o->cairn.Set("tiers." + o->cairn.node_local_tier() + ".capacity", value);
    } else {
      o->cairn.Warn(base->second.where, "'" + key + "' of the cache directory has no Cairn meaning");
    }
  }
}

Status ApplyParam(const std::string& key, const Setting& s, ScrOptions* o) {
  if (key == "SCR_PREFIX") {
    o->prefix = AbsolutePath(s.value);
  } else if (key == "SCR_CACHE_SIZE" || key == "SCR_PREFIX_SIZE" || key == "SCR_FLUSH" ||
             key == "SCR_CHECKPOINT_INTERVAL" || key == "SCR_CHECKPOINT_SECONDS") {
    auto n = NonNegative(s, key);
    if (!n.ok()) return n.status();
    if (key == "SCR_CACHE_SIZE") o->cairn.Set("tiers." + o->cairn.node_local_tier() + ".keep", std::max<int64_t>(*n, 1));
    if (key == "SCR_PREFIX_SIZE" && *n > 0) o->cairn.Set("tiers.pfs.keep", *n);
    if (key == "SCR_FLUSH") {
      // 0: never flush to the prefix; N: every Nth checkpoint.
      // SCR also flushes the last checkpoint at SCR_Finalize.
      if (*n == 0) {
        o->cairn.Set("tiers.pfs.enabled", false);
      } else {
        o->cairn.Set("tiers.pfs.every", *n);
        o->cairn.Set("tiers.pfs.finalize_newest", true);
      }
    }
    if (key == "SCR_CHECKPOINT_INTERVAL") o->checkpoint_interval = static_cast<int>(*n);
    if (key == "SCR_CHECKPOINT_SECONDS" && *n > 0) {
      o->checkpoint_seconds = static_cast<int>(*n);
      o->cairn.Set("placement.interval", *n);
    }
  } else if (key == "SCR_CACHE_BYPASS") {
    auto n = NonNegative(s, key);
    if (!n.ok()) return n.status();
    o->cache_bypass = *n != 0;
  } else if (key == "SCR_FLUSH_ASYNC") {
    o->cairn.Set("tiers.pfs.flush", std::string(s.value == "0" ? "sync" : "async"));
  } else if (key == "SCR_COPY_TYPE" || key == "SCR_SET_SIZE") {
    // Resolved together in ApplyCopyType.
  } else if (key == "SCR_DEBUG") {
    o->cairn.Set("general.log_level", std::string(s.value == "0" ? "warn" : "info"));
  }
  return Status();
}

// One "KEY", "KEY=" or "KEY=VALUE" of a SCR_Config string.
struct ConfigWord {
  std::string key;
  bool has_equals = false;
  std::string value;
};

std::vector<ConfigWord> SplitConfig(const std::string& text) {
  std::vector<ConfigWord> words;
  size_t pos = 0;
  auto skip_spaces = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  for (skip_spaces(); pos < text.size(); skip_spaces()) {
    ConfigWord w;
    while (pos < text.size() && text[pos] != '=' && !std::isspace(static_cast<unsigned char>(text[pos]))) {
      w.key += text[pos++];
    }
    skip_spaces();
    if (pos < text.size() && text[pos] == '=') {
      w.has_equals = true;
      ++pos;
      skip_spaces();
      // The value runs to the next blank: it may begin with or hold '='.
      while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos]))) w.value += text[pos++];
    }
    words.push_back(std::move(w));
  }
  return words;
}

// A redundancy descriptor "CKPT=<n> TYPE=XOR SET_SIZE=16 ...": its TYPE and
// SET_SIZE, as if set with SCR_COPY_TYPE and SCR_SET_SIZE (which win); its
// other words (INTERVAL, STORE, GROUP, ...) warn.
void ApplyDescriptor(const Setting& ckpt, std::map<std::string, Setting>* all, ScrOptions* o) {
  for (const auto& word : ckpt.extra) {
    std::string key = Upper(word.substr(0, word.find('=')));
    std::string value = word.substr(word.find('=') + 1);
    std::string as = key == "TYPE" ? "SCR_COPY_TYPE" : key == "SET_SIZE" ? "SCR_SET_SIZE" : "";
    if (as.empty()) {
      o->cairn.Warn(ckpt.where, "CKPT " + key + " has no Cairn meaning: one redundancy scheme "
                                "protects every version, on the tiers [placement] picks");
    } else if (!all->count(as)) {
      (*all)[as] = Setting{value, {}, ckpt.where + " (CKPT " + key + ")"};
    }
  }
}

// SCR_COPY_TYPE (SCR's default: XOR) and SCR_SET_SIZE become Cairn's
// redundancy scheme and group size; SINGLE has none.
Status ApplyCopyType(std::map<std::string, Setting> all, ScrOptions* o) {
  if (auto ckpt = all.find("CKPT"); ckpt != all.end()) ApplyDescriptor(ckpt->second, &all, o);
  auto type = all.find("SCR_COPY_TYPE");
  std::string scheme = type == all.end() ? "xor" : Lower(type->second.value);
  std::string where = type == all.end() ? "SCR_COPY_TYPE (unset: SCR's default XOR)" : type->second.where;
  if (scheme == "single") return Status();
  if (scheme != "partner" && scheme != "xor" && scheme != "rs") {
    return Status::Error(where + ": SCR_COPY_TYPE = '" + type->second.value +
                         "' is not SINGLE, PARTNER, XOR or RS");
  }
  int64_t set_size = 0;
  if (auto size = all.find("SCR_SET_SIZE"); size != all.end()) {
    auto n = NonNegative(size->second, "SCR_SET_SIZE");
    if (!n.ok()) return n.status();
    set_size = *n;
    if (scheme == "partner") o->cairn.Warn(size->second.where, "SCR_SET_SIZE does not apply to PARTNER");
  }
  // SCR's set size is a minimum, Cairn's group size a maximum (balanced).
  o->cairn.RequestRedundancy(scheme, scheme == "partner" ? 0 : static_cast<int>(set_size), 2, where,
                             /*by_default=*/type == all.end());
  return Status();
}

}  // namespace

Result<std::optional<std::vector<std::string>>> ScrConfigStore::Apply(const std::string& config) {
  using Query = std::optional<std::vector<std::string>>;
  std::vector<ConfigWord> words = SplitConfig(config);
  auto bad = [&](const std::string& why) {
    return Status::Error("'" + config + "': " + why + " (KEY=VALUE [CHILD=VALUE ...], KEY=, or KEY)");
  };
  if (words.empty()) return bad("empty");
  for (auto& w : words) {
    if (w.key.empty()) return bad("a '=' without a key");
    w.key = Upper(w.key);
  }
  const ConfigWord& first = words.front();
  const ConfigWord& last = words.back();
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (!words[i].has_equals || words[i].value.empty()) return bad("'" + words[i].key + "' needs a value");
  }
  if (!last.has_equals) {  // a query
    if (words.size() == 1) return Query(std::vector<std::string>{last.key});
    if (words.size() == 2) return Query(std::vector<std::string>{first.key, first.value, last.key});
    return bad("a query names one key or one child");
  }
  auto& entries = params_[first.key];
  if (last.value.empty()) {  // an unset
    if (words.size() == 1) {
      params_.erase(first.key);
    } else {
      for (auto& e : entries) {
        if (e.value == first.value) e.children.erase(last.key);
      }
    }
    return Query();
  }
  if (words.size() == 1) {  // a simple parameter: the latest value
    entries.assign(1, Entry{first.value, {}});
    return Query();
  }
  auto it = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.value == first.value; });
  Entry entry = it == entries.end() ? Entry{first.value, {}} : *it;
  if (it != entries.end()) entries.erase(it);
  for (size_t i = 1; i < words.size(); ++i) entry.children[words[i].key] = words[i].value;
  entries.push_back(std::move(entry));
  return Query();
}

std::map<std::string, ScrConfigStore::Entry> ScrConfigStore::Latest() const {
  std::map<std::string, Entry> latest;
  for (const auto& [key, entries] : params_) {
    if (!entries.empty()) latest[key] = entries.back();
  }
  return latest;
}

std::optional<std::string> ScrConfigStore::Child(const std::string& key, const std::string& value,
                                                 const std::string& child) const {
  auto it = params_.find(key);
  if (it == params_.end()) return std::nullopt;
  for (const auto& e : it->second) {
    if (e.value != value) continue;
    auto c = e.children.find(child);
    if (c != e.children.end()) return c->second;
  }
  return std::nullopt;
}

size_t ScrConfigStore::Count(const std::string& key) const {
  auto it = params_.find(key);
  return it == params_.end() ? 0 : it->second.size();
}

Result<std::optional<std::string>> LookupScrParam(const std::vector<std::string>& query,
                                                  const ScrConfigStore& app) {
  auto all = CollectSettings(app);
  if (!all.ok()) return all.status();
  auto it = all->find(query[0]);
  if (query.size() == 1) {
    // As SCR: a parameter set with several values ("STORE=/dev/shm ...",
    // "STORE=/ssd ...") has no one value to return.
    if (const size_t values = app.Count(query[0]); values > 1) {
      return Status::Error(query[0] + " has " + std::to_string(values) + " values: query one of them as '" +
                           query[0] + "=<value> <child>'");
    }
    if (it == all->end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second.value);
  }
  // A child: of the winning setting when it has that value, else as set here.
  if (it != all->end() && it->second.value == query[1]) {
    for (const auto& word : it->second.extra) {
      size_t eq = word.find('=');
      if (Upper(word.substr(0, eq)) == query[2]) return std::optional<std::string>(word.substr(eq + 1));
    }
  }
  return app.Child(query[0], query[1], query[2]);
}

Result<ScrOptions> ReadScrOptions(const ScrConfigStore& app) {
  auto all = CollectSettings(app);
  if (!all.ok()) return all.status();
  ScrOptions o;
  o.prefix = AbsolutePath(".");
  // SCR keeps every dataset flushed to the prefix unless SCR_PREFIX_SIZE
  // says how many (an older one stays offered when newer ones fail).
  o.cairn.Set("tiers.pfs.keep", int64_t{1000000});
  ApplyCache(*all, &o);
  for (const auto& [key, s] : *all) {
    if (HandledParams().count(key)) {
      Status st = ApplyParam(key, s, &o);
      if (!st.ok()) return st;
    } else if (auto it = IgnoredParams().find(key); it != IgnoredParams().end()) {
      o.cairn.Warn(s.where, key + " has no Cairn meaning and is ignored: " + it->second);
    } else {
      o.cairn.Warn(s.where, "unknown SCR parameter " + key + " is ignored");
    }
  }
  Status copy = ApplyCopyType(*all, &o);
  if (!copy.ok()) return copy;
  // SCR keeps checkpoints under the prefix in .scr/; Cairn's persistent
  // tier lives there too.
  o.cairn.Set("general.dir", o.prefix + "/.scr");
  o.cairn.Set("tiers.pfs.path", o.prefix + "/.scr/cairn");
  return o;
}

}  // namespace cairn_compat
