// Output of the `cairn` command: aligned text tables for people; for
// programs (--json) one JSON value per line, made with nlohmann/json, and
// errors on stderr as "cairn <command>: <cause>". Every `cairn` command
// prints through these, so each form is made in one place.
//
// Exit status shared by the commands over stored checkpoints:
//   0 success, 1 damage found (verify) or not every removal done,
//   2 error (bad arguments, configuration, storage that cannot be read),
//   3 nothing found: no checkpoint where the configuration points.
// Thread-safety: not thread-safe (writes to stdout and stderr).
#ifndef CAIRN_CLI_OUTPUT_H_
#define CAIRN_CLI_OUTPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace cairn {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDamage = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitNothingFound = 3;

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// A JSON object whose members print in the order they were set, so that a
// line reads in the same order as the table it stands for.
using JsonObject = nlohmann::ordered_json;

// Prints value on stdout as one line of compact JSON. Non-finite numbers
// print as null (JSON has no infinity); invalid UTF-8 in strings (a path
// is bytes) is replaced, never thrown.
void PrintJsonLine(const JsonObject& value);

// Prints "cairn <command>: <message>" on stderr; returns exit_code.
int ReportError(std::string_view command, std::string_view message, int exit_code);
int ReportError(std::string_view command, const Status& status, int exit_code = kExitError);

std::string HumanBytes(uint64_t bytes);

}  // namespace cairn

#endif  // CAIRN_CLI_OUTPUT_H_
