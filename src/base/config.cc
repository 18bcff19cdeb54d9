#include "base/config.h"

#include <unistd.h>

#include <cctype>
#include <csignal>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string_view>
#include <type_traits>

#include <toml++/toml.h>

extern char** environ;

namespace cairn {
namespace {

// Variables that are not keys but are still Cairn's.
const std::set<std::string> kOtherEnvNames = {"CAIRN_CONFIG", "CAIRN_DIR"};

// The placeholders a path may hold (storage/tier_path.h expands them).
const std::set<std::string> kPathPlaceholders = {"dir", "node", "user", "dirkey"};

// Text as messages show it: control characters (a NUL from "\u0000") are
// escaped, so that a message is never cut short or garbled by them.
std::string Printable(std::string_view text) {
  std::string out;
  for (char ch : text) {
    auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += ch;
    }
  }
  return out;
}

// "'lots'" for text, "'2' (a string)" for a typed TOML value.
std::string Describe(const ConfigValue& value) {
  if (const auto* t = std::get_if<ConfigText>(&value)) return "'" + Printable(t->text) + "'";
  if (const auto* s = std::get_if<std::string>(&value)) {
    return "'" + Printable(*s) + "' (a string)";
  }
  if (const auto* i = std::get_if<int64_t>(&value)) return fmt::format("'{}' (an integer)", *i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("'{}' (a float)", *d);
  return fmt::format("'{}' (a boolean)", std::get<bool>(value));
}

Status BadValue(const std::string& key, const ConfigValue& value, const std::string& why) {
  return Error(Code::kConfig, "config key '{}': bad value {}: {}", key, Describe(value), why);
}

// The whole of text as a T (no sign, space or suffix around it), or nothing.
template <typename T>
std::optional<T> ParseWhole(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A TOML string or text (from the environment or a default), else null.
const std::string* TextOf(const ConfigValue& value) {
  if (const auto* t = std::get_if<ConfigText>(&value)) return &t->text;
  return std::get_if<std::string>(&value);
}

// An integer in [lo, hi]: a TOML integer, or text that is one.
Result<int64_t> IntegerValue(const std::string& key, const ConfigValue& value, int64_t lo,
                             int64_t hi) {
  std::optional<int64_t> n;
  if (const auto* i = std::get_if<int64_t>(&value)) n = *i;
  if (const auto* t = std::get_if<ConfigText>(&value)) n = ParseWhole<int64_t>(t->text);
  if (!n) return BadValue(key, value, fmt::format("expected an integer from {} to {}", lo, hi));
  if (*n < lo || *n > hi) return BadValue(key, value, fmt::format("expected {} to {}", lo, hi));
  return *n;
}

// A finite number in [lo, hi]: a TOML integer or float, or text that is one.
Result<double> NumberValue(const std::string& key, const ConfigValue& value, double lo,
                           double hi) {
  std::optional<double> d;
  if (const auto* i = std::get_if<int64_t>(&value)) d = static_cast<double>(*i);
  if (const auto* f = std::get_if<double>(&value)) d = *f;
  if (const auto* t = std::get_if<ConfigText>(&value)) d = ParseWhole<double>(t->text);
  if (!d || !std::isfinite(*d)) {
    return BadValue(key, value, fmt::format("expected a number from {} to {}", lo, hi));
  }
  if (*d < lo || *d > hi) return BadValue(key, value, fmt::format("expected {} to {}", lo, hi));
  return *d;
}

// A TOML boolean, or text saying one (the usual spellings of the shell).
Result<bool> BoolValue(const std::string& key, const ConfigValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* t = std::get_if<ConfigText>(&value)) {
    const std::string& v = t->text;
    if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  }
  return BadValue(key, value, "expected true or false");
}

// A non-empty string without NUL characters (a NUL would cut a path short).
Result<std::string> StringValue(const std::string& key, const ConfigValue& value) {
  const std::string* text = TextOf(value);
  if (text == nullptr) return BadValue(key, value, "expected a string");
  if (text->empty()) return BadValue(key, value, "must not be empty");
  if (text->find('\0') != std::string::npos) {
    return BadValue(key, value, "contains a NUL character");
  }
  return *text;
}

// Bytes: a TOML integer (not negative), or a string with a unit ("4GiB").
Result<uint64_t> SizeValue(const std::string& key, const ConfigValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    if (*i < 0) return BadValue(key, value, "a size is not negative");
    return static_cast<uint64_t>(*i);
  }
  const std::string* text = TextOf(value);
  if (text == nullptr) {
    return BadValue(key, value, "expected a size: an integer of bytes or a string such as '4GiB'");
  }
  auto size = ParseSize(*text);
  if (!size.ok()) return BadValue(key, value, size.status().message());
  return *size;
}

// A path template: a string whose {placeholders} are all known, so that a
// misspelt one ({nod}) is not taken as a directory name.
Result<std::string> PathValue(const std::string& key, const ConfigValue& value) {
  CAIRN_ASSIGN_OR_RETURN(std::string path, StringValue(key, value));
  for (size_t open = path.find('{'); open != std::string::npos; open = path.find('{', open + 1)) {
    size_t close = path.find('}', open);
    std::string name = close == std::string::npos ? "" : path.substr(open + 1, close - open - 1);
    if (!kPathPlaceholders.count(name)) {
      return BadValue(key, value,
                      "unknown placeholder '" + Printable(path.substr(open, close - open + 1)) +
                          "' (known: {dir} {node} {user} {dirkey})");
    }
  }
  return path;
}

// Helpers that build ConfigKey entries; `field` selects the member to set.
using StringField = std::function<std::string&(Config&)>;

ConfigKey StringKey(std::string section, std::string name, std::string fallback,
                    std::string doc, StringField field) {
  std::string full = section + "." + name;
  return {section, name, "string", fallback, doc,
          [field, full](Config& c, const ConfigValue& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(field(c), StringValue(full, v));
            return Status::Ok();
          },
          [field](const Config& c) { return field(const_cast<Config&>(c)); }};
}

ConfigKey PathKey(std::string section, std::string name, std::string fallback, std::string doc,
                  StringField field) {
  std::string full = section + "." + name;
  return {section, name, "path", fallback, doc,
          [field, full](Config& c, const ConfigValue& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(field(c), PathValue(full, v));
            return Status::Ok();
          },
          [field](const Config& c) { return field(const_cast<Config&>(c)); }};
}

// Field: a callable Config& -> an integer member (int or int64_t).
template <typename Field>
ConfigKey IntKey(std::string section, std::string name, std::string fallback, std::string doc,
                 int64_t lo, int64_t hi, Field field) {
  std::string full = section + "." + name;
  return {section, name, fmt::format("int ({}..{})", lo, hi), fallback, doc,
          [field, full, lo, hi](Config& c, const ConfigValue& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(int64_t n, IntegerValue(full, v, lo, hi));
            auto& member = field(c);
            member = static_cast<std::remove_reference_t<decltype(member)>>(n);
            return Status::Ok();
          },
          [field](const Config& c) { return std::to_string(field(const_cast<Config&>(c))); }};
}

ConfigKey FloatKey(std::string section, std::string name, std::string fallback, std::string doc,
                   double lo, double hi, std::function<double&(Config&)> field) {
  std::string full = section + "." + name;
  return {section, name, fmt::format("number ({}..{})", lo, hi), fallback, doc,
          [field, full, lo, hi](Config& c, const ConfigValue& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(field(c), NumberValue(full, v, lo, hi));
            return Status::Ok();
          },
          [field](const Config& c) { return fmt::format("{}", field(const_cast<Config&>(c))); }};
}

ConfigKey BoolKey(std::string section, std::string name, std::string fallback, std::string doc,
                  std::function<bool&(Config&)> field) {
  std::string full = section + "." + name;
  return {section, name, "bool", fallback, doc,
          [field, full](Config& c, const ConfigValue& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(field(c), BoolValue(full, v));
            return Status::Ok();
          },
          [field](const Config& c) -> std::string {
            return field(const_cast<Config&>(c)) ? "true" : "false";
          }};
}

ConfigKey SizeKey(std::string section, std::string name, std::string fallback, std::string doc,
                  std::function<uint64_t&(Config&)> field) {
  std::string full = section + "." + name;
  return {section, name, "size", fallback, doc,
          [field, full](Config& c, const ConfigValue& v) -> Status {
            CAIRN_ASSIGN_OR_RETURN(field(c), SizeValue(full, v));
            return Status::Ok();
          },
          [field](const Config& c) { return std::to_string(field(const_cast<Config&>(c))); }};
}

template <typename E>
ConfigKey EnumKey(std::string section, std::string name, std::string fallback, std::string doc,
                  std::vector<std::pair<std::string, E>> choices,
                  std::function<E&(Config&)> field) {
  std::string full = section + "." + name;
  std::string listed;
  for (const auto& [text, value] : choices) listed += (listed.empty() ? "" : ", ") + text;
  return {section, name, listed, fallback, doc,
          [field, full, choices, listed](Config& c, const ConfigValue& v) -> Status {
            if (const std::string* text = TextOf(v)) {
              for (const auto& [choice, value] : choices) {
                if (choice == *text) {
                  field(c) = value;
                  return Status::Ok();
                }
              }
            }
            return BadValue(full, v, "expected one of " + listed);
          },
          [field, choices](const Config& c) -> std::string {
            for (const auto& [text, value] : choices) {
              if (value == field(const_cast<Config&>(c))) return text;
            }
            return "?";
          }};
}

// placement.interval: "off", "auto", or seconds > 0.
Status SetInterval(Config& c, const ConfigValue& v) {
  const std::string kKey = "placement.interval";
  const std::string* text = TextOf(v);
  if (text != nullptr && (*text == "off" || *text == "auto")) {
    c.interval.mode = *text == "off" ? IntervalMode::kOff : IntervalMode::kAuto;
    return Status::Ok();
  }
  // A TOML string must be off or auto: seconds are a number, not "90".
  std::optional<double> seconds;
  if (!std::holds_alternative<std::string>(v)) {
    auto n = NumberValue(kKey, v, 0, std::numeric_limits<double>::max());
    if (n.ok() && *n > 0) seconds = *n;
  }
  if (!seconds) return BadValue(kKey, v, "expected off, auto, or seconds > 0");
  c.interval.mode = IntervalMode::kFixed;
  c.interval.fixed_seconds = *seconds;
  return Status::Ok();
}

// io.parallelism: "auto", or ranks >= 0.
Status SetParallelism(Config& c, const ConfigValue& v) {
  const std::string kKey = "io.parallelism";
  const std::string* text = TextOf(v);
  if (text != nullptr && *text == "auto") {
    c.io.auto_parallelism = true;
    return Status::Ok();
  }
  std::optional<int64_t> ranks;
  if (!std::holds_alternative<std::string>(v)) {
    auto n = IntegerValue(kKey, v, 0, 1 << 20);
    if (n.ok()) ranks = *n;
  }
  if (!ranks) return BadValue(kKey, v, "expected auto, or an integer from 0 to 1048576");
  c.io.auto_parallelism = false;
  c.io.parallelism = static_cast<int>(*ranks);
  return Status::Ok();
}

// Keys a node or a rank may set for itself: where its tiers are and what
// its devices hold and endure, its log, its own address space. Every other
// key shapes what the ranks do together (the collective steps they take,
// the versions they keep), so it must be the same on every rank.
void MarkPerRankKeys(std::vector<ConfigKey>& keys) {
  static const std::set<std::string> kTierKeys = {
      "path", "capacity", "direct_io", "endurance_tbw", "endurance_pbw", "warranty_years",
      "already_written"};
  static const std::set<std::string> kOtherKeys = {
      "general.log_level", "general.background_nice", "io.profile", "transparent.arena_address",
      "transparent.arena_size", "transparent.stack_size", "transparent.tracking"};
  for (ConfigKey& key : keys) {
    key.per_rank = (key.section.rfind("tiers.", 0) == 0 && kTierKeys.count(key.name) > 0) ||
                   kOtherKeys.count(key.FullName()) > 0;
  }
}

void AddTierKeys(std::vector<ConfigKey>& keys, TierKind kind, const std::string& path,
                 const std::string& capacity, const std::string& what,
                 const char* enabled = "true") {
  std::string section = std::string("tiers.") + TierKindName(kind);
  int i = static_cast<int>(kind);
  keys.push_back(BoolKey(section, "enabled", enabled,
                         "use this tier (" + what + ")",
                         [i](Config& c) -> bool& { return c.tiers[i].enabled; }));
  keys.push_back(PathKey(section, "path", path,
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
    keys.push_back(BoolKey(section, "ecc_sync", "false",
                           "encode the ECC sidecar inside the checkpoint call (false: in the "
                           "background after the commit, leaving a short unprotected window)",
                           [i](Config& c) -> bool& { return c.tiers[i].ecc_sync; }));
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
    keys.push_back(BoolKey(section, "finalize_newest", "false",
                           "at a clean finalize, also drain here each checkpoint's newest "
                           "version that `every` skipped (as SCR flushes its last checkpoint)",
                           [i](Config& c) -> bool& { return c.tiers[i].finalize_newest; }));
    keys.push_back(BoolKey(section, "direct_io", "true",
                           "write with O_DIRECT where the file system allows it",
                           [i](Config& c) -> bool& { return c.tiers[i].direct_io; }));
  }
}

// transparent.arena_address: an integer, or a string of one ("0x200000000000").
Status SetArenaAddress(Config& c, const ConfigValue& v) {
  const std::string kKey = "transparent.arena_address";
  std::optional<uint64_t> address;
  if (const int64_t* n = std::get_if<int64_t>(&v); n != nullptr && *n > 0) {
    address = static_cast<uint64_t>(*n);
  } else if (const std::string* text = TextOf(v)) {
    uint64_t parsed = 0;
    bool hex = text->size() > 2 && (*text)[0] == '0' && ((*text)[1] == 'x' || (*text)[1] == 'X');
    const char* first = text->data() + (hex ? 2 : 0);
    const char* last = text->data() + text->size();
    auto [end, err] = std::from_chars(first, last, parsed, hex ? 16 : 10);
    if (err == std::errc() && end == last && parsed > 0) address = parsed;
  }
  if (!address || *address % 4096 != 0 || *address >= (uint64_t{1} << 47)) {
    return BadValue(kKey, v, "expected a page-aligned user-space address such as 0x200000000000");
  }
  c.transparent.arena_address = *address;
  return Status::Ok();
}

void AddTransparentKeys(std::vector<ConfigKey>& keys) {
  keys.push_back(EnumKey<int>(
      "transparent", "signal", "SIGUSR1",
      "signal that asks for a checkpoint, taken collectively at the next safe point "
      "(docs/transparent.md); none: no trigger",
      {{"none", 0}, {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGHUP", SIGHUP},
       {"SIGINT", SIGINT}, {"SIGTERM", SIGTERM}, {"SIGALRM", SIGALRM}, {"SIGXCPU", SIGXCPU}},
      [](Config& c) -> int& { return c.transparent.signal; }));
  keys.push_back(StringKey("transparent", "name", "transparent",
                           "checkpoint name of the versions the signal triggers",
                           [](Config& c) -> std::string& { return c.transparent.name; }));
  keys.push_back(ConfigKey{"transparent", "arena_address", "address", "0x200000000000",
                           "fixed virtual address of the preloaded heap (the same in every run)",
                           SetArenaAddress,
                           [](const Config& c) {
                             return fmt::format("{:#x}", c.transparent.arena_address);
                           }});
  keys.push_back(SizeKey("transparent", "arena_size", "64GiB",
                         "address space reserved for the preloaded heap (committed as used)",
                         [](Config& c) -> uint64_t& { return c.transparent.arena_size; }));
  keys.push_back(SizeKey("transparent", "stack_size", "64MiB",
                         "main's stack under the preloaded library (a fixed address too)",
                         [](Config& c) -> uint64_t& { return c.transparent.stack_size; }));
  keys.push_back(EnumKey<DirtyMethod>(
      "transparent", "tracking", "auto",
      "how written pages are found: auto (the first the kernel offers), uffd-wp, soft-dirty, "
      "mprotect, none",
      {{"auto", DirtyMethod::kAuto},
       {"uffd-wp", DirtyMethod::kUffdWp},
       {"soft-dirty", DirtyMethod::kSoftDirty},
       {"mprotect", DirtyMethod::kMprotect},
       {"none", DirtyMethod::kNone}},
      [](Config& c) -> DirtyMethod& { return c.transparent.tracking; }));
  keys.push_back(BoolKey("transparent", "fixed_layout", "true",
                         "re-execute the preloaded program once without address-space "
                         "randomisation, so that a restart finds code and libraries where "
                         "they were",
                         [](Config& c) -> bool& { return c.transparent.fixed_layout; }));
  keys.push_back(BoolKey("transparent", "wait_safe_points", "false",
                         "MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome are safe points too: "
                         "only when every rank calls them equally often (docs/transparent.md)",
                         [](Config& c) -> bool& { return c.transparent.wait_safe_points; }));
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
  keys.push_back(IntKey("general", "background_nice", "0",
                        "added to the nice value of Cairn's background threads (drains, ECC and "
                        "redundancy encodes, slot reservation), so that on a core they share "
                        "with the application, the application runs first; 0: same priority",
                        0, 19, [](Config& c) -> int64_t& { return c.background_nice; }));
  AddTierKeys(keys, TierKind::kMemory, "/dev/shm/cairn-{user}/{dirkey}/{node}", "4GiB",
              "node-local memory, tmpfs");
  // /dev/shm stands in where there is no persistent memory (docs/pmem.md):
  // point path at a DAX mount such as /mnt/pmem0 on a machine that has one.
  AddTierKeys(keys, TierKind::kPmem, "/dev/shm/cairn-pmem-{user}/{dirkey}/{node}", "4GiB",
              "node-local persistent memory: streaming copies into mapped slots, flushed",
              "false");
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
      SetInterval, [](const Config& c) -> std::string {
        switch (c.interval.mode) {
          case IntervalMode::kOff: return "off";
          case IntervalMode::kAuto: return "auto";
          case IntervalMode::kFixed: return fmt::format("{}", c.interval.fixed_seconds);
        }
        return "?";
      }});
  keys.push_back(ConfigKey{
      "io", "parallelism", "auto, or an int >= 0", "0",
      "ranks of a node that write or read a tier at once: 0 = all, N, or auto (the optimum "
      "of io.profile)",
      SetParallelism, [](const Config& c) {
        return c.io.auto_parallelism ? std::string("auto") : std::to_string(c.io.parallelism);
      }});
  keys.push_back(PathKey("io", "profile", "{dir}/cairn-profile.json",
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
  keys.push_back(EnumKey<RedundancyScheme>(
      "redundancy", "scheme", "none",
      "protect node-local versions across nodes: partner copy, xor parity, or rs (Reed-Solomon) "
      "parity within groups of ranks on distinct nodes (docs/redundancy.md)",
      {{"none", RedundancyScheme::kNone},
       {"partner", RedundancyScheme::kPartner},
       {"xor", RedundancyScheme::kXor},
       {"rs", RedundancyScheme::kRs}},
      [](Config& c) -> RedundancyScheme& { return c.redundancy.scheme; }));
  keys.push_back(IntKey("redundancy", "group_size", "0",
                        "ranks per group, each on a different node (0: one rank from each of up "
                        "to 8 nodes); more than the job's nodes is an error",
                        0, 255, [](Config& c) -> int& { return c.redundancy.group_size; }));
  keys.push_back(IntKey("redundancy", "parity", "2",
                        "rs: parities per group = members a group survives losing (< group size)",
                        1, 254, [](Config& c) -> int& { return c.redundancy.parity; }));
  keys.push_back(BoolKey("redundancy", "sync", "false",
                         "true: checkpoint returns once the parity is committed; false: it is "
                         "encoded in the background and checkpoint_wait covers it",
                         [](Config& c) -> bool& { return c.redundancy.sync; }));
  keys.push_back(EnumKey<DedupMode>(
      "dedup", "mode", "off",
      "page deduplication of checkpoints: off (every page written), local (within a rank), "
      "collective (also across ranks), incremental (local + unchanged pages refer to the "
      "previous version), collective+incremental (docs/dedup.md)",
      {{"off", DedupMode::kOff},
       {"local", DedupMode::kLocal},
       {"collective", DedupMode::kCollective},
       {"incremental", DedupMode::kIncremental},
       {"collective+incremental", DedupMode::kCollectiveIncremental}},
      [](Config& c) -> DedupMode& { return c.dedup.mode; }));
  keys.push_back(IntKey("dedup", "page_size", "4096",
                        "bytes per page, cut from each region's first byte (the last page of a "
                        "region may be shorter and is always written)",
                        512, 1 << 24, [](Config& c) -> int& { return c.dedup.page_size; }));
  keys.push_back(IntKey("dedup", "threshold", "131072",
                        "collective: the most frequent pages the reduction keeps (the paper's "
                        "Threshold)",
                        1, int64_t{1} << 30, [](Config& c) -> int64_t& { return c.dedup.threshold; }));
  keys.push_back(EnumKey<DedupHash>(
      "dedup", "hash", "xxh3-128",
      "page digest: xxh3-128, sha1 (the paper's) or sha256; test-collide is an 8-bit digest "
      "for tests only",
      {{"xxh3-128", DedupHash::kXxh3_128},
       {"sha1", DedupHash::kSha1},
       {"sha256", DedupHash::kSha256},
       {"test-collide", DedupHash::kTestCollide}},
      [](Config& c) -> DedupHash& { return c.dedup.hash; }));
  keys.push_back(BoolKey("dedup", "verify", "false",
                         "compare the bytes of two pages of a rank before one is stored as a "
                         "reference to the other (catches digest collisions within a rank)",
                         [](Config& c) -> bool& { return c.dedup.verify; }));
  keys.push_back(IntKey("dedup", "full_every", "8",
                        "incremental modes: every Nth version stores every page (1: always)", 1,
                        1000000, [](Config& c) -> int& { return c.dedup.full_every; }));
  keys.push_back(IntKey("dedup", "probe_every", "8",
                        "after a version in which dedup saved at most min_saving of every rank's "
                        "pages, the next versions are written whole (as with mode off, nothing "
                        "hashed) until every Nth, which is deduplicated again; collective modes: "
                        "after a collective step that found no page two ranks hold, the next "
                        "versions skip it until every Nth (1: every version deduplicated with "
                        "every step, as the paper)",
                        1, 1000000, [](Config& c) -> int& { return c.dedup.probe_every; }));
  keys.push_back(FloatKey("dedup", "min_saving", "0.02",
                          "the share of a rank's pages (0..1) that local, remote and unchanged "
                          "references must save in some rank for the next version to be "
                          "deduplicated too (probe_every)",
                          0, 1, [](Config& c) -> double& { return c.dedup.min_saving; }));
  AddTransparentKeys(keys);
  keys.push_back(IntKey("retention", "keep", "2", "complete versions kept per tier", 1, 1000000,
                        [](Config& c) -> int& { return c.keep; }));
  keys.push_back(IntKey("topology", "ranks_per_node", "0",
                        "0: real nodes; N: consecutive ranks form virtual nodes of N (tests)", 0,
                        1 << 20, [](Config& c) -> int& { return c.ranks_per_node; }));
  MarkPerRankKeys(keys);
  return keys;
}

// Whether path is a section of keys ("tiers.memory") or holds sections
// ("tiers").
bool IsSection(const std::string& path) {
  for (const auto& key : ConfigKeys()) {
    if (key.section == path || key.section.rfind(path + ".", 0) == 0) return true;
  }
  return false;
}

// "an array", "a table", ...: a TOML value's type as messages name it.
const char* TomlTypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// A TOML value as the key's setter takes it, with its type kept.
Result<ConfigValue> TomlValue(const toml::node& node, const ConfigKey& key) {
  if (const auto* s = node.as_string()) return ConfigValue(s->get());
  if (const auto* i = node.as_integer()) return ConfigValue(i->get());
  if (const auto* f = node.as_floating_point()) return ConfigValue(f->get());
  if (const auto* b = node.as_boolean()) return ConfigValue(b->get());
  return Error(Code::kConfig, "config key '{}': expected {}, found {}", key.FullName(), key.type,
               TomlTypeName(node.type()));
}

// The dotted path of the first value under an unknown table, so that the
// message shows what the user wrote ("tier.memory.path", not just "tier").
std::string FirstValuePath(const toml::node& node, std::string path) {
  const toml::node* at = &node;
  while (const toml::table* table = at->as_table()) {
    if (table->empty()) break;
    path += "." + std::string(table->begin()->first.str());
    at = &table->begin()->second;
  }
  return path;
}

// Applies the keys of one table. It descends only into known sections, so
// its depth is that of the deepest section whatever the input's nesting.
Status ApplyTable(const toml::table& table, const std::string& prefix, const std::string& origin,
                  Config& config, std::set<std::string>& user_set) {
  for (const auto& [k, node] : table) {
    std::string name(k.str());
    std::string path = prefix.empty() ? name : prefix + "." + name;
    if (IsSection(path)) {
      const toml::table* sub = node.as_table();
      if (sub == nullptr) {
        return Error(Code::kConfig, "{}: '{}' is a config section, so a table, not {}", origin,
                     path, TomlTypeName(node.type()));
      }
      CAIRN_RETURN_IF_ERROR(ApplyTable(*sub, path, origin, config, user_set));
      continue;
    }
    const ConfigKey* key = FindKey(prefix, name);
    if (key == nullptr) {
      return Error(Code::kConfig, "{}: unknown config key '{}'", origin,
                   Printable(FirstValuePath(node, path)));
    }
    auto value = TomlValue(node, *key);
    if (!value.ok()) return value.status().Annotate(origin);
    CAIRN_RETURN_IF_ERROR(key->set(config, *value).Annotate(origin));
    user_set.insert(path);
  }
  return Status::Ok();
}

// The index of the last character of the string starting at text[i] (a
// basic, literal or multi-line string), counting the lines it spans. An
// unterminated single-line string ends before its newline.
size_t SkipString(std::string_view text, size_t i, int& line) {
  char quote = text[i];
  bool multi = text.substr(i, 3) == std::string(3, quote);
  for (size_t j = i + (multi ? 3 : 1); j < text.size(); ++j) {
    char ch = text[j];
    if (ch == '\n') {
      if (!multi) return j - 1;
      ++line;
    } else if (ch == '\\' && quote == '"') {
      if (++j < text.size() && text[j] == '\n') ++line;  // an escape, or a line-ending backslash
    } else if (ch == quote && (!multi || text.substr(j, 3) == std::string(3, quote))) {
      if (!multi) return j;
      j += 2;
      while (j + 1 < text.size() && text[j + 1] == quote) ++j;  // """a"""" ends in a quote
      return j;
    }
  }
  return text.size();
}

// toml++ bounds nested arrays and inline tables (TOML_MAX_NESTED_VALUES)
// but not the parts of a table header or dotted key, and it recurses over
// the finished tree: `[a.a.a...]` 20,000 parts deep overflows the stack
// inside toml::parse (at ~30,000 on an 8 MiB stack, far fewer on a thread's).
// So the depth is measured on the text first: the parts of each key, plus
// the tables, arrays and inline tables around it. Only strings, comments,
// brackets, '=', ',' and '.' are recognised; the rest of the syntax is
// toml++'s to judge.
Status CheckNestingDepth(std::string_view text, const std::string& origin) {
  struct Open {
    char bracket;  // '[' (an array) or '{' (an inline table)
    int depth;     // of its elements; of the table itself for '{'
  };
  std::vector<Open> open;
  int line = 1;
  int table_depth = 0;  // parts of the last [header]
  int depth = 1;        // of the key part being read, or of the value
  bool in_key = true;   // reading a key or a header, not a value
  bool in_header = false;
  auto too_deep = [&] {
    return Error(Code::kConfig,
                 "{}:{}: nested deeper than {} levels (table header and dotted key parts, "
                 "arrays and inline tables together)",
                 origin, line, kMaxConfigDepth);
  };
  auto start_key = [&](int owner_depth) {
    in_key = true;
    depth = owner_depth + 1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '"' || ch == '\'') {
      i = SkipString(text, i, line);
    } else if (ch == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (ch == '\n') {
      ++line;
      if (open.empty()) {
        in_header = false;
        start_key(table_depth);
      }
    } else if (in_key) {
      if (ch == '.' && ++depth > kMaxConfigDepth) return too_deep();
      if (ch == '[' && open.empty()) {  // a [header] or [[header]]
        in_header = true;
        depth = 1;
      } else if (ch == ']' && in_header) {
        table_depth = depth;
        in_key = in_header = false;
      } else if (ch == '=') {
        if (depth > kMaxConfigDepth) return too_deep();
        in_key = false;
      } else if (ch == '}' && !open.empty()) {  // {} or a trailing comma
        open.pop_back();
        in_key = false;
      }
    } else if (ch == '[' || ch == '{') {
      if (depth + 1 > kMaxConfigDepth) return too_deep();
      open.push_back({ch, ch == '[' ? depth + 1 : depth});
      if (ch == '[') {
        depth += 1;
      } else {
        start_key(depth);
      }
    } else if ((ch == ']' || ch == '}') && !open.empty()) {
      open.pop_back();
    } else if (ch == ',' && !open.empty()) {
      if (open.back().bracket == '[') {
        depth = open.back().depth;
      } else {
        start_key(open.back().depth);
      }
    }
  }
  return Status::Ok();
}

// The file's keys over the defaults; `user_set` gets every key it sets.
Status ApplyToml(const std::string& toml_text, const std::string& origin, Config& config,
                 std::set<std::string>& user_set) {
  CAIRN_RETURN_IF_ERROR(CheckNestingDepth(toml_text, origin));
  // Debian's toml++ is built with exceptions; none leaves this function.
  toml::table parsed;
  try {
    parsed = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& err) {
    return Error(Code::kConfig, "{}:{}:{}: {}", origin, err.source().begin.line,
                 err.source().begin.column, err.description());
  }
  return ApplyTable(parsed, "", origin, config, user_set);
}

// CAIRN_* variables over the file; `user_set` gets every key they set.
Status ApplyEnvironment(const EnvLookup& lookup, const EnvNames& names, Config& config,
                        std::set<std::string>& user_set) {
  // CAIRN_DIR is the documented shorthand; the explicit key wins over it.
  if (auto dir = lookup("CAIRN_DIR")) {
    CAIRN_RETURN_IF_ERROR(
        FindKey("general", "dir")->set(config, ConfigText{*dir}).Annotate("$CAIRN_DIR"));
  }
  std::set<std::string> known(kOtherEnvNames);
  for (const auto& key : ConfigKeys()) {
    known.insert(key.EnvName());
    if (auto v = lookup(key.EnvName())) {
      user_set.insert(key.FullName());
      CAIRN_RETURN_IF_ERROR(key.set(config, ConfigText{*v}).Annotate("$" + key.EnvName()));
    }
  }
  for (const auto& name : names()) {
    if (!known.count(name)) {
      return Error(Code::kConfig, "unknown environment variable '{}' (no such config key)",
                   Printable(name));
    }
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
  CAIRN_RETURN_IF_ERROR(config.CheckDedupWithEcc());
  bool any_enabled = false;
  for (const auto& t : config.tiers) any_enabled = any_enabled || t.enabled;
  if (!any_enabled) {
    return Error(Code::kConfig, "config: every tier is disabled (tiers.*.enabled): enable one");
  }
  PlacementPolicy policy = config.placement.policy;
  // The fast level is the memory tier, or the pmem tier when memory is off.
  const bool fast_level =
      config.tier(TierKind::kMemory).enabled || config.tier(TierKind::kPmem).enabled;
  if (ChoosesPerVersion(policy) && !(fast_level && config.tier(TierKind::kSsd).enabled)) {
    return Error(Code::kConfig,
                 "config key 'placement.policy': '{}' chooses between the memory (or pmem) and "
                 "ssd tiers, so both must be enabled",
                 PlacementPolicyName(policy));
  }
  return Status::Ok();
}

}  // namespace

const char* DedupModeName(DedupMode mode) {
  switch (mode) {
    case DedupMode::kOff: return "off";
    case DedupMode::kLocal: return "local";
    case DedupMode::kCollective: return "collective";
    case DedupMode::kIncremental: return "incremental";
    case DedupMode::kCollectiveIncremental: return "collective+incremental";
  }
  return "unknown";
}

const char* DirtyMethodName(DirtyMethod method) {
  switch (method) {
    case DirtyMethod::kAuto: return "auto";
    case DirtyMethod::kUffdWp: return "uffd-wp";
    case DirtyMethod::kSoftDirty: return "soft-dirty";
    case DirtyMethod::kMprotect: return "mprotect";
    case DirtyMethod::kNone: return "none";
  }
  return "unknown";
}

const char* RedundancySchemeName(RedundancyScheme scheme) {
  switch (scheme) {
    case RedundancyScheme::kNone: return "none";
    case RedundancyScheme::kPartner: return "partner";
    case RedundancyScheme::kXor: return "xor";
    case RedundancyScheme::kRs: return "rs";
  }
  return "?";
}

const char* PlacementPolicyName(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kClc: return "clc";
    case PlacementPolicy::kMemory: return "memory";
    case PlacementPolicy::kSsd: return "ssd";
    case PlacementPolicy::kRatio: return "ratio";
  }
  return "?";
}

Status Config::CheckDedupWithEcc() const {
  const TierConfig& memory = tier(TierKind::kMemory);
  if (dedup.mode == DedupMode::kOff || !memory.enabled || memory.ecc == EccMode::kNone ||
      !memory.ecc_sync) {
    return Status::Ok();
  }
  return Error(Code::kConfig,
               "config keys 'dedup.mode' ('{}') and 'tiers.memory.ecc_sync' (true) cannot be "
               "combined: a deduplicated copy's ECC sidecar is encoded after the commit; set "
               "tiers.memory.ecc_sync = false or dedup.mode = \"off\" (docs/dedup.md)",
               DedupModeName(dedup.mode));
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
    case TierKind::kPmem: return "pmem";
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

const ConfigKey* FindKey(const std::string& section, const std::string& name) {
  for (const auto& key : ConfigKeys()) {
    if (key.section == section && key.name == name) return &key;
  }
  return nullptr;
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
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (end == text.data()) {
    return Error(Code::kConfig, "expected a size such as 4GiB, 512MiB or 4096");
  }
  if (ec == std::errc::result_out_of_range) {
    return Error(Code::kConfig, "more than 2^64 - 1 bytes");
  }
  std::string_view unit(end, text.data() + text.size() - end);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);  // "512 MiB"
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"", 1},           {"B", 1},          {"KB", 1000ULL},      {"MB", 1000000ULL},
      {"GB", 1000000000ULL}, {"TB", 1000000000000ULL}, {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20},
      {"GiB", 1ULL << 30},   {"TiB", 1ULL << 40}};
  for (const auto& [name, mult] : kUnits) {
    if (unit == name) {
      if (n > UINT64_MAX / mult) return Error(Code::kConfig, "more than 2^64 - 1 bytes");
      return n * mult;
    }
  }
  return Error(Code::kConfig, "unknown size unit '{}' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)",
               Printable(unit));
}

Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin,
                           const EnvLookup& lookup, const EnvNames& names) {
  Config config;
  for (const auto& key : ConfigKeys()) {
    CAIRN_RETURN_IF_ERROR(key.set(config, ConfigText{key.fallback}).Annotate("built-in default"));
  }
  std::set<std::string> user_set;  // keys given by the file or the environment
  if (!toml_text.empty()) CAIRN_RETURN_IF_ERROR(ApplyToml(toml_text, origin, config, user_set));
  CAIRN_RETURN_IF_ERROR(ApplyEnvironment(lookup, names, config, user_set));
  CAIRN_RETURN_IF_ERROR(FinishConfig(config, user_set));
  return config;
}

Result<Config> LoadConfig(const char* config_path, const EnvLookup& lookup, const EnvNames& names,
                          const ReadConfigFile& read_file) {
  std::string path = config_path != nullptr ? config_path : "";
  if (path.empty()) {
    if (auto from_env = lookup("CAIRN_CONFIG")) path = *from_env;
  }
  std::string text;
  if (!path.empty()) {
    auto loaded = read_file(path, kMaxConfigFileBytes);
    if (!loaded.ok()) {
      return Status(Code::kConfig, "reading config file: " + loaded.status().message());
    }
    text = std::move(loaded).value();
  }
  return ParseConfig(text, path.empty() ? "defaults" : path, lookup, names);
}

}  // namespace cairn
