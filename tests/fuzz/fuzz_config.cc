// Fuzzes the configuration reader (base/config.h): ParseConfig on a TOML
// text and a set of environment variables, as cairn_init and the `cairn`
// command load them. The input is the TOML text, then, after the first NUL
// byte, environment entries NAME=VALUE separated by NUL bytes (the layout of
// /proc/PID/environ); only CAIRN_* names reach the reader, as in a process.
// A refusal must be kConfig; an accepted config must pass the validations
// the runtime relies on.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

using Environment = std::map<std::string, std::string>;

Environment ParseEnvironment(std::string_view entries) {
  Environment env;
  while (!entries.empty()) {
    const size_t end = std::min(entries.find('\0'), entries.size());
    const std::string_view entry = entries.substr(0, end);
    entries.remove_prefix(std::min(end + 1, entries.size()));
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || entry.rfind("CAIRN_", 0) != 0) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

void FuzzOne(std::string_view input) {
  const size_t split = std::min(input.find('\0'), input.size());
  const std::string toml(input.substr(0, split));
  const Environment env = ParseEnvironment(input.substr(std::min(split + 1, input.size())));
  EnvLookup lookup = [&](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  EnvNames names = [&] {
    std::vector<std::string> out;
    for (const auto& [name, value] : env) out.push_back(name);
    return out;
  };
  Result<Config> config = ParseConfig(toml, "fuzz.toml", lookup, names);
  if (!config.ok()) {
    CAIRN_FUZZ_CHECK(config.status().code() == Code::kConfig, "refused with {}: {}",
                     CodeName(config.status().code()), config.status().message());
    return;
  }
  Status placement = config->placement.Validate();
  Status interval = config->interval.Validate();
  CAIRN_FUZZ_CHECK(placement.ok(), "accepted an invalid [placement]: {}", placement.message());
  CAIRN_FUZZ_CHECK(interval.ok(), "accepted an invalid interval: {}", interval.message());
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
