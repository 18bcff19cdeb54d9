// Helpers shared by the benchmarks: command lines through CLI11, JSON lines
// through nlohmann/json and generated configurations through toml++, so
// that no benchmark quotes, escapes or parses by hand.
#ifndef CAIRN_BENCH_BENCH_SUPPORT_H_
#define CAIRN_BENCH_BENCH_SUPPORT_H_

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace cairn_bench {

// The median of samples (the mean of the middle two for an even count; 0
// for none): what the benchmarks report of repeated timings.
inline double Median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

// A JSON object whose members print in the order they were set.
using Json = nlohmann::ordered_json;

// Prints value on stdout as one line of compact JSON, then flushes (the
// benchmarks report progress on stderr between lines). Non-finite numbers
// print as null: JSON has no infinity.
inline void PrintJsonLine(const Json& value) {
  std::string line = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::puts(line.c_str());
  std::fflush(stdout);
}

// A TOML document as text; toml++ quotes and escapes every string (paths
// may hold quotes or backslashes).
inline std::string TomlText(const toml::table& document) {
  std::ostringstream out;
  out << toml::toml_formatter(document) << '\n';
  return out.str();
}

// A number option in [min, max]; unlike CLI::Range it also refuses nan.
inline CLI::Validator FiniteRange(double min, double max) {
  std::ostringstream range;
  range << "FINITE in [" << min << " - " << max << "]";
  return CLI::Validator(
      [min, max, text = range.str()](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
          return "Value " + value + " not " + text;
        }
        return "";
      },
      range.str());
}

// Parses the command line into app. Returns nullopt to go on, else the
// exit status: 0 after --help, 2 after a usage error. Only a `speaker`
// (rank 0 of an MPI benchmark) prints the help or the error.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv,
                                           bool speaker = true) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::ostringstream silent;
    if (speaker) {
      app.exit(e);
    } else {
      app.exit(e, silent, silent);
    }
    return e.get_exit_code() == 0 ? 0 : 2;
  }
}

}  // namespace cairn_bench

#endif  // CAIRN_BENCH_BENCH_SUPPORT_H_
