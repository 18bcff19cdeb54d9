#include "model/io_profile.h"

#include <cmath>

#include "base/json.h"

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

// Validation errors name the member's JSON Pointer; the caller adds which
// document ("I/O profile 'p.json'").
Status Invalid(const std::string& path, const std::string& what) {
  return Status(Code::kInvalidArgument, fmt::format("{}: {}", path, what));
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
      return Invalid(fmt::format("{}/{}", path, i), fmt::format("must be finite and {} {}, got {}",
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
    std::string row = fmt::format("{}/{}", path, f);
    if (grid[f].size() != cols) {
      return Invalid(row, fmt::format("has {} entries, expected one per parallelism level ({})",
                                      grid[f].size(), cols));
    }
    for (size_t p = 0; p < cols; ++p) {
      double v = grid[f][p];
      if (!std::isfinite(v) || v < min || (strict && v == min) || v > max) {
        return Invalid(fmt::format("{}/{}", row, p),
                       fmt::format("must be finite, {} {} and <= {}, got {}", strict ? ">" : ">=",
                                   min, max, v));
      }
    }
  }
  return Status::Ok();
}

Status ValidateCpuAndPower(const IoProfile& profile) {
  const auto& freqs = profile.frequencies_khz;
  if (freqs.empty()) return Invalid("/cpu/frequencies_khz", "needs at least one frequency");
  for (size_t i = 0; i < freqs.size(); ++i) {
    if (freqs.size() > 1 && freqs[i] == 0) {
      return Invalid(fmt::format("/cpu/frequencies_khz/{}", i),
                     "0 (unknown) is allowed only as the single frequency of a node without DVFS");
    }
    if (i > 0 && freqs[i] <= freqs[i - 1]) {
      return Invalid("/cpu/frequencies_khz", "must be strictly ascending");
    }
  }
  if (profile.cores < 1 || profile.cores > kMaxCount) {
    return Invalid("/cpu/cores",
                   fmt::format("must be in [1, {}], got {}", kMaxCount, profile.cores));
  }
  const size_t nf = freqs.size();
  const bool table = profile.power_source == PowerSource::kTable;
  if (table || !profile.idle_w.empty()) {
    CAIRN_RETURN_IF_ERROR(CheckVector("/power/idle_w", profile.idle_w, nf, 0, table));
  }
  if (table || !profile.core_busy_w.empty()) {
    CAIRN_RETURN_IF_ERROR(CheckVector("/power/core_busy_w", profile.core_busy_w, nf, 0, false));
  }
  return Status::Ok();
}

Status ValidateBlock(const IoProfile& profile, const DeviceIoProfile& d, size_t b,
                     const std::string& path) {
  const IoBlockProfile& block = d.blocks[b];
  if (block.block_size > kMaxBlockSize || (block.block_size == 0 && d.blocks.size() > 1) ||
      (b > 0 && block.block_size <= d.blocks[b - 1].block_size)) {
    return Invalid(path + "/block_size",
                   fmt::format("block sizes must be strictly ascending in [1, {}] (0, not "
                               "recorded, only as the one block), got {}",
                               kMaxBlockSize, block.block_size));
  }
  const bool table = profile.power_source == PowerSource::kTable;
  const size_t nf = profile.frequencies_khz.size();
  const size_t np = d.parallelism.size();
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    const std::string op_path = fmt::format("{}/{}", path, IoOpName(op));
    const IoOpProfile& o = block.op(op);
    CAIRN_RETURN_IF_ERROR(
        CheckGrid(op_path + "/throughput_bps", o.throughput_bps, nf, np, 0, true, HUGE_VAL));
    if (table || !o.busy_cores.empty()) {
      CAIRN_RETURN_IF_ERROR(
          CheckGrid(op_path + "/busy_cores", o.busy_cores, nf, np, 0, false, profile.cores));
    }
    if (!table || !o.watts.empty()) {
      CAIRN_RETURN_IF_ERROR(CheckGrid(op_path + "/watts", o.watts, nf, np, 0, true, HUGE_VAL));
    }
  }
  return Status::Ok();
}

Status ValidateDevice(const IoProfile& profile, size_t i) {
  const DeviceIoProfile& d = profile.devices[i];
  const std::string path = fmt::format("/devices/{}", i);
  if (!ValidDeviceName(d.name)) {
    return Invalid(path + "/name", fmt::format("\"{}\" is not 1..{} characters of "
                                               "[A-Za-z0-9._-] not starting with '.'",
                                               d.name, kMaxDeviceName));
  }
  for (size_t j = 0; j < i; ++j) {
    if (profile.devices[j].name == d.name) {
      return Invalid(path + "/name", fmt::format("\"{}\" appears twice", d.name));
    }
  }
  if (d.parallelism.empty()) return Invalid(path + "/parallelism", "needs at least one level");
  for (size_t j = 0; j < d.parallelism.size(); ++j) {
    if (d.parallelism[j] < 1 || d.parallelism[j] > kMaxCount ||
        (j > 0 && d.parallelism[j] <= d.parallelism[j - 1])) {
      return Invalid(path + "/parallelism",
                     fmt::format("must be strictly ascending integers in [1, {}]", kMaxCount));
    }
  }
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    double active = d.active_w[static_cast<int>(op)];
    if (!std::isfinite(active) || active < 0) {
      return Invalid(fmt::format("{}/active_w/{}", path, IoOpName(op)),
                     fmt::format("must be finite and >= 0, got {}", active));
    }
  }
  if (d.blocks.empty()) return Invalid(path + "/blocks", "needs at least one block size");
  for (size_t b = 0; b < d.blocks.size(); ++b) {
    CAIRN_RETURN_IF_ERROR(ValidateBlock(profile, d, b, fmt::format("{}/blocks/{}", path, b)));
  }
  return Status::Ok();
}

// ValidateIoProfile without naming the document.
Status ValidateProfile(const IoProfile& profile) {
  CAIRN_RETURN_IF_ERROR(ValidateCpuAndPower(profile));
  if (profile.devices.empty()) return Invalid("/devices", "needs at least one device");
  for (size_t i = 0; i < profile.devices.size(); ++i) {
    CAIRN_RETURN_IF_ERROR(ValidateDevice(profile, i));
  }
  return Status::Ok();
}

// ---- JSON reading: type errors are kCorrupt and name the member's pointer.

Status BadName(const JsonField& field, std::string_view got, std::string_view expected) {
  return field.Invalid(fmt::format("is \"{}\", expected {}", got, expected));
}

Result<IoOpProfile> ReadOp(const JsonField& v) {
  CAIRN_RETURN_IF_ERROR(v.CheckMembers({"throughput_bps", "busy_cores", "watts"}));
  IoOpProfile op;
  CAIRN_ASSIGN_OR_RETURN(JsonField throughput, v.Member("throughput_bps"));
  CAIRN_ASSIGN_OR_RETURN(op.throughput_bps, throughput.Grid());
  if (auto busy = v.Find("busy_cores")) {
    CAIRN_ASSIGN_OR_RETURN(op.busy_cores, busy->Grid());
  }
  if (auto watts = v.Find("watts")) {
    CAIRN_ASSIGN_OR_RETURN(op.watts, watts->Grid());
  }
  return op;
}

// The read and write grids of one block (v2), or of a whole device (v1).
Status ReadOps(const JsonField& v, IoBlockProfile* block) {
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    CAIRN_ASSIGN_OR_RETURN(JsonField grids, v.Member(IoOpName(op)));
    CAIRN_ASSIGN_OR_RETURN(block->op(op), ReadOp(grids));
  }
  return Status::Ok();
}

Result<ParallelismKind> ReadParallelismKind(const JsonField& v) {
  CAIRN_ASSIGN_OR_RETURN(std::string name, v.String());
  for (ParallelismKind kind : {ParallelismKind::kProcesses, ParallelismKind::kThreads}) {
    if (name == ParallelismKindName(kind)) return kind;
  }
  return BadName(v, name, "\"processes\", \"threads\"");
}

Status ReadActiveWatts(const JsonField& v, DeviceIoProfile* d) {
  CAIRN_RETURN_IF_ERROR(v.CheckMembers({"read", "write"}));
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
    if (auto w = v.Find(IoOpName(op))) {
      CAIRN_ASSIGN_OR_RETURN(d->active_w[static_cast<int>(op)], w->Number());
    }
  }
  return Status::Ok();
}

Result<IoBlockProfile> ReadBlock(const JsonField& v) {
  CAIRN_RETURN_IF_ERROR(v.CheckMembers({"block_size", "read", "write"}));
  IoBlockProfile block;
  CAIRN_ASSIGN_OR_RETURN(JsonField size, v.Member("block_size"));
  CAIRN_ASSIGN_OR_RETURN(block.block_size, size.Unsigned(kMaxBlockSize));
  CAIRN_RETURN_IF_ERROR(ReadOps(v, &block));
  return block;
}

Result<DeviceIoProfile> ReadDevice(const JsonField& v, int64_t version) {
  if (version == 1) {
    CAIRN_RETURN_IF_ERROR(v.CheckMembers({"name", "parallelism", "active_w", "read", "write"}));
  } else {
    CAIRN_RETURN_IF_ERROR(
        v.CheckMembers({"name", "parallelism", "parallelism_kind", "active_w", "blocks"}));
  }
  DeviceIoProfile d;
  CAIRN_ASSIGN_OR_RETURN(JsonField name, v.Member("name"));
  CAIRN_ASSIGN_OR_RETURN(d.name, name.String());
  CAIRN_ASSIGN_OR_RETURN(JsonField parallelism, v.Member("parallelism"));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> levels, parallelism.Elements());
  for (const JsonField& level : levels) {
    CAIRN_ASSIGN_OR_RETURN(int64_t p, level.Integer(1, kMaxCount));
    d.parallelism.push_back(static_cast<int>(p));
  }
  if (auto kind = v.Find("parallelism_kind")) {
    CAIRN_ASSIGN_OR_RETURN(d.parallelism_kind, ReadParallelismKind(*kind));
  }
  if (auto active = v.Find("active_w")) {
    CAIRN_RETURN_IF_ERROR(ReadActiveWatts(*active, &d));
  }
  if (version == 1) {
    d.blocks.emplace_back();
    CAIRN_RETURN_IF_ERROR(ReadOps(v, &d.blocks.back()));
    return d;
  }
  CAIRN_ASSIGN_OR_RETURN(JsonField blocks, v.Member("blocks"));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> block_fields, blocks.Elements());
  for (const JsonField& b : block_fields) {
    CAIRN_ASSIGN_OR_RETURN(IoBlockProfile block, ReadBlock(b));
    d.blocks.push_back(std::move(block));
  }
  return d;
}

Status ReadCpu(const JsonField& cpu, IoProfile* profile) {
  CAIRN_RETURN_IF_ERROR(cpu.CheckMembers({"frequencies_khz", "cores"}));
  CAIRN_ASSIGN_OR_RETURN(JsonField freqs, cpu.Member("frequencies_khz"));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> entries, freqs.Elements());
  for (const JsonField& f : entries) {
    CAIRN_ASSIGN_OR_RETURN(uint64_t khz, f.Unsigned(UINT32_MAX));
    profile->frequencies_khz.push_back(static_cast<uint32_t>(khz));
  }
  CAIRN_ASSIGN_OR_RETURN(JsonField cores, cpu.Member("cores"));
  CAIRN_ASSIGN_OR_RETURN(int64_t ncores, cores.Integer(1, kMaxCount));
  profile->cores = static_cast<int>(ncores);
  return Status::Ok();
}

Status ReadPower(const JsonField& power, IoProfile* profile) {
  CAIRN_RETURN_IF_ERROR(power.CheckMembers({"source", "idle_w", "core_busy_w"}));
  CAIRN_ASSIGN_OR_RETURN(JsonField source, power.Member("source"));
  CAIRN_ASSIGN_OR_RETURN(std::string source_name, source.String());
  if (source_name == PowerSourceName(PowerSource::kRapl)) {
    profile->power_source = PowerSource::kRapl;
  } else if (source_name == PowerSourceName(PowerSource::kTable)) {
    profile->power_source = PowerSource::kTable;
  } else {
    return BadName(source, source_name, "\"rapl\", \"table\"");
  }
  if (auto idle = power.Find("idle_w")) {
    CAIRN_ASSIGN_OR_RETURN(profile->idle_w, idle->Numbers());
  }
  if (auto busy = power.Find("core_busy_w")) {
    CAIRN_ASSIGN_OR_RETURN(profile->core_busy_w, busy->Numbers());
  }
  return Status::Ok();
}

// The format name and version; kUnsupported for a version this build does
// not read.
Result<int64_t> ReadVersion(const JsonField& root) {
  CAIRN_ASSIGN_OR_RETURN(JsonField format, root.Member("format"));
  CAIRN_ASSIGN_OR_RETURN(std::string format_name, format.String());
  if (format_name != kFormatName) {
    return format.Invalid(fmt::format("is \"{}\", expected \"{}\"", format_name, kFormatName));
  }
  CAIRN_ASSIGN_OR_RETURN(JsonField version, root.Member("version"));
  CAIRN_ASSIGN_OR_RETURN(int64_t v, version.Integer(0, kMaxCount));
  if (v < kOldestFormatVersion || v > kFormatVersion) {
    return Status(Code::kUnsupported,
                  version.Invalid(fmt::format("version {} is not supported (this build reads {} "
                                              "to {})",
                                              v, kOldestFormatVersion, kFormatVersion))
                      .message());
  }
  return v;
}

Result<IoProfile> ReadProfile(const JsonField& root) {
  CAIRN_RETURN_IF_ERROR(
      root.CheckMembers({"format", "version", "description", "cpu", "power", "devices"}));
  CAIRN_ASSIGN_OR_RETURN(int64_t version, ReadVersion(root));
  IoProfile profile;
  if (auto d = root.Find("description")) {
    CAIRN_ASSIGN_OR_RETURN(profile.description, d->String());
  }
  CAIRN_ASSIGN_OR_RETURN(JsonField cpu, root.Member("cpu"));
  CAIRN_RETURN_IF_ERROR(ReadCpu(cpu, &profile));
  CAIRN_ASSIGN_OR_RETURN(JsonField power, root.Member("power"));
  CAIRN_RETURN_IF_ERROR(ReadPower(power, &profile));
  CAIRN_ASSIGN_OR_RETURN(JsonField devices, root.Member("devices"));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> device_fields, devices.Elements());
  for (const JsonField& d : device_fields) {
    CAIRN_ASSIGN_OR_RETURN(DeviceIoProfile device, ReadDevice(d, version));
    profile.devices.push_back(std::move(device));
  }
  return profile;
}

// ---- JSON writing.

Json DeviceJson(const DeviceIoProfile& d) {
  Json active = Json::object();
  for (IoOp op : {IoOp::kRead, IoOp::kWrite}) active[IoOpName(op)] = d.active_w[static_cast<int>(op)];
  Json blocks = Json::array();
  for (const IoBlockProfile& b : d.blocks) {
    Json block = {{"block_size", b.block_size}};
    for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
      const IoOpProfile& o = b.op(op);
      Json grids = {{"throughput_bps", o.throughput_bps}};
      if (!o.busy_cores.empty()) grids["busy_cores"] = o.busy_cores;
      if (!o.watts.empty()) grids["watts"] = o.watts;
      block[IoOpName(op)] = std::move(grids);
    }
    blocks.push_back(std::move(block));
  }
  return {{"name", d.name},
          {"parallelism", d.parallelism},
          {"parallelism_kind", ParallelismKindName(d.parallelism_kind)},
          {"active_w", std::move(active)},
          {"blocks", std::move(blocks)}};
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
  return ValidateProfile(profile).Annotate("I/O profile");
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

Result<IoProfile> ParseIoProfile(std::string_view json, std::string_view file) {
  const std::string document =
      file.empty() ? std::string("I/O profile") : fmt::format("I/O profile '{}'", file);
  CAIRN_ASSIGN_OR_RETURN(Json doc, ParseJson(json, document));
  CAIRN_ASSIGN_OR_RETURN(IoProfile profile, ReadProfile(JsonField(doc, document, Code::kCorrupt)));
  CAIRN_RETURN_IF_ERROR(ValidateProfile(profile).Annotate(document));
  return profile;
}

std::string SerializeIoProfile(const IoProfile& profile) {
  Json root = {{"format", kFormatName}, {"version", kFormatVersion}};
  if (!profile.description.empty()) root["description"] = profile.description;
  root["cpu"] = {{"frequencies_khz", profile.frequencies_khz}, {"cores", profile.cores}};
  Json power = {{"source", PowerSourceName(profile.power_source)}};
  if (!profile.idle_w.empty()) power["idle_w"] = profile.idle_w;
  if (!profile.core_busy_w.empty()) power["core_busy_w"] = profile.core_busy_w;
  root["power"] = std::move(power);
  Json devices = Json::array();
  for (const DeviceIoProfile& d : profile.devices) devices.push_back(DeviceJson(d));
  root["devices"] = std::move(devices);
  return root.dump(2) + "\n";
}

}  // namespace cairn
