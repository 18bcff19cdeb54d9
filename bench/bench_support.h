// Helpers shared by the benchmarks that generate a Cairn configuration.
#ifndef CAIRN_BENCH_BENCH_SUPPORT_H_
#define CAIRN_BENCH_BENCH_SUPPORT_H_

#include <string>

namespace cairn_bench {

// s as a TOML basic string, quoted and escaped (paths may hold quotes).
inline std::string TomlString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace cairn_bench

#endif  // CAIRN_BENCH_BENCH_SUPPORT_H_
