#include "base/config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <type_traits>

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

// A finite decimal number (TOML integers and floats both arrive as text).
Result<double> ParseNumber(const std::string& key, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(d)) {
    return BadValue(key, text, "expected a number");
  }
  return d;
}

Result<bool> ParseBool(const std::string& key, const std::string& text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return BadValue(key, text, "expected true or false");
}

// Helpers that build ConfigKey entries; `field` selects the member to set.
using StringField = std::function<std::string&(Config&)>;

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

// Field: a callable Config& -> an integer member (int or int64_t).
template <typename Field>
ConfigKey IntKey(std::string section, std::string name, std::string fallback, std::string doc,
                 long long lo, long long hi, Field field) {
  std::string full = section + "." + name;
  return {section, name, fmt::format("int ({}..{})", lo, hi), fallback, doc,
          [field, full, lo, hi](Config& c, const std::string& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(long long n, ParseInteger(full, v, lo, hi));
            auto& member = field(c);
            member = static_cast<std::remove_reference_t<decltype(member)>>(n);
            return Status::Ok();
          }};
}

ConfigKey FloatKey(std::string section, std::string name, std::string fallback, std::string doc,
                   double lo, double hi, std::function<double&(Config&)> field) {
  std::string full = section + "." + name;
  return {section, name, fmt::format("number ({}..{})", lo, hi), fallback, doc,
          [field, full, lo, hi](Config& c, const std::string& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(double d, ParseNumber(full, v));
            if (d < lo || d > hi) return BadValue(full, v, fmt::format("expected {} to {}", lo, hi));
            field(c) = d;
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
    keys.push_back(BoolKey(section, "keep_at_finalize", "false",
                           "keep memory copies at a clean finalize although a lower tier "
                           "holds them (false: release the RAM)",
                           [i](Config& c) -> bool& { return c.tiers[i].keep_at_finalize; }));
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
  keys.push_back(FloatKey("tiers.ssd", "endurance_tbw", "14600",
                          "SSD endurance rating in TB written (14600: the paper's 14.6 PBW)", 1e-3,
                          1e9, [](Config& c) -> double& { return c.ssd_endurance_tbw; }));
  keys.push_back(FloatKey("tiers.ssd", "endurance_pbw", "0",
                          "the rating in PB written instead (0: use endurance_tbw; not both)", 0,
                          1e6, [](Config& c) -> double& { return c.ssd_endurance_pbw; }));
  keys.push_back(FloatKey("tiers.ssd", "warranty_years", "5", "SSD warranty period in years",
                          1e-3, 100,
                          [](Config& c) -> double& { return c.ssd_warranty_years; }));
  keys.push_back(SizeKey("tiers.ssd", "already_written", "0",
                         "bytes the SSD had written before Cairn's wear ledger (from SMART)",
                         [](Config& c) -> uint64_t& { return c.ssd_already_written; }));
  AddTierKeys(keys, TierKind::kPfs, "{dir}/pfs", "0", "shared parallel file system");
  keys.push_back(EnumKey<PlacementPolicy>(
      "placement", "policy", "memory",
      "memory or ssd: every version to that tier, drained below; clc: the controller chooses "
      "memory, ssd or skip per version; ratio: every Nth version to ssd, the rest to memory",
      {{"clc", PlacementPolicy::kClc},
       {"memory", PlacementPolicy::kMemory},
       {"ssd", PlacementPolicy::kSsd},
       {"ratio", PlacementPolicy::kRatio}},
      [](Config& c) -> PlacementPolicy& { return c.placement.policy; }));
  keys.push_back(BoolKey("placement", "lifetime", "true",
                         "clc: keep the SSD within its warranty (Eq. 1, 2; LE)",
                         [](Config& c) -> bool& { return c.placement.lifetime; }));
  keys.push_back(BoolKey("placement", "slowdown", "true",
                         "clc: use memory while checkpoint time is over slowdown_bound (Eq. 3; PLE)",
                         [](Config& c) -> bool& { return c.placement.slowdown; }));
  keys.push_back(BoolKey("placement", "size", "true",
                         "clc: skip a version that would go to memory but does not fit",
                         [](Config& c) -> bool& { return c.placement.size; }));
  keys.push_back(FloatKey("placement", "slowdown_bound", "0.10",
                          "clc: bound on T_chk / (T_compute + T_chk), strictly between 0 and 1",
                          0, 1, [](Config& c) -> double& { return c.placement.slowdown_bound; }));
  keys.push_back(IntKey("placement", "force_ssd_every", "0",
                          "every Nth checkpoint call goes to the SSD whatever the policy (0: off)",
                          0, 1LL << 40,
                          [](Config& c) -> int64_t& { return c.placement.force_ssd_every; }));
  keys.push_back(IntKey("placement", "ratio", "10",
                          "ratio: every Nth checkpoint call goes to the SSD (10: the paper's 9:1)",
                          1, 1LL << 40, [](Config& c) -> int64_t& { return c.placement.ratio; }));
  keys.push_back(FloatKey("placement", "bandwidth_window", "0",
                          "clc: seconds over which B_SSD is measured (0: since the run started)", 0,
                          1e9, [](Config& c) -> double& { return c.placement.bandwidth_window; }));
  keys.push_back(ConfigKey{
      "placement", "interval", "off, auto, or seconds > 0", "off",
      "when cairn_should_checkpoint says yes: off (it is an error to call it), auto (the "
      "failure model's optimal interval from measured checkpoint times), or fixed seconds",
      [](Config& c, const std::string& v) -> Status {
        IntervalSettings& s = c.interval;
        if (v == "off" || v == "auto") {
          s.mode = v == "off" ? IntervalMode::kOff : IntervalMode::kAuto;
          return Status::Ok();
        }
        auto d = ParseNumber("placement.interval", v);
        if (!d.ok() || !(*d > 0)) {
          return BadValue("placement.interval", v, "expected off, auto, or seconds > 0");
        }
        s.mode = IntervalMode::kFixed;
        s.fixed_seconds = *d;
        return Status::Ok();
      }});
  keys.push_back(ConfigKey{
      "io", "parallelism", "auto, or an int >= 0", "0",
      "ranks of a node that write or read a tier at once: 0 = all, N, or auto (the optimum "
      "of io.profile)",
      [](Config& c, const std::string& v) -> Status {
        if (v == "auto") {
          c.io.auto_parallelism = true;
          return Status::Ok();
        }
        CAIRN_ASSIGN_OR_RETURN(long long n, ParseInteger("io.parallelism", v, 0, 1 << 20));
        c.io.auto_parallelism = false;
        c.io.parallelism = static_cast<int>(n);
        return Status::Ok();
      }});
  keys.push_back(StringKey("io", "profile", "{dir}/cairn-profile.json",
                           "the I/O profile parallelism = auto reads (cairn profile --out)",
                           [](Config& c) -> std::string& { return c.io.profile; }));
  keys.push_back(FloatKey("model", "mtbf", "86400",
                          "the job's mean time between failures in seconds (λ = 1/mtbf)", 1, 1e12,
                          [](Config& c) -> double& { return c.interval.mtbf_seconds; }));
  keys.push_back(EnumKey<IntervalObjective>(
      "model", "objective", "time",
      "what interval = auto minimizes: expected time, or energy per useful second (EPE)",
      {{"time", IntervalObjective::kTime}, {"energy", IntervalObjective::kEnergy}},
      [](Config& c) -> IntervalObjective& { return c.interval.objective; }));
  keys.push_back(FloatKey("model", "power_compute", "0",
                          "W_A: a node's power while computing, in watts (objective energy)", 0,
                          1e7, [](Config& c) -> double& { return c.interval.power_compute; }));
  keys.push_back(FloatKey("model", "power_checkpoint", "0",
                          "W_C: a node's power while checkpointing, in watts", 0, 1e7,
                          [](Config& c) -> double& { return c.interval.power_checkpoint; }));
  keys.push_back(FloatKey("model", "power_restart", "0",
                          "W_R: a node's power while restarting, in watts", 0, 1e7,
                          [](Config& c) -> double& { return c.interval.power_restart; }));
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
                  const std::string& origin, std::set<std::string>& user_set) {
  for (const auto& [k, node] : table) {
    std::string name(k.str());
    std::string path = prefix.empty() ? name : prefix + "." + name;
    if (const toml::table* sub = node.as_table()) {
      CAIRN_RETURN_IF_ERROR(ApplyTable(*sub, path, config, origin, user_set));
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
    user_set.insert(path);
  }
  return Status::Ok();
}

// Rules across keys, and unit conversions the table cannot express.
Status FinishConfig(Config& config, const std::set<std::string>& user_set) {
  if (user_set.count("tiers.ssd.endurance_tbw") && user_set.count("tiers.ssd.endurance_pbw")) {
    return Error(Code::kConfig,
                 "config keys 'tiers.ssd.endurance_tbw' and 'tiers.ssd.endurance_pbw' are both "
                 "set: give the SSD's rating once");
  }
  for (Status s : {config.placement.Validate(), config.interval.Validate()}) {
    if (!s.ok()) return Status(Code::kConfig, s.message());
  }
  bool any_enabled = false;
  for (const auto& t : config.tiers) any_enabled = any_enabled || t.enabled;
  if (!any_enabled) {
    return Error(Code::kConfig, "config: every tier is disabled (tiers.*.enabled): enable one");
  }
  PlacementPolicy policy = config.placement.policy;
  if (ChoosesPerVersion(policy) &&
      !(config.tier(TierKind::kMemory).enabled && config.tier(TierKind::kSsd).enabled)) {
    return Error(Code::kConfig,
                 "config key 'placement.policy': '{}' chooses between the memory and ssd tiers, "
                 "so both must be enabled",
                 PlacementPolicyName(policy));
  }
  return Status::Ok();
}

}  // namespace

const char* PlacementPolicyName(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kClc: return "clc";
    case PlacementPolicy::kMemory: return "memory";
    case PlacementPolicy::kSsd: return "ssd";
    case PlacementPolicy::kRatio: return "ratio";
  }
  return "?";
}

Status ClcSettings::Validate() const {
  if (!(slowdown_bound > 0 && slowdown_bound < 1)) {
    return Error(Code::kInvalidArgument, "placement.slowdown_bound = {} is not in (0, 1)",
                 slowdown_bound);
  }
  if (force_ssd_every < 0) {
    return Error(Code::kInvalidArgument, "placement.force_ssd_every = {} is negative (0: off)",
                 force_ssd_every);
  }
  if (ratio < 1) {
    return Error(Code::kInvalidArgument, "placement.ratio = {} is less than 1", ratio);
  }
  if (bandwidth_window != 0 && !(bandwidth_window >= 1)) {
    return Error(Code::kInvalidArgument,
                 "placement.bandwidth_window = {} is neither 0 (since the run started) nor >= 1 s",
                 bandwidth_window);
  }
  return Status::Ok();
}

Status IntervalSettings::Validate() const {
  if (objective == IntervalObjective::kEnergy &&
      !(power_compute > 0 && power_checkpoint + power_restart > 0)) {
    return Error(Code::kInvalidArgument,
                 "model.objective = energy needs model.power_compute > 0 and model.power_checkpoint "
                 "or model.power_restart > 0");
  }
  return Status::Ok();
}

SsdEndurance Config::ssd_endurance() const {
  SsdEndurance e;
  e.rating_bytes = ssd_endurance_pbw > 0 ? ssd_endurance_pbw * 1e15 : ssd_endurance_tbw * 1e12;
  e.warranty_seconds = ssd_warranty_years * kSecondsPerYear;
  e.already_written_bytes = static_cast<double>(ssd_already_written);
  return e;
}

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
  std::set<std::string> user_set;  // keys given by the file or the environment
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
    CAIRN_RETURN_IF_ERROR(ApplyTable(parsed, "", config, origin, user_set));
  }
  // CAIRN_DIR is the documented shorthand; the explicit key wins over it.
  if (auto dir = lookup("CAIRN_DIR")) {
    CAIRN_RETURN_IF_ERROR(FindKey("general", "dir")->set(config, *dir).Annotate("$CAIRN_DIR"));
  }
  std::set<std::string> known(kOtherEnvNames);
  for (const auto& key : ConfigKeys()) {
    known.insert(key.EnvName());
    if (auto v = lookup(key.EnvName())) {
      user_set.insert(key.FullName());
      CAIRN_RETURN_IF_ERROR(key.set(config, *v).Annotate("$" + key.EnvName()));
    }
  }
  for (const auto& name : names()) {
    if (!known.count(name)) {
      return Error(Code::kConfig, "unknown environment variable '{}' (no such config key)", name);
    }
  }
  CAIRN_RETURN_IF_ERROR(FinishConfig(config, user_set));
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
