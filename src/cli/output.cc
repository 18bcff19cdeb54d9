#include "cli/output.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace cairn {

void Table::Print() const {
  std::vector<size_t> width(header_.size());
  for (size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    }
    // Empty last cells would leave trailing blanks.
    line.erase(line.find_last_not_of(' ') + 1);
    std::puts(line.c_str());
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

void PrintJsonLine(const JsonObject& value) {
  std::string line =
      value.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                 nlohmann::ordered_json::error_handler_t::replace);
  std::puts(line.c_str());
}

int ReportError(std::string_view command, std::string_view message, int exit_code) {
  fmt::print(stderr, "cairn {}: {}\n", command, message);
  return exit_code;
}

int ReportError(std::string_view command, const Status& status, int exit_code) {
  return ReportError(command, status.ToString(), exit_code);
}

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, kUnits[unit]);
}

}  // namespace cairn
