// Power table: the watts of a node that RAPL cannot measure, as a user states
// them for `cairn profile --power-table FILE.json` (docs/model.md "Measuring
// a profile"):
//   {"format": "cairn-power-table",                // optional
//    "frequencies_khz": [1400000, 2100000],        // ascending; one entry = any frequency
//    "idle_w": [250, 260],                         // whole node, idle, per frequency
//    "core_busy_w": [2.3, 4.6],                    // added per busy core, per frequency
//    "devices": {"ssd": {"read": 2.5, "write": 2.5}}}  // optional, active watts
// The profiler turns it into an IoProfile's table power (io_profile.h).
// Thread-safety: values and pure functions.
#ifndef CAIRN_MODEL_POWER_TABLE_H_
#define CAIRN_MODEL_POWER_TABLE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/io_profile.h"

namespace cairn {

struct PowerTable {
  std::vector<uint32_t> frequencies_khz;
  std::vector<double> idle_w;
  std::vector<double> core_busy_w;
  std::map<std::string, std::array<double, kIoOps>> device_active_w;  // by device name

  // Index of the row for frequency khz: the only row, the exact one, or the
  // nearest (then *exact is false).
  size_t RowFor(uint32_t khz, bool* exact) const;
};

// Errors are kConfig (the table is the user's), naming `file` and the
// member's JSON Pointer: "power table 'p.json': /idle_w/1: must be > 0".
Result<PowerTable> ParsePowerTable(std::string_view json, std::string_view file);

}  // namespace cairn

#endif  // CAIRN_MODEL_POWER_TABLE_H_
