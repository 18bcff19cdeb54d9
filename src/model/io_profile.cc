#include "model/io_profile.h"

#include <cmath>
#include <initializer_list>

#include "model/json.h"

namespace cairn {
namespace {

constexpr std::string_view kFormatName = "cairn-io-profile";
// Version 2 added block sizes (DeviceIoProfile::blocks); version 1 devices
// hold their grids directly and read as one block of unrecorded size.
// Version 2 devices may say what their parallelism counts
// ("parallelism_kind"); without it, processes, which is what version 1 meant.
constexpr int kFormatVersion = 2;
constexpr int kOldestFormatVersion = 1;
constexpr size_t kMaxDeviceName = 64;
// Far above any node, low enough that a typo (48000 for 48) is caught.
constexpr int kMaxCount = 1 << 16;
// Far above what one read(2) or write(2) moves (Linux: 2 GiB - 4 KiB).
constexpr uint64_t kMaxBlockSize = uint64_t{1} << 31;

Status Invalid(const std::string& path, const std::string& what) {
  return Status(Code::kInvalidArgument, fmt::format("I/O profile: {}: {}", path, what));
}

bool ValidDeviceName(const std::string& name) {
  if (name.empty() || name.size() > kMaxDeviceName || name[0] == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// A per-frequency vector: n entries, each finite and >= min (or > min).
Status CheckVector(const std::string& path, const std::vector<double>& v, size_t n, double min,
                   bool strict) {
  if (v.size() != n) {
    return Invalid(path,
                   fmt::format("has {} entries, expected one per frequency ({})", v.size(), n));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i]) || v[i] < min || (strict && v[i] == min)) {
      return Invalid(fmt::format("{}[{}]", path, i), fmt::format("must be finite and {} {}, got {}",
                                                                 strict ? ">" : ">=", min, v[i]));
    }
  }
  return Status::Ok();
}

Status CheckGrid(const std::string& path, const std::vector<std::vector<double>>& grid,
                 size_t rows, size_t cols, double min, bool strict, double max) {
  if (grid.size() != rows) {
    return Invalid(path, fmt::format("has {} rows, expected one per frequency ({})", grid.size(),
                                     rows));
  }
  for (size_t f = 0; f < rows; ++f) {
    std::string row = fmt::format("{}[{}]", path, f);
    if (grid[f].size() != cols) {
      return Invalid(row, fmt::format("has {} entries, expected one per parallelism level ({})",
                                      grid[f].size(), cols));
    }
    for (size_t p = 0; p < cols; ++p) {
      double v = grid[f][p];
      if (!std::isfinite(v) || v < min || (strict && v == min) || v > max) {
        return Invalid(fmt::format("{}[{}]", row, p),
                       fmt::format("must be finite, {} {} and <= {}, got {}", strict ? ">" : ">=",
                                   min, max, v));
      }
    }
  }
  return Status::Ok();
}

// ---- JSON reading: type errors are kCorrupt and name the member's path.

Status TypeError(const std::string& path, const char* expected, const JsonValue& got) {
  return Status(Code::kCorrupt, fmt::format("I/O profile: {}: expected {}, got {}", path,
                                            expected, JsonTypeName(got.type())));
}

Status CheckMembers(const JsonValue& obj, const std::string& path,
                    std::initializer_list<std::string_view> allowed) {
  if (!obj.is_object()) return TypeError(path, "an object", obj);
  for (const auto& member : obj.AsObject()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || member.first == name;
    if (!known) {
      return Status(Code::kCorrupt,
                    fmt::format("I/O profile: {}: unknown member \"{}\"", path, member.first));
    }
  }
  return Status::Ok();
}

Result<const JsonValue*> Required(const JsonValue& obj, const std::string& path,
                                  std::string_view key) {
  const JsonValue* v = obj.Find(key);
  if (v == nullptr) {
    return Status(Code::kCorrupt,
                  fmt::format("I/O profile: {}: missing member \"{}\"", path, key));
  }
  return v;
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Result<double> ReadNumber(const JsonValue& v, const std::string& path) {
  if (!v.is_number()) return TypeError(path, "a number", v);
  return v.AsNumber();
}

Result<int64_t> ReadInteger(const JsonValue& v, const std::string& path, int64_t min,
                            int64_t max) {
  CAIRN_ASSIGN_OR_RETURN(double d, ReadNumber(v, path));
  if (d != std::trunc(d) || d < static_cast<double>(min) || d > static_cast<double>(max)) {
    return Status(Code::kCorrupt,
                  fmt::format("I/O profile: {}: expected an integer in [{}, {}], got {}", path,
                              min, max, d));
  }
  return static_cast<int64_t>(d);
}

Result<std::string> ReadString(const JsonValue& v, const std::string& path) {
  if (!v.is_string()) return TypeError(path, "a string", v);
  return v.AsString();
}

Result<std::vector<double>> ReadNumbers(const JsonValue& v, const std::string& path) {
  if (!v.is_array()) return TypeError(path, "an array of numbers", v);
  std::vector<double> out;
  for (size_t i = 0; i < v.AsArray().size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(double d, ReadNumber(v.AsArray()[i], fmt::format("{}[{}]", path, i)));
    out.push_back(d);
  }
  return out;
}

Result<std::vector<std::vector<double>>> ReadGrid(const JsonValue& v, const std::string& path) {
  if (!v.is_array()) return TypeError(path, "an array of arrays of numbers", v);
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < v.AsArray().size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(auto row, ReadNumbers(v.AsArray()[i], fmt::format("{}[{}]", path, i)));
    out.push_back(std::move(row));
  }
  return out;
}

Result<IoOpProfile> ReadOp(const JsonValue& v, const std::string& path) {
  CAIRN_RETURN_IF_ERROR(CheckMembers(v, path, {"throughput_bps", "busy_cores", "watts"}));
  IoOpProfile op;
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* t, Required(v, path, "throughput_bps"));
  CAIRN_ASSIGN_OR_RETURN(op.throughput_bps, ReadGrid(*t, Join(path, "throughput_bps")));
  if (const JsonValue* b = v.Find("busy_cores")) {
    CAIRN_ASSIGN_OR_RETURN(op.busy_cores, ReadGrid(*b, Join(path, "busy_cores")));
  }
  if (const JsonValue* w = v.Find("watts")) {
    CAIRN_ASSIGN_OR_RETURN(op.watts, ReadGrid(*w, Join(path, "watts")));
  }
  return op;
}

// The read and write grids of one block (v2), or of a whole device (v1).
Status ReadOps(const JsonValue& v, const std::string& path, IoBlockProfile* block) {
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    CAIRN_ASSIGN_OR_RETURN(const JsonValue* o, Required(v, path, IoOpName(op)));
    CAIRN_ASSIGN_OR_RETURN(block->op(op), ReadOp(*o, Join(path, IoOpName(op))));
  }
  return Status::Ok();
}

Result<DeviceIoProfile> ReadDevice(const JsonValue& v, const std::string& path, int64_t version) {
  if (version == 1) {
    CAIRN_RETURN_IF_ERROR(
        CheckMembers(v, path, {"name", "parallelism", "active_w", "read", "write"}));
  } else {
    CAIRN_RETURN_IF_ERROR(CheckMembers(
        v, path, {"name", "parallelism", "parallelism_kind", "active_w", "blocks"}));
  }
  DeviceIoProfile d;
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* name, Required(v, path, "name"));
  CAIRN_ASSIGN_OR_RETURN(d.name, ReadString(*name, Join(path, "name")));
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* par, Required(v, path, "parallelism"));
  std::string par_path = Join(path, "parallelism");
  if (!par->is_array()) return TypeError(par_path, "an array of integers", *par);
  for (size_t i = 0; i < par->AsArray().size(); ++i) {
    std::string item = fmt::format("{}[{}]", par_path, i);
    CAIRN_ASSIGN_OR_RETURN(int64_t p, ReadInteger(par->AsArray()[i], item, 1, kMaxCount));
    d.parallelism.push_back(static_cast<int>(p));
  }
  if (const JsonValue* kind = v.Find("parallelism_kind")) {
    const std::string kind_path = Join(path, "parallelism_kind");
    CAIRN_ASSIGN_OR_RETURN(std::string kind_name, ReadString(*kind, kind_path));
    if (kind_name == ParallelismKindName(ParallelismKind::kProcesses)) {
      d.parallelism_kind = ParallelismKind::kProcesses;
    } else if (kind_name == ParallelismKindName(ParallelismKind::kThreads)) {
      d.parallelism_kind = ParallelismKind::kThreads;
    } else {
      return Status(Code::kCorrupt, fmt::format("I/O profile: {} is \"{}\", expected "
                                                "\"processes\" or \"threads\"",
                                                kind_path, kind_name));
    }
  }
  if (const JsonValue* active = v.Find("active_w")) {
    std::string active_path = Join(path, "active_w");
    CAIRN_RETURN_IF_ERROR(CheckMembers(*active, active_path, {"read", "write"}));
    for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
      if (const JsonValue* w = active->Find(IoOpName(op))) {
        CAIRN_ASSIGN_OR_RETURN(d.active_w[static_cast<int>(op)],
                               ReadNumber(*w, Join(active_path, IoOpName(op))));
      }
    }
  }
  if (version == 1) {
    d.blocks.emplace_back();
    CAIRN_RETURN_IF_ERROR(ReadOps(v, path, &d.blocks.back()));
    return d;
  }
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* blocks, Required(v, path, "blocks"));
  const std::string blocks_path = Join(path, "blocks");
  if (!blocks->is_array()) return TypeError(blocks_path, "an array of objects", *blocks);
  for (size_t i = 0; i < blocks->AsArray().size(); ++i) {
    const JsonValue& b = blocks->AsArray()[i];
    const std::string block_path = fmt::format("{}[{}]", blocks_path, i);
    CAIRN_RETURN_IF_ERROR(CheckMembers(b, block_path, {"block_size", "read", "write"}));
    IoBlockProfile block;
    CAIRN_ASSIGN_OR_RETURN(const JsonValue* size, Required(b, block_path, "block_size"));
    CAIRN_ASSIGN_OR_RETURN(int64_t bytes, ReadInteger(*size, Join(block_path, "block_size"), 0,
                                                      static_cast<int64_t>(kMaxBlockSize)));
    block.block_size = static_cast<uint64_t>(bytes);
    CAIRN_RETURN_IF_ERROR(ReadOps(b, block_path, &block));
    d.blocks.push_back(std::move(block));
  }
  return d;
}

Result<IoProfile> ReadProfile(const JsonValue& root) {
  CAIRN_RETURN_IF_ERROR(
      CheckMembers(root, "(top)", {"format", "version", "description", "cpu", "power", "devices"}));
  IoProfile profile;
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* format, Required(root, "(top)", "format"));
  CAIRN_ASSIGN_OR_RETURN(std::string format_name, ReadString(*format, "format"));
  if (format_name != kFormatName) {
    return Status(Code::kCorrupt, fmt::format("I/O profile: format is \"{}\", expected \"{}\"",
                                              format_name, kFormatName));
  }
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* version, Required(root, "(top)", "version"));
  CAIRN_ASSIGN_OR_RETURN(int64_t v, ReadInteger(*version, "version", 0, kMaxCount));
  if (v < kOldestFormatVersion || v > kFormatVersion) {
    return Status(Code::kUnsupported,
                  fmt::format("I/O profile: version {} is not supported (this build reads {} "
                              "to {})",
                              v, kOldestFormatVersion, kFormatVersion));
  }
  if (const JsonValue* d = root.Find("description")) {
    CAIRN_ASSIGN_OR_RETURN(profile.description, ReadString(*d, "description"));
  }

  CAIRN_ASSIGN_OR_RETURN(const JsonValue* cpu, Required(root, "(top)", "cpu"));
  CAIRN_RETURN_IF_ERROR(CheckMembers(*cpu, "cpu", {"frequencies_khz", "cores"}));
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* freqs, Required(*cpu, "cpu", "frequencies_khz"));
  if (!freqs->is_array()) return TypeError("cpu.frequencies_khz", "an array of integers", *freqs);
  for (size_t i = 0; i < freqs->AsArray().size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(int64_t f, ReadInteger(freqs->AsArray()[i],
                                                  fmt::format("cpu.frequencies_khz[{}]", i), 0,
                                                  UINT32_MAX));
    profile.frequencies_khz.push_back(static_cast<uint32_t>(f));
  }
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* cores, Required(*cpu, "cpu", "cores"));
  CAIRN_ASSIGN_OR_RETURN(int64_t ncores, ReadInteger(*cores, "cpu.cores", 1, kMaxCount));
  profile.cores = static_cast<int>(ncores);

  CAIRN_ASSIGN_OR_RETURN(const JsonValue* power, Required(root, "(top)", "power"));
  CAIRN_RETURN_IF_ERROR(CheckMembers(*power, "power", {"source", "idle_w", "core_busy_w"}));
  CAIRN_ASSIGN_OR_RETURN(const JsonValue* source, Required(*power, "power", "source"));
  CAIRN_ASSIGN_OR_RETURN(std::string source_name, ReadString(*source, "power.source"));
  if (source_name == PowerSourceName(PowerSource::kRapl)) {
    profile.power_source = PowerSource::kRapl;
  } else if (source_name == PowerSourceName(PowerSource::kTable)) {
    profile.power_source = PowerSource::kTable;
  } else {
    return Status(Code::kCorrupt, fmt::format("I/O profile: power.source is \"{}\", expected "
                                              "\"rapl\" or \"table\"",
                                              source_name));
  }
  if (const JsonValue* idle = power->Find("idle_w")) {
    CAIRN_ASSIGN_OR_RETURN(profile.idle_w, ReadNumbers(*idle, "power.idle_w"));
  }
  if (const JsonValue* busy = power->Find("core_busy_w")) {
    CAIRN_ASSIGN_OR_RETURN(profile.core_busy_w, ReadNumbers(*busy, "power.core_busy_w"));
  }

  CAIRN_ASSIGN_OR_RETURN(const JsonValue* devices, Required(root, "(top)", "devices"));
  if (!devices->is_array()) return TypeError("devices", "an array of objects", *devices);
  for (size_t i = 0; i < devices->AsArray().size(); ++i) {
    CAIRN_ASSIGN_OR_RETURN(DeviceIoProfile d,
                           ReadDevice(devices->AsArray()[i], fmt::format("devices[{}]", i), v));
    profile.devices.push_back(std::move(d));
  }
  return profile;
}

// ---- JSON writing.

JsonValue NumberArray(const std::vector<double>& v) {
  JsonValue::Array a;
  for (double d : v) a.emplace_back(d);
  return a;
}

JsonValue Grid(const std::vector<std::vector<double>>& grid) {
  JsonValue::Array a;
  for (const auto& row : grid) a.push_back(NumberArray(row));
  return a;
}

}  // namespace

const char* IoOpName(IoOp op) { return op == IoOp::kRead ? "read" : "write"; }

const char* PowerSourceName(PowerSource source) {
  return source == PowerSource::kRapl ? "rapl" : "table";
}

const char* ParallelismKindName(ParallelismKind kind) {
  return kind == ParallelismKind::kThreads ? "threads" : "processes";
}

const DeviceIoProfile* IoProfile::FindDevice(std::string_view name) const {
  for (const DeviceIoProfile& d : devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

Status ValidateIoProfile(const IoProfile& profile) {
  const auto& freqs = profile.frequencies_khz;
  if (freqs.empty()) return Invalid("cpu.frequencies_khz", "needs at least one frequency");
  for (size_t i = 0; i < freqs.size(); ++i) {
    if (freqs.size() > 1 && freqs[i] == 0) {
      return Invalid(fmt::format("cpu.frequencies_khz[{}]", i),
                     "0 (unknown) is allowed only as the single frequency of a node without DVFS");
    }
    if (i > 0 && freqs[i] <= freqs[i - 1]) {
      return Invalid("cpu.frequencies_khz", "must be strictly ascending");
    }
  }
  if (profile.cores < 1 || profile.cores > kMaxCount) {
    return Invalid("cpu.cores",
                   fmt::format("must be in [1, {}], got {}", kMaxCount, profile.cores));
  }
  const size_t nf = freqs.size();
  const bool table = profile.power_source == PowerSource::kTable;
  if (table || !profile.idle_w.empty()) {
    CAIRN_RETURN_IF_ERROR(CheckVector("power.idle_w", profile.idle_w, nf, 0, table));
  }
  if (table || !profile.core_busy_w.empty()) {
    CAIRN_RETURN_IF_ERROR(CheckVector("power.core_busy_w", profile.core_busy_w, nf, 0, false));
  }
  if (profile.devices.empty()) return Invalid("devices", "needs at least one device");
  for (size_t i = 0; i < profile.devices.size(); ++i) {
    const DeviceIoProfile& d = profile.devices[i];
    std::string path = fmt::format("devices[{}]", i);
    if (!ValidDeviceName(d.name)) {
      return Invalid(path + ".name", fmt::format("\"{}\" is not 1..{} characters of "
                                                 "[A-Za-z0-9._-] not starting with '.'",
                                                 d.name, kMaxDeviceName));
    }
    for (size_t j = 0; j < i; ++j) {
      if (profile.devices[j].name == d.name) {
        return Invalid(path + ".name", fmt::format("\"{}\" appears twice", d.name));
      }
    }
    if (d.parallelism.empty()) return Invalid(path + ".parallelism", "needs at least one level");
    for (size_t j = 0; j < d.parallelism.size(); ++j) {
      if (d.parallelism[j] < 1 || d.parallelism[j] > kMaxCount ||
          (j > 0 && d.parallelism[j] <= d.parallelism[j - 1])) {
        return Invalid(path + ".parallelism",
                       fmt::format("must be strictly ascending integers in [1, {}]", kMaxCount));
      }
    }
    for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
      double active = d.active_w[static_cast<int>(op)];
      if (!std::isfinite(active) || active < 0) {
        return Invalid(fmt::format("{}.active_w.{}", path, IoOpName(op)),
                       fmt::format("must be finite and >= 0, got {}", active));
      }
    }
    if (d.blocks.empty()) return Invalid(path + ".blocks", "needs at least one block size");
    for (size_t b = 0; b < d.blocks.size(); ++b) {
      const IoBlockProfile& block = d.blocks[b];
      const std::string block_path = fmt::format("{}.blocks[{}]", path, b);
      if (block.block_size > kMaxBlockSize ||
          (block.block_size == 0 && d.blocks.size() > 1) ||
          (b > 0 && block.block_size <= d.blocks[b - 1].block_size)) {
        return Invalid(block_path + ".block_size",
                       fmt::format("block sizes must be strictly ascending in [1, {}] (0, not "
                                   "recorded, only as the one block), got {}",
                                   kMaxBlockSize, block.block_size));
      }
      for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
        const std::string op_path = Join(block_path, IoOpName(op));
        const IoOpProfile& o = block.op(op);
        const size_t np = d.parallelism.size();
        CAIRN_RETURN_IF_ERROR(CheckGrid(Join(op_path, "throughput_bps"), o.throughput_bps, nf, np,
                                        0, true, HUGE_VAL));
        if (table || !o.busy_cores.empty()) {
          CAIRN_RETURN_IF_ERROR(CheckGrid(Join(op_path, "busy_cores"), o.busy_cores, nf, np, 0,
                                          false, profile.cores));
        }
        if (!table || !o.watts.empty()) {
          CAIRN_RETURN_IF_ERROR(
              CheckGrid(Join(op_path, "watts"), o.watts, nf, np, 0, true, HUGE_VAL));
        }
      }
    }
  }
  return Status::Ok();
}

IoPoint IoProfilePoint(const IoProfile& profile, const DeviceIoProfile& device, IoOp op,
                       size_t frequency_index, size_t parallelism_index, size_t block_index) {
  const IoOpProfile& o = device.blocks[block_index].op(op);
  IoPoint point;
  point.throughput_bps = o.throughput_bps[frequency_index][parallelism_index];
  double node_w = 0;
  if (profile.power_source == PowerSource::kRapl) {
    node_w = o.watts[frequency_index][parallelism_index];
  } else {
    const double busy = o.busy_cores[frequency_index][parallelism_index];
    node_w = profile.idle_w[frequency_index] + busy * profile.core_busy_w[frequency_index];
  }
  point.watts = node_w + device.active_w[static_cast<int>(op)];
  return point;
}

Result<IoProfile> ParseIoProfile(std::string_view json) {
  auto root = ParseJson(json);
  if (!root.ok()) return root.status().Annotate("I/O profile");
  CAIRN_ASSIGN_OR_RETURN(IoProfile profile, ReadProfile(*root));
  CAIRN_RETURN_IF_ERROR(ValidateIoProfile(profile));
  return profile;
}

std::string SerializeIoProfile(const IoProfile& profile) {
  JsonValue root = JsonValue::Object{};
  root.Set("format", std::string(kFormatName));
  root.Set("version", kFormatVersion);
  if (!profile.description.empty()) root.Set("description", profile.description);

  JsonValue cpu = JsonValue::Object{};
  JsonValue::Array freqs;
  for (uint32_t f : profile.frequencies_khz) freqs.emplace_back(f);
  cpu.Set("frequencies_khz", std::move(freqs));
  cpu.Set("cores", profile.cores);
  root.Set("cpu", std::move(cpu));

  JsonValue power = JsonValue::Object{};
  power.Set("source", PowerSourceName(profile.power_source));
  if (!profile.idle_w.empty()) power.Set("idle_w", NumberArray(profile.idle_w));
  if (!profile.core_busy_w.empty()) power.Set("core_busy_w", NumberArray(profile.core_busy_w));
  root.Set("power", std::move(power));

  JsonValue::Array devices;
  for (const DeviceIoProfile& d : profile.devices) {
    JsonValue dev = JsonValue::Object{};
    dev.Set("name", d.name);
    JsonValue::Array par;
    for (int p : d.parallelism) par.emplace_back(p);
    dev.Set("parallelism", std::move(par));
    dev.Set("parallelism_kind", ParallelismKindName(d.parallelism_kind));
    JsonValue active = JsonValue::Object{};
    for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
      active.Set(IoOpName(op), d.active_w[static_cast<int>(op)]);
    }
    dev.Set("active_w", std::move(active));
    JsonValue::Array blocks;
    for (const IoBlockProfile& b : d.blocks) {
      JsonValue block = JsonValue::Object{};
      block.Set("block_size", b.block_size);
      for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
        const IoOpProfile& o = b.op(op);
        JsonValue grids = JsonValue::Object{};
        grids.Set("throughput_bps", Grid(o.throughput_bps));
        if (!o.busy_cores.empty()) grids.Set("busy_cores", Grid(o.busy_cores));
        if (!o.watts.empty()) grids.Set("watts", Grid(o.watts));
        block.Set(IoOpName(op), std::move(grids));
      }
      blocks.push_back(std::move(block));
    }
    dev.Set("blocks", std::move(blocks));
    devices.push_back(std::move(dev));
  }
  root.Set("devices", std::move(devices));
  return WriteJson(root, 2) + "\n";
}

}  // namespace cairn
