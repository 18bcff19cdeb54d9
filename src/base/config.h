// Config: every setting of Cairn, loaded from a TOML file, then overridden by
// CAIRN_<SECTION>_<KEY> environment variables, over built-in defaults that
// need no file. Unknown keys and bad values are errors naming the key and the
// value. The table of keys (ConfigKeys) is the single source for parsing,
// environment names and docs/config.md (a test keeps the doc in step).
// Thread-safety: Config is a value; LoadConfig is reentrant.
#ifndef CAIRN_BASE_CONFIG_H_
#define CAIRN_BASE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

enum class TierKind { kMemory = 0, kSsd = 1, kPfs = 2 };
inline constexpr int kTierKinds = 3;
const char* TierKindName(TierKind kind);

enum class FlushMode { kAsync, kSync };
// Reed-Solomon protection of memory-tier copies against DRAM errors:
// normal = 32 data + 4 parity shards per stripe (RS(36,32)), strong = 16 + 3
// (RS(19,16)); see docs/ecc.md.
enum class EccMode { kNone, kNormal, kStrong };

struct TierConfig {
  bool enabled = true;
  std::string path;        // may hold {dir} {node} {user} {dirkey}
  uint64_t capacity = 0;   // bytes per node; 0 = limited only by the device
  int keep = 0;            // versions kept; 0 = [retention] keep
  FlushMode flush = FlushMode::kAsync;  // how this tier receives drained copies
  int every = 1;           // drain every Nth checkpoint to this tier
  bool direct_io = true;   // O_DIRECT where the file system allows it
  EccMode ecc = EccMode::kNone;  // memory tier only
};

struct Config {
  std::string dir = "./cairn-data";
  std::string log_level = "warn";
  TierConfig tiers[kTierKinds];
  TierKind placement = TierKind::kMemory;  // the tier a checkpoint is written to
  int keep = 2;                            // [retention] keep
  int ranks_per_node = 0;                  // 0: real nodes

  const TierConfig& tier(TierKind kind) const { return tiers[static_cast<int>(kind)]; }
  TierConfig& tier(TierKind kind) { return tiers[static_cast<int>(kind)]; }
  int KeepFor(TierKind kind) const { return tier(kind).keep > 0 ? tier(kind).keep : keep; }
};

// One configuration key: where it lives, what it accepts, its default.
struct ConfigKey {
  std::string section;   // "tiers.memory"
  std::string name;      // "capacity"
  std::string type;      // "string", "int", "size", "bool", "enum", ...
  std::string fallback;  // default, as text
  std::string doc;       // one line for docs/config.md
  std::function<Status(Config&, const std::string&)> set;

  std::string FullName() const { return section + "." + name; }
  // CAIRN_TIERS_MEMORY_CAPACITY
  std::string EnvName() const;
};

const std::vector<ConfigKey>& ConfigKeys();

// Reads the environment through this function (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
// Every CAIRN_* variable name in the process environment.
using EnvNames = std::function<std::vector<std::string>()>;

EnvLookup ProcessEnvLookup();
EnvNames ProcessEnvNames();

// Defaults, then the TOML text (may be empty), then the environment.
Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin,
                           const EnvLookup& lookup, const EnvNames& names);

// config_path: NULL or "" means $CAIRN_CONFIG if set, else no file.
// `read_file` loads the file's text (config does no I/O of its own).
Result<Config> LoadConfig(const char* config_path, const EnvLookup& lookup,
                          const EnvNames& names,
                          const std::function<Result<std::string>(const std::string&)>& read_file);

// "4GiB", "512 MiB", "100MB", "4096" -> bytes.
Result<uint64_t> ParseSize(const std::string& text);

}  // namespace cairn

#endif  // CAIRN_BASE_CONFIG_H_
