// scr_config.h — SCR's configuration ($SCR_CONF_FILE, then SCR_* environment
// variables, which win) translated to Cairn settings and to the few values
// the SCR layer itself keeps (docs/compat.md, "SCR configuration").
#ifndef CAIRN_COMPAT_SCR_SCR_CONFIG_H_
#define CAIRN_COMPAT_SCR_SCR_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/common/cairn_settings.h"

namespace cairn_compat {

struct ScrOptions {
  CairnSettings cairn{"SCR"};
  std::string prefix;              // SCR_PREFIX, absolute (default: working directory)
  int checkpoint_interval = 1;     // SCR_CHECKPOINT_INTERVAL: Need_checkpoint calls
  int checkpoint_seconds = 0;      // SCR_CHECKPOINT_SECONDS (0: off)
  // SCR_CACHE_BYPASS = 1: a checkpoint's files are written and read at
  // their own paths under the prefix (a file shared by ranks needs it), not
  // cached by Cairn. Unset or 0: cached (SCR 3's default is 1).
  bool cache_bypass = false;
};

// The parameters an application sets with SCR_Config before SCR_Init, in
// SCR's grammar: "KEY=VALUE [CHILD=VALUE ...]" sets (spaces around '=' are
// allowed; a value may itself hold '='), "KEY=" unsets, "KEY" queries, and
// "KEY=VALUE CHILD" queries a child of a multi-item parameter ("STORE=/ssd
// COUNT"). A simple parameter keeps its latest value; a parameter set with
// children keeps one entry per value ("STORE=/dev/shm ...", "STORE=/ssd
// ..."), merging children set again. Keys are upper-cased.
class ScrConfigStore {
 public:
  struct Entry {
    std::string value;
    std::map<std::string, std::string> children;
  };

  // Applies a set or unset; a query returns the words to look up: {KEY} or
  // {KEY, VALUE, CHILD}. Errors name the string.
  Result<std::optional<std::vector<std::string>>> Apply(const std::string& config);
  // The latest entry of each key.
  std::map<std::string, Entry> Latest() const;
  // Child `child` of entry `value` of `key`, if set here.
  std::optional<std::string> Child(const std::string& key, const std::string& value,
                                   const std::string& child) const;
  // How many values `key` is set with here (several for STORE, CKPT, ...).
  size_t Count(const std::string& key) const;

 private:
  std::map<std::string, std::vector<Entry>> params_;  // per key, oldest first
};

// Reads the SCR_Config parameters `app`, the user configuration file
// ($SCR_CONF_FILE, or SCR_CONF_FILE set with SCR_Config) and the SCR_*
// environment; a later one wins, as in SCR (environment, then user file,
// then SCR_Config).
Result<ScrOptions> ReadScrOptions(const ScrConfigStore& app);

// The value SCR would use for a query of ScrConfigStore::Apply ({KEY} or
// {KEY, VALUE, CHILD}): environment, user file, then `app`; nullopt when
// none sets it.
Result<std::optional<std::string>> LookupScrParam(const std::vector<std::string>& query,
                                                  const ScrConfigStore& app);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_SCR_SCR_CONFIG_H_
