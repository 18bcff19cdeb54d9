// Fuzzes the power table reader (model/power_table.h): ParsePowerTable on a
// user's JSON file, as `cairn profile --power-table` reads it. A refusal
// must be kConfig naming the file; an accepted table must have one row per
// frequency, positive finite watts, and a row for any frequency the
// profiler may run at.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "model/power_table.h"

namespace cairn::fuzz {
namespace {

void CheckTable(const PowerTable& table) {
  const size_t rows = table.frequencies_khz.size();
  CAIRN_FUZZ_CHECK(rows > 0 && table.idle_w.size() == rows && table.core_busy_w.size() == rows,
                   "{} frequencies, {} idle_w, {} core_busy_w", rows, table.idle_w.size(),
                   table.core_busy_w.size());
  for (size_t i = 0; i < rows; ++i) {
    CAIRN_FUZZ_CHECK(std::isfinite(table.idle_w[i]) && table.idle_w[i] > 0 &&
                         std::isfinite(table.core_busy_w[i]) && table.core_busy_w[i] >= 0,
                     "row {}: idle_w {}, core_busy_w {}", i, table.idle_w[i],
                     table.core_busy_w[i]);
  }
  for (uint32_t khz : {0u, table.frequencies_khz[0], table.frequencies_khz[rows - 1] + 1,
                       UINT32_MAX}) {
    bool exact = false;
    const size_t row = table.RowFor(khz, &exact);
    CAIRN_FUZZ_CHECK(row < rows, "RowFor({}) = {} of {} rows", khz, row, rows);
  }
}

void FuzzOne(std::string_view json) {
  const std::string file = "fuzz-power.json";
  Result<PowerTable> table = ParsePowerTable(json, file);
  if (!table.ok()) {
    CheckRefusal(table.status(), Code::kConfig, file);
    return;
  }
  CheckTable(*table);
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
