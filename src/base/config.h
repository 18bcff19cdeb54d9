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
#include <variant>
#include <vector>

#include "base/status.h"

namespace cairn {

// Fastest first: a version drains from its tier to the enabled tiers after
// it. pmem (persistent memory, docs/pmem.md) is node-local like memory but
// survives a process crash and a power failure; disabled by default.
enum class TierKind { kMemory = 0, kPmem = 1, kSsd = 2, kPfs = 3 };
inline constexpr int kTierKinds = 4;
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
  // At a clean finalize, drain each name's newest version here if `every`
  // skipped it, so that a finished job's last state is on this tier.
  bool finalize_newest = false;
  bool direct_io = true;   // O_DIRECT where the file system allows it
  EccMode ecc = EccMode::kNone;  // memory tier only
  // Memory tier only: encode the ECC sidecar inside the checkpoint call, as
  // the part is written, instead of on the flusher thread after the commit
  // (docs/ecc.md): no unprotected window, at ~2x the call's time.
  bool ecc_sync = false;
  // Memory tier only: keep its copies at a clean cairn_finalize even when
  // a lower tier holds them (they are released by default: tmpfs is RAM).
  bool keep_at_finalize = false;
};

// A Julian year: the unit of warranties and of every lifetime Cairn prints.
inline constexpr double kSecondsPerYear = 365.25 * 24 * 3600;

// Where checkpoints go ([placement] policy). memory and ssd write every
// version to that tier and drain it to the enabled tiers below; clc and
// ratio choose memory, ssd or skip per version (policy/clc.h) and drain a
// memory version past the ssd tier, to the pfs only (one copy per level, as
// in the paper). A level whose tier is disabled falls to the next enabled
// tier below it.
enum class PlacementPolicy : int { kClc = 0, kMemory = 1, kSsd = 2, kRatio = 3 };
// "clc", "memory", "ssd", "ratio".
const char* PlacementPolicyName(PlacementPolicy policy);
// clc and ratio choose a tier per version; memory and ssd always use theirs.
inline bool ChoosesPerVersion(PlacementPolicy policy) {
  return policy == PlacementPolicy::kClc || policy == PlacementPolicy::kRatio;
}

// The Checkpoint Location Controller's settings ([placement]).
struct ClcSettings {
  PlacementPolicy policy = PlacementPolicy::kClc;
  // Switches of the clc policy: each one enables one test of Algorithm 1.
  bool lifetime = true;   // lines 4-5, 9-10: Eq. (1) vs Eq. (2)
  bool slowdown = true;   // lines 6-7: Eq. (3) against slowdown_bound
  bool size = true;       // lines 12-15: skip what would go to memory but does not fit
  double slowdown_bound = 0.10;  // (0, 1)
  // Checkpoint numbers that are multiples of this go to the SSD whatever
  // the policy (so that a durable copy exists at a known distance); 0: off.
  int64_t force_ssd_every = 0;
  // Policy ratio: checkpoint numbers that are multiples of this go to the
  // SSD, the others to memory. 10 is the paper's "9:1".
  int64_t ratio = 10;
  // Span of B_SSD in seconds; 0: since the run started (the paper).
  double bandwidth_window = 0;

  // kInvalidArgument naming the key: bound outside (0, 1), negative
  // force_ssd_every, ratio < 1, window neither 0 nor >= 1 second.
  Status Validate() const;
};

// What the optimal checkpoint interval minimizes ([model] objective).
enum class IntervalObjective {
  kTime,    // expected wall-clock time per second of useful computation
  kEnergy,  // EPE: expected energy per second of useful computation
};

// When cairn_should_checkpoint says a checkpoint is due ([placement]
// interval, [model]); policy/interval_advisor.h.
enum class IntervalMode { kOff, kAuto, kFixed };
struct IntervalSettings {
  IntervalMode mode = IntervalMode::kOff;
  double fixed_seconds = 0;          // kFixed: seconds of compute between checkpoints
  double mtbf_seconds = 86400;       // the job's mean time between failures (1/λ)
  IntervalObjective objective = IntervalObjective::kTime;
  double power_compute = 0;          // W_A, W_C, W_R of a node, in watts (kEnergy)
  double power_checkpoint = 0;
  double power_restart = 0;

  // kInvalidArgument naming the key: the energy objective without W_A, or
  // with neither W_C nor W_R.
  Status Validate() const;
};

// How many of a node's ranks write (or read) a tier at once ([io]).
struct IoSettings {
  bool auto_parallelism = false;  // from the I/O profile (runtime/io_parallelism.h)
  int parallelism = 0;            // fixed; 0: all of the node's ranks at once
  std::string profile = "{dir}/cairn-profile.json";  // `cairn profile --out`
};

// Protection of node-local checkpoints against the loss of whole nodes
// ([redundancy]; redundancy/ and docs/redundancy.md): each rank's part is
// encoded within a group of ranks on distinct nodes.
enum class RedundancyScheme {
  kNone,
  kPartner,  // each member keeps a copy of its left neighbour's part
  kXor,      // one XOR parity, spread in slices over the members
  kRs,       // `parity` Reed-Solomon parities, spread over the members
};
// "none", "partner", "xor", "rs".
const char* RedundancySchemeName(RedundancyScheme scheme);

struct RedundancySettings {
  RedundancyScheme scheme = RedundancyScheme::kNone;
  int group_size = 0;  // ranks per group, each on its own node; 0: up to 8 nodes
  int parity = 2;      // rs: parities per stripe (m), lost members survived
  bool sync = false;   // checkpoint returns only once the parity is committed
};

// Page-level deduplication of checkpoints ([dedup]; dedup/ and docs/dedup.md):
// off writes every page; local stores each distinct page of a rank once;
// collective also stores a page that several ranks hold once in the job
// (the paper's top-K); incremental adds references to the previous version
// for unchanged pages (with local dedup), collective+incremental does both.
enum class DedupMode { kOff, kLocal, kCollective, kIncremental, kCollectiveIncremental };
// "off", "local", "collective", "incremental", "collective+incremental".
const char* DedupModeName(DedupMode mode);
// Page digests; kTestCollide is an 8-bit digest for collision tests only.
enum class DedupHash { kXxh3_128, kSha1, kSha256, kTestCollide };

struct DedupSettings {
  DedupMode mode = DedupMode::kOff;
  int page_size = 4096;                 // bytes per page
  int64_t threshold = int64_t{1} << 17; // most frequent pages the collective step keeps
  DedupHash hash = DedupHash::kXxh3_128;
  bool verify = false;  // compare bytes before a page is a local duplicate
  int full_every = 8;   // incremental: every Nth version stores every page
  // collective: a top-K that found no page two ranks hold is skipped in
  // the versions after it, up to every Nth (1: never skipped); and after a
  // version whose references saved at most min_saving of every rank's
  // pages, the versions up to every Nth are written whole, unhashed
  int probe_every = 8;
  double min_saving = 0.02;
  bool collective() const {
    return mode == DedupMode::kCollective || mode == DedupMode::kCollectiveIncremental;
  }
  bool incremental() const {
    return mode == DedupMode::kIncremental || mode == DedupMode::kCollectiveIncremental;
  }
};

// Transparent mode ([transparent]; docs/transparent.md): the heap of an
// unmodified MPI program, preloaded with libcairn_intercept.so, and the
// signal that asks for a checkpoint (also honoured by libcairn itself).
// How the arena's written pages are found (transparent/dirty_tracker.h).
enum class DirtyMethod { kAuto, kUffdWp, kSoftDirty, kMprotect, kNone };
// "auto", "uffd-wp", "soft-dirty", "mprotect", "none".
const char* DirtyMethodName(DirtyMethod method);

struct TransparentSettings {
  int signal = 10;                    // SIGUSR1 on Linux; 0: no signal trigger
  std::string name = "transparent";   // checkpoint name of signal-triggered versions
  uint64_t arena_address = uint64_t{0x200000000000};  // 32 TiB: far from the kernel's picks
  uint64_t arena_size = uint64_t{64} << 30;           // reserved, committed as used
  uint64_t stack_size = uint64_t{64} << 20;           // main's stack, at a fixed address
  DirtyMethod tracking = DirtyMethod::kAuto;
  // Re-execute the program once without address-space randomisation, so
  // that code and library data (return addresses, MPI_COMM_WORLD) sit at
  // the same addresses in every run.
  bool fixed_layout = true;
  // MPI_Wait* are safe points too (after the real wait). Only for programs
  // whose ranks all call them the same number of times (the query is a
  // collective): off by default.
  bool wait_safe_points = false;
};

// The endurance of each node's SSD ([tiers.ssd]).
struct SsdEndurance {
  double rating_bytes = 14.6e15;             // PBW_rating (endurance_tbw x 1e12)
  double warranty_seconds = 5 * kSecondsPerYear;
  double already_written_bytes = 0;          // written before Cairn kept a ledger
};

// A tier that is off unless its section enables it (the pmem tier's default).
inline TierConfig DisabledTier() {
  TierConfig tier;
  tier.enabled = false;
  return tier;
}

struct Config {
  std::string dir = "./cairn-data";
  std::string log_level = "warn";
  // Added to the nice value of Cairn's background threads (drains, ECC and
  // redundancy encodes, slot reservation); 0: the application's priority.
  int64_t background_nice = 0;
  // The pmem tier is off unless configured (as its key's default).
  TierConfig tiers[kTierKinds] = {{}, DisabledTier(), {}, {}};
  ClcSettings placement{.policy = PlacementPolicy::kMemory};  // as the key's default
  IntervalSettings interval;
  IoSettings io;
  RedundancySettings redundancy;
  TransparentSettings transparent;
  DedupSettings dedup;
  // [tiers.ssd] endurance, in the keys' units (ssd_endurance() converts).
  double ssd_endurance_tbw = 14600;
  double ssd_endurance_pbw = 0;  // 0: use ssd_endurance_tbw
  double ssd_warranty_years = 5;
  uint64_t ssd_already_written = 0;
  int keep = 2;                            // [retention] keep
  int ranks_per_node = 0;                  // 0: real nodes

  const TierConfig& tier(TierKind kind) const { return tiers[static_cast<int>(kind)]; }
  TierConfig& tier(TierKind kind) { return tiers[static_cast<int>(kind)]; }
  int KeepFor(TierKind kind) const { return tier(kind).keep > 0 ? tier(kind).keep : keep; }
  SsdEndurance ssd_endurance() const;
  // kConfig naming both keys when [dedup] is on and the memory tier's ECC
  // sidecar is to be written inside the checkpoint call (ecc_sync): a
  // pages file's sidecar is encoded after the commit (docs/dedup.md).
  Status CheckDedupWithEcc() const;
};

// Text to be parsed according to a key's type: the value of an environment
// variable, or a key's built-in default.
struct ConfigText {
  std::string text;
};
// The value given for one key. A TOML value keeps its type (a string, an
// integer, a float or a boolean) and a key accepts only the types it
// documents: `keep = "2"` is an error, not the number 2.
using ConfigValue = std::variant<ConfigText, std::string, int64_t, double, bool>;

// One configuration key: where it lives, what it accepts, its default.
struct ConfigKey {
  std::string section;   // "tiers.memory"
  std::string name;      // "capacity"
  std::string type;      // "string", "path", "int (lo..hi)", "size", "bool", choices, ...
  std::string fallback;  // default, as text
  std::string doc;       // one line for docs/config.md
  // Stores the value in the config; kConfig naming the key, the value and
  // what was expected when the value has the wrong type or is out of range.
  std::function<Status(Config&, const ConfigValue&)> set;
  // The key's value in a config, as text (what `set` would read back).
  std::function<std::string(const Config&)> show;
  // The key may differ between the ranks of a job (a node's own paths,
  // devices and log level); every other key must be the same on all
  // (Engine::Create checks it).
  bool per_rank = false;

  std::string FullName() const { return section + "." + name; }
  // CAIRN_TIERS_MEMORY_CAPACITY
  std::string EnvName() const;
};

const std::vector<ConfigKey>& ConfigKeys();
// The key `section`.`name`; null if there is none.
const ConfigKey* FindKey(const std::string& section, const std::string& name);

// Reads the environment through this function (tests pass their own).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
// Every CAIRN_* variable name in the process environment.
using EnvNames = std::function<std::vector<std::string>()>;

EnvLookup ProcessEnvLookup();
EnvNames ProcessEnvNames();

// A config file is a few hundred bytes; anything this long is not one.
inline constexpr uint64_t kMaxConfigFileBytes = 1 << 20;
// Tables, dotted-key parts, arrays and inline tables around any value
// (Cairn's own keys are three deep); deeper input is refused before toml++
// parses it, since toml++ recurses once per level.
inline constexpr int kMaxConfigDepth = 16;

// Defaults, then the TOML text (may be empty), then the environment.
// kConfig naming the file (origin) and line, the key or the variable.
Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin,
                           const EnvLookup& lookup, const EnvNames& names);

// Reads a whole regular file of at most max_bytes; an error otherwise
// (config does no I/O of its own: the caller passes its Env's reader).
using ReadConfigFile =
    std::function<Result<std::string>(const std::string& path, uint64_t max_bytes)>;

// config_path: NULL or "" means $CAIRN_CONFIG if set, else no file. The
// file is read with read_file(path, kMaxConfigFileBytes).
Result<Config> LoadConfig(const char* config_path, const EnvLookup& lookup,
                          const EnvNames& names, const ReadConfigFile& read_file);

// "4GiB", "512 MiB", "100MB", "4096" -> bytes; kConfig saying why not
// (no number, an unknown unit, more than 2^64 - 1 bytes).
Result<uint64_t> ParseSize(const std::string& text);

}  // namespace cairn

#endif  // CAIRN_BASE_CONFIG_H_
