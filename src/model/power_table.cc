#include "model/power_table.h"

#include <cstdlib>

#include <fmt/format.h>

#include "base/json.h"

namespace cairn {
namespace {

constexpr std::string_view kFormatName = "cairn-power-table";

// A per-frequency row of watts, each >= 0 (or > 0 when `positive`).
Result<std::vector<double>> ReadWatts(const JsonField& table, std::string_view key, size_t n,
                                      bool positive) {
  CAIRN_ASSIGN_OR_RETURN(JsonField field, table.Member(key));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> entries, field.Elements());
  if (entries.size() != n) {
    return field.Invalid(
        fmt::format("has {} entries, expected one per frequency ({})", entries.size(), n));
  }
  std::vector<double> out;
  for (const JsonField& e : entries) {
    CAIRN_ASSIGN_OR_RETURN(double w, e.Number());
    if (w < 0 || (positive && w == 0)) {
      return e.Invalid(fmt::format("must be {} 0 W, got {}", positive ? ">" : ">=", w));
    }
    out.push_back(w);
  }
  return out;
}

Result<std::vector<uint32_t>> ReadFrequencies(const JsonField& table) {
  CAIRN_ASSIGN_OR_RETURN(JsonField field, table.Member("frequencies_khz"));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> entries, field.Elements());
  if (entries.empty()) return field.Invalid("needs at least one frequency");
  std::vector<uint32_t> out;
  for (const JsonField& e : entries) {
    CAIRN_ASSIGN_OR_RETURN(uint64_t khz, e.Unsigned(UINT32_MAX));
    if (!out.empty() && khz <= out.back()) return field.Invalid("must be strictly ascending");
    out.push_back(static_cast<uint32_t>(khz));
  }
  return out;
}

Status ReadDevices(const JsonField& devices, PowerTable* table) {
  CAIRN_ASSIGN_OR_RETURN(auto members, devices.Members());
  for (const auto& [name, ops] : members) {
    CAIRN_RETURN_IF_ERROR(ops.CheckMembers({"read", "write"}));
    std::array<double, kIoOps> watts = {0, 0};
    for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
      auto w = ops.Find(IoOpName(op));
      if (!w) continue;
      CAIRN_ASSIGN_OR_RETURN(double value, w->Number());
      if (value < 0) return w->Invalid(fmt::format("must be >= 0 W, got {}", value));
      watts[static_cast<size_t>(op)] = value;
    }
    table->device_active_w[name] = watts;
  }
  return Status::Ok();
}

}  // namespace

size_t PowerTable::RowFor(uint32_t khz, bool* exact) const {
  size_t best = 0;
  for (size_t i = 0; i < frequencies_khz.size(); ++i) {
    if (std::llabs(static_cast<long long>(frequencies_khz[i]) - khz) <
        std::llabs(static_cast<long long>(frequencies_khz[best]) - khz)) {
      best = i;
    }
  }
  if (exact) *exact = frequencies_khz.size() == 1 || frequencies_khz[best] == khz;
  return best;
}

Result<PowerTable> ParsePowerTable(std::string_view json, std::string_view file) {
  const std::string document = fmt::format("power table '{}'", file);
  auto doc = ParseJson(json, document);
  if (!doc.ok()) return Status(Code::kConfig, doc.status().message());
  const JsonField root(*doc, document, Code::kConfig);
  CAIRN_RETURN_IF_ERROR(
      root.CheckMembers({"format", "frequencies_khz", "idle_w", "core_busy_w", "devices"}));
  if (auto format = root.Find("format")) {
    CAIRN_ASSIGN_OR_RETURN(std::string name, format->String());
    if (name != kFormatName) {
      return format->Invalid(fmt::format("is \"{}\", expected \"{}\"", name, kFormatName));
    }
  }
  PowerTable table;
  CAIRN_ASSIGN_OR_RETURN(table.frequencies_khz, ReadFrequencies(root));
  const size_t n = table.frequencies_khz.size();
  CAIRN_ASSIGN_OR_RETURN(table.idle_w, ReadWatts(root, "idle_w", n, true));
  CAIRN_ASSIGN_OR_RETURN(table.core_busy_w, ReadWatts(root, "core_busy_w", n, false));
  if (auto devices = root.Find("devices")) {
    CAIRN_RETURN_IF_ERROR(ReadDevices(*devices, &table));
  }
  return table;
}

}  // namespace cairn
