#include "base/config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include <toml++/toml.h>

extern char** environ;

namespace cairn {
namespace {

// Variables that are not keys but are still Cairn's.
const std::set<std::string> kOtherEnvNames = {"CAIRN_CONFIG", "CAIRN_DIR"};

Status BadValue(const std::string& key, const std::string& value, const std::string& why) {
  return Error(Code::kConfig, "config key '{}': bad value '{}': {}", key, value, why);
}

Result<long long> ParseInteger(const std::string& key, const std::string& text, long long lo,
                               long long hi) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) {
    return BadValue(key, text, "expected an integer");
  }
  if (v < lo || v > hi) {
    return BadValue(key, text, fmt::format("expected {} to {}", lo, hi));
  }
  return v;
}

Result<bool> ParseBool(const std::string& key, const std::string& text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return BadValue(key, text, "expected true or false");
}

// Helpers that build ConfigKey entries; `field` selects the member to set.
using StringField = std::function<std::string&(Config&)>;
using IntField = std::function<int&(Config&)>;

ConfigKey StringKey(std::string section, std::string name, std::string fallback,
                    std::string doc, StringField field) {
  std::string full = section + "." + name;
  return {section, name, "string", fallback, doc,
          [field, full](Config& c, const std::string& v) -> Status {
            if (v.empty()) return BadValue(full, v, "must not be empty");
            field(c) = v;
            return Status::Ok();
          }};
}

ConfigKey IntKey(std::string section, std::string name, std::string fallback, std::string doc,
                 long long lo, long long hi, IntField field) {
  std::string full = section + "." + name;
  return {section, name, fmt::format("int ({}..{})", lo, hi), fallback, doc,
          [field, full, lo, hi](Config& c, const std::string& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(long long n, ParseInteger(full, v, lo, hi));
            field(c) = static_cast<int>(n);
            return Status::Ok();
          }};
}

ConfigKey BoolKey(std::string section, std::string name, std::string fallback, std::string doc,
                  std::function<bool&(Config&)> field) {
  std::string full = section + "." + name;
  return {section, name, "bool", fallback, doc,
          [field, full](Config& c, const std::string& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(bool b, ParseBool(full, v));
            field(c) = b;
            return Status::Ok();
          }};
}

ConfigKey SizeKey(std::string section, std::string name, std::string fallback, std::string doc,
                  std::function<uint64_t&(Config&)> field) {
  std::string full = section + "." + name;
  return {section, name, "size", fallback, doc,
          [field, full](Config& c, const std::string& v) -> Status {
            auto size = ParseSize(v);
            if (!size.ok()) return BadValue(full, v, size.status().message());
            field(c) = *size;
            return Status::Ok();
          }};
}

template <typename E>
ConfigKey EnumKey(std::string section, std::string name, std::string fallback, std::string doc,
                  std::vector<std::pair<std::string, E>> choices,
                  std::function<E&(Config&)> field) {
  std::string full = section + "." + name;
  std::string listed;
  for (const auto& [text, value] : choices) listed += (listed.empty() ? "" : ", ") + text;
  return {section, name, listed, fallback, doc,
          [field, full, choices, listed](Config& c, const std::string& v) -> Status {
            for (const auto& [text, value] : choices) {
              if (text == v) {
                field(c) = value;
                return Status::Ok();
              }
            }
            return BadValue(full, v, "expected one of " + listed);
          }};
}

void AddTierKeys(std::vector<ConfigKey>& keys, TierKind kind, const std::string& path,
                 const std::string& capacity, const std::string& what) {
  std::string section = std::string("tiers.") + TierKindName(kind);
  int i = static_cast<int>(kind);
  keys.push_back(BoolKey(section, "enabled", "true",
                         "use this tier (" + what + ")",
                         [i](Config& c) -> bool& { return c.tiers[i].enabled; }));
  keys.push_back(StringKey(section, "path", path,
                           "directory of this tier; {dir} {node} {user} {dirkey} are expanded",
                           [i](Config& c) -> std::string& { return c.tiers[i].path; }));
  keys.push_back(SizeKey(section, "capacity", capacity,
                         "bytes this tier may hold per node (0: what the device has)",
                         [i](Config& c) -> uint64_t& { return c.tiers[i].capacity; }));
  keys.push_back(IntKey(section, "keep", "0",
                        "complete versions kept on this tier (0: [retention] keep)", 0, 1000000,
                        [i](Config& c) -> int& { return c.tiers[i].keep; }));
  if (kind == TierKind::kMemory) {
    keys.push_back(EnumKey<EccMode>(
        section, "ecc", "none",
        "Reed-Solomon parity for copies in memory: normal = RS(36,32), strong = RS(19,16)",
        {{"none", EccMode::kNone}, {"normal", EccMode::kNormal}, {"strong", EccMode::kStrong}},
        [i](Config& c) -> EccMode& { return c.tiers[i].ecc; }));
  } else {
    keys.push_back(EnumKey<FlushMode>(
        section, "flush", "async",
        "async: drained in the background; sync: checkpoint returns after this tier has it",
        {{"async", FlushMode::kAsync}, {"sync", FlushMode::kSync}},
        [i](Config& c) -> FlushMode& { return c.tiers[i].flush; }));
    keys.push_back(IntKey(section, "every", "1",
                          "drain every Nth checkpoint (by call count) to this tier", 1, 1000000,
                          [i](Config& c) -> int& { return c.tiers[i].every; }));
    keys.push_back(BoolKey(section, "direct_io", "true",
                           "write with O_DIRECT where the file system allows it",
                           [i](Config& c) -> bool& { return c.tiers[i].direct_io; }));
  }
}

std::vector<ConfigKey> BuildKeys() {
  std::vector<ConfigKey> keys;
  keys.push_back(StringKey("general", "dir", "./cairn-data",
                           "root of the default tier paths ({dir}); also $CAIRN_DIR",
                           [](Config& c) -> std::string& { return c.dir; }));
  keys.push_back(EnumKey<std::string>(
      "general", "log_level", "warn", "messages printed to stderr",
      {{"debug", "debug"}, {"info", "info"}, {"warn", "warn"}, {"error", "error"}, {"off", "off"}},
      [](Config& c) -> std::string& { return c.log_level; }));
  AddTierKeys(keys, TierKind::kMemory, "/dev/shm/cairn-{user}/{dirkey}/{node}", "4GiB",
              "node-local memory, tmpfs");
  AddTierKeys(keys, TierKind::kSsd, "{dir}/ssd/{node}", "0", "node-local SSD, persisted with fsync");
  AddTierKeys(keys, TierKind::kPfs, "{dir}/pfs", "0", "shared parallel file system");
  keys.push_back(EnumKey<TierKind>(
      "placement", "policy", "memory",
      "tier each checkpoint is written to before draining to the enabled tiers below it",
      {{"memory", TierKind::kMemory}, {"ssd", TierKind::kSsd}, {"pfs", TierKind::kPfs}},
      [](Config& c) -> TierKind& { return c.placement; }));
  keys.push_back(IntKey("retention", "keep", "2", "complete versions kept per tier", 1, 1000000,
                        [](Config& c) -> int& { return c.keep; }));
  keys.push_back(IntKey("topology", "ranks_per_node", "0",
                        "0: real nodes; N: consecutive ranks form virtual nodes of N (tests)", 0,
                        1 << 20, [](Config& c) -> int& { return c.ranks_per_node; }));
  return keys;
}

const ConfigKey* FindKey(const std::string& section, const std::string& name) {
  for (const auto& key : ConfigKeys()) {
    if (key.section == section && key.name == name) return &key;
  }
  return nullptr;
}

std::string NodeText(const toml::node& node) {
  if (auto s = node.as_string()) return s->get();
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto b = node.as_boolean()) return b->get() ? "true" : "false";
  if (auto f = node.as_floating_point()) return fmt::format("{}", f->get());
  return "<" + std::string(toml::impl::node_type_friendly_names[static_cast<int>(node.type())]) +
         ">";
}

// Walks tables; a key is a leaf whose dotted parent path is a known section.
Status ApplyTable(const toml::table& table, const std::string& prefix, Config& config,
                  const std::string& origin) {
  for (const auto& [k, node] : table) {
    std::string name(k.str());
    std::string path = prefix.empty() ? name : prefix + "." + name;
    if (const toml::table* sub = node.as_table()) {
      CAIRN_RETURN_IF_ERROR(ApplyTable(*sub, path, config, origin));
      continue;
    }
    const ConfigKey* key = FindKey(prefix, name);
    if (key == nullptr) {
      return Error(Code::kConfig, "{}: unknown config key '{}'", origin, path);
    }
    if (node.is_array() || node.is_date() || node.is_time() || node.is_date_time()) {
      return BadValue(path, NodeText(node), "expected " + key->type);
    }
    CAIRN_RETURN_IF_ERROR(key->set(config, NodeText(node)).Annotate(origin));
  }
  return Status::Ok();
}

}  // namespace

const char* TierKindName(TierKind kind) {
  switch (kind) {
    case TierKind::kMemory: return "memory";
    case TierKind::kSsd: return "ssd";
    case TierKind::kPfs: return "pfs";
  }
  return "?";
}

std::string ConfigKey::EnvName() const {
  std::string out = "CAIRN_";
  for (char ch : section + "." + name) {
    out += ch == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return out;
}

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey> keys = BuildKeys();
  return keys;
}

EnvLookup ProcessEnvLookup() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

EnvNames ProcessEnvNames() {
  return [] {
    std::vector<std::string> names;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string entry(*e);
      if (entry.rfind("CAIRN_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
    }
    return names;
  };
}

Result<uint64_t> ParseSize(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return Error(Code::kConfig, "expected a size such as 4GiB, 512MiB or 4096");
  errno = 0;
  unsigned long long n = std::strtoull(text.substr(0, i).c_str(), nullptr, 10);
  if (errno != 0) return Error(Code::kConfig, "size out of range");
  std::string unit = text.substr(i);
  unit.erase(std::remove(unit.begin(), unit.end(), ' '), unit.end());
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"", 1},           {"B", 1},          {"KB", 1000ULL},      {"MB", 1000000ULL},
      {"GB", 1000000000ULL}, {"TB", 1000000000000ULL}, {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20},
      {"GiB", 1ULL << 30},   {"TiB", 1ULL << 40}};
  for (const auto& [name, mult] : kUnits) {
    if (unit == name) {
      if (n > UINT64_MAX / mult) return Error(Code::kConfig, "size out of range");
      return static_cast<uint64_t>(n * mult);
    }
  }
  return Error(Code::kConfig, "unknown size unit '{}' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
               unit);
}

Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin,
                           const EnvLookup& lookup, const EnvNames& names) {
  Config config;
  for (const auto& key : ConfigKeys()) {
    CAIRN_RETURN_IF_ERROR(key.set(config, key.fallback).Annotate("built-in default"));
  }
  if (!toml_text.empty()) {
    // Debian's toml++ is built with exceptions; none leaves this function.
    toml::table parsed;
    try {
      parsed = toml::parse(toml_text, origin);
    } catch (const toml::parse_error& err) {
      return Error(Code::kConfig, "{}:{}:{}: {}", origin, err.source().begin.line,
                   err.source().begin.column, err.description());
    }
    CAIRN_RETURN_IF_ERROR(ApplyTable(parsed, "", config, origin));
  }
  // CAIRN_DIR is the documented shorthand; the explicit key wins over it.
  if (auto dir = lookup("CAIRN_DIR")) {
    CAIRN_RETURN_IF_ERROR(FindKey("general", "dir")->set(config, *dir).Annotate("$CAIRN_DIR"));
  }
  std::set<std::string> known(kOtherEnvNames);
  for (const auto& key : ConfigKeys()) {
    known.insert(key.EnvName());
    if (auto v = lookup(key.EnvName())) {
      CAIRN_RETURN_IF_ERROR(key.set(config, *v).Annotate("$" + key.EnvName()));
    }
  }
  for (const auto& name : names()) {
    if (!known.count(name)) {
      return Error(Code::kConfig, "unknown environment variable '{}' (no such config key)", name);
    }
  }
  if (!config.tier(config.placement).enabled) {
    return Error(Code::kConfig, "config key 'placement.policy': tier '{}' is not enabled",
                 TierKindName(config.placement));
  }
  return config;
}

Result<Config> LoadConfig(const char* config_path, const EnvLookup& lookup, const EnvNames& names,
                          const std::function<Result<std::string>(const std::string&)>& read_file) {
  std::string path = config_path != nullptr ? config_path : "";
  if (path.empty()) {
    if (auto from_env = lookup("CAIRN_CONFIG")) path = *from_env;
  }
  std::string text;
  if (!path.empty()) {
    auto loaded = read_file(path);
    if (!loaded.ok()) {
      return Status(Code::kConfig, "reading config file: " + loaded.status().message());
    }
    text = std::move(loaded).value();
  }
  return ParseConfig(text, path.empty() ? "defaults" : path, lookup, names);
}

}  // namespace cairn
