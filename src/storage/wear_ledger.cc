#include "storage/wear_ledger.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "base/json.h"
#include "codec/crc32c.h"

namespace cairn {
namespace {

constexpr std::string_view kFormatName = "cairn-wear-ledger";
constexpr int kFormatVersion = 2;
// Version 1 was text lines (docs/clc.md "Version 1"); it is still read, since
// a ledger lives as long as its device.
constexpr std::string_view kV1MagicLine = "cairn-wear-ledger 1";
constexpr char kDocument[] = "wear ledger file";
constexpr uint64_t kSectorBytes = 512;

std::string SlotName(const std::string& writer, uint64_t seq) {
  return writer + "." + std::to_string(seq % 2);
}

// "r0.1" -> ("r0", 1); false for anything else (temporaries included).
bool ParseSlotName(const std::string& name, std::string* writer, int* slot) {
  if (name.size() < 3 || name[name.size() - 2] != '.') return false;
  char c = name.back();
  if (c != '0' && c != '1') return false;
  *writer = name.substr(0, name.size() - 2);
  *slot = c - '0';
  return ValidWearWriterName(*writer);
}

bool ParseU64(const std::string& text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

// A finite, non-negative time in seconds.
bool ParseTime(const std::string& text, double* out) {
  if (text.empty() || text.size() > 40) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return false;
    }
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

std::vector<std::string> SplitWhitespace(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string word;
  while (in >> word) out.push_back(word);
  return out;
}

// Splits "key value" (exactly one space); false if the key differs.
bool Field(const std::string& line, const char* key, std::string* value) {
  std::string prefix = std::string(key) + " ";
  if (line.compare(0, prefix.size(), prefix) != 0) return false;
  *value = line.substr(prefix.size());
  return true;
}

Status Corrupt(const std::string& what) {
  return Status(Code::kCorrupt, "wear ledger file: " + what);
}

}  // namespace

// ------------------------------------------------------------------ state --

uint64_t WearWriterState::BytesAt(double t) const {
  auto it = std::upper_bound(series.begin(), series.end(), t,
                             [](double v, const WearSample& s) { return v < s.time; });
  return it == series.begin() ? 0 : std::prev(it)->bytes;
}

bool ValidWearWriterName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

namespace {

// What both versions require beyond their syntax.
Status CheckWearState(const WearWriterState& state) {
  if (!ValidWearWriterName(state.writer)) return Corrupt("bad writer name");
  if (!std::isfinite(state.created) || state.created < 0) return Corrupt("bad created time");
  if (state.series.size() > kMaxWearSamples) {
    return Corrupt(fmt::format("{} samples, more than {}", state.series.size(), kMaxWearSamples));
  }
  for (size_t i = 0; i < state.series.size(); ++i) {
    const WearSample& s = state.series[i];
    if (!std::isfinite(s.time) || s.time < 0) return Corrupt(fmt::format("sample {}: bad time", i + 1));
    if (i > 0 && (s.time <= state.series[i - 1].time || s.bytes < state.series[i - 1].bytes)) {
      return Corrupt(fmt::format("sample {} goes back in time or bytes", i + 1));
    }
  }
  if (state.series.empty() ? state.bytes != 0 : state.series.back().bytes != state.bytes) {
    return Corrupt("total differs from the last sample");
  }
  return Status::Ok();
}

Json WearJson(const WearWriterState& state) {
  Json series = Json::array();
  for (const WearSample& s : state.series) series.push_back({s.time, s.bytes});
  return {{"format", kFormatName},   {"version", kFormatVersion}, {"writer", state.writer},
          {"seq", state.seq},        {"created", state.created},  {"bytes", state.bytes},
          {"series", std::move(series)}};
}

std::string CrcText(const std::string& body) {
  return fmt::format("{:08x}", Crc32c(body.data(), body.size()));
}

// Version 1: "key value" lines, then "crc32c <hex>" over every byte before.
Result<WearWriterState> DecodeWearFileV1(const std::string& bytes) {
  if (bytes.empty() || bytes.back() != '\n') return Corrupt("does not end with a newline");
  size_t crc_at = bytes.rfind("\ncrc32c ", bytes.size() - 2);
  if (crc_at == std::string::npos) return Corrupt("no crc32c line");
  ++crc_at;  // start of the crc line
  std::string crc_text = bytes.substr(crc_at + 7, bytes.size() - crc_at - 8);
  if (crc_text.size() != 8 || crc_text.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Corrupt("bad crc32c line");
  }
  const std::string computed = CrcText(bytes.substr(0, crc_at));
  if (crc_text != computed) {
    return Corrupt(fmt::format("crc32c mismatch (stored {}, computed {})", crc_text, computed));
  }
  std::vector<std::string> lines;
  for (size_t start = 0; start < crc_at;) {
    size_t nl = bytes.find('\n', start);
    lines.push_back(bytes.substr(start, nl - start));
    start = nl + 1;
  }
  if (lines.size() < 6 || lines[0] != kV1MagicLine) return Corrupt("not a cairn wear ledger");
  WearWriterState state;
  std::string v;
  uint64_t count = 0;
  if (!Field(lines[1], "writer", &state.writer)) return Corrupt("bad writer line");
  if (!Field(lines[2], "seq", &v) || !ParseU64(v, &state.seq)) return Corrupt("bad seq line");
  if (!Field(lines[3], "created", &v) || !ParseTime(v, &state.created)) {
    return Corrupt("bad created line");
  }
  if (!Field(lines[4], "bytes", &v) || !ParseU64(v, &state.bytes)) return Corrupt("bad bytes line");
  if (!Field(lines[5], "samples", &v) || !ParseU64(v, &count) || count > kMaxWearSamples) {
    return Corrupt("bad samples line");
  }
  if (lines.size() != 6 + count) {
    return Corrupt(fmt::format("{} sample lines, header says {}", lines.size() - 6, count));
  }
  state.series.reserve(count);
  for (size_t i = 6; i < lines.size(); ++i) {
    size_t space = lines[i].find(' ');
    WearSample s;
    if (space == std::string::npos || !ParseTime(lines[i].substr(0, space), &s.time) ||
        !ParseU64(lines[i].substr(space + 1), &s.bytes)) {
      return Corrupt(fmt::format("bad sample line {}", i - 5));
    }
    state.series.push_back(s);
  }
  CAIRN_RETURN_IF_ERROR(CheckWearState(state));
  return state;
}

Result<WearWriterState> ReadWearJson(const JsonField& root) {
  CAIRN_RETURN_IF_ERROR(root.CheckMembers(
      {"format", "version", "writer", "seq", "created", "bytes", "series", "crc32c"}));
  CAIRN_ASSIGN_OR_RETURN(JsonField format, root.Member("format"));
  CAIRN_ASSIGN_OR_RETURN(std::string format_name, format.String());
  if (format_name != kFormatName) return format.Invalid("not a cairn wear ledger");
  CAIRN_ASSIGN_OR_RETURN(JsonField version, root.Member("version"));
  CAIRN_RETURN_IF_ERROR(version.Integer(kFormatVersion, kFormatVersion).status());
  WearWriterState state;
  CAIRN_ASSIGN_OR_RETURN(JsonField writer, root.Member("writer"));
  CAIRN_ASSIGN_OR_RETURN(state.writer, writer.String());
  CAIRN_ASSIGN_OR_RETURN(JsonField seq, root.Member("seq"));
  CAIRN_ASSIGN_OR_RETURN(state.seq, seq.Unsigned(UINT64_MAX));
  CAIRN_ASSIGN_OR_RETURN(JsonField created, root.Member("created"));
  CAIRN_ASSIGN_OR_RETURN(state.created, created.Number());
  CAIRN_ASSIGN_OR_RETURN(JsonField total, root.Member("bytes"));
  CAIRN_ASSIGN_OR_RETURN(state.bytes, total.Unsigned(UINT64_MAX));
  CAIRN_ASSIGN_OR_RETURN(JsonField series, root.Member("series"));
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> samples, series.Elements());
  if (samples.size() > kMaxWearSamples) return series.Invalid("too many samples");
  for (const JsonField& sample : samples) {
    CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> pair, sample.Elements());
    if (pair.size() != 2) return sample.Invalid("expected [time, bytes]");
    WearSample s;
    CAIRN_ASSIGN_OR_RETURN(s.time, pair[0].Number());
    CAIRN_ASSIGN_OR_RETURN(s.bytes, pair[1].Unsigned(UINT64_MAX));
    state.series.push_back(s);
  }
  return state;
}

// Version 2: one JSON object in its compact form, the last member "crc32c"
// holding the CRC32C of the object's compact form without that member.
Result<WearWriterState> DecodeWearFileV2(const std::string& bytes) {
  CAIRN_ASSIGN_OR_RETURN(Json doc, ParseJson(bytes, kDocument));
  if (!doc.is_object() || !doc.contains("crc32c") || !doc["crc32c"].is_string()) {
    return Corrupt("not a cairn wear ledger (no crc32c member)");
  }
  // Only the writer's own bytes are accepted: with one canonical form, any
  // damage that still parses changes a value, which the CRC then catches.
  if (doc.dump() + "\n" != bytes) return Corrupt("not in the form Cairn writes");
  const std::string stored = doc["crc32c"].get<std::string>();
  Json body = doc;
  body.erase("crc32c");
  const std::string computed = CrcText(body.dump());
  if (stored != computed) {
    return Corrupt(fmt::format("crc32c mismatch (stored {}, computed {})", stored, computed));
  }
  CAIRN_ASSIGN_OR_RETURN(WearWriterState state,
                         ReadWearJson(JsonField(doc, kDocument, Code::kCorrupt)));
  CAIRN_RETURN_IF_ERROR(CheckWearState(state));
  return state;
}

}  // namespace

std::string EncodeWearFile(const WearWriterState& state) {
  Json doc = WearJson(state);
  doc["crc32c"] = CrcText(doc.dump());
  return doc.dump() + "\n";
}

Result<WearWriterState> DecodeWearFile(const std::string& bytes) {
  if (std::string_view(bytes).starts_with(std::string(kV1MagicLine) + "\n")) {
    return DecodeWearFileV1(bytes);
  }
  return DecodeWearFileV2(bytes);
}

void AddWearSample(std::vector<WearSample>* series, WearSample sample, size_t max_samples) {
  max_samples = std::max<size_t>(max_samples, 3);
  if (!series->empty()) {
    WearSample& last = series->back();
    sample.time = std::max(sample.time, last.time);
    sample.bytes = std::max(sample.bytes, last.bytes);
    if (sample.time == last.time) {
      last.bytes = sample.bytes;
      return;
    }
  }
  series->push_back(sample);
  while (series->size() > max_samples) {
    // Drop the interior sample whose neighbours are closest together
    // relative to its age: a sample's loss costs resolution only around
    // it, and resolution matters less the older the sample is. The result
    // is spacing roughly proportional to age — fine where B_SSD's window
    // looks, coarse far back — and the first and last samples stay.
    const double now = series->back().time;
    size_t victim = 1;
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = 1; i + 1 < series->size(); ++i) {
      double gap = (*series)[i + 1].time - (*series)[i - 1].time;
      double score = gap / (now - (*series)[i].time + 1.0);
      if (score < best) {
        best = score;
        victim = i;
      }
    }
    series->erase(series->begin() + static_cast<std::ptrdiff_t>(victim));
  }
}

// --------------------------------------------------------------- snapshot --

uint64_t WearLedgerSnapshot::BytesAt(double t) const {
  uint64_t total = 0;
  for (const auto& w : writers) total += w.BytesAt(t);
  return total;
}

std::vector<WearSample> WearLedgerSnapshot::Series() const {
  std::vector<double> times;
  for (const auto& w : writers) {
    for (const auto& s : w.series) times.push_back(s.time);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<WearSample> out;
  out.reserve(times.size());
  for (double t : times) out.push_back({t, BytesAt(t)});
  return out;
}

double WearLedgerSnapshot::SpanStart(double now, double window, double not_before) const {
  double start = not_before;
  if (window > 0) start = std::max(start, now - window);
  if (created > 0) start = std::max(start, created);
  return std::min(start, now);
}

double WearLedgerSnapshot::Bandwidth(double now, double window, double not_before) const {
  if (writers.empty()) return 0;
  double start = SpanStart(now, window, not_before);
  uint64_t at_now = BytesAt(now);
  uint64_t at_start = BytesAt(start);
  if (at_now <= at_start) return 0;
  // A span shorter than a second would turn one write into an absurd rate.
  double span = std::max(now - start, 1.0);
  return static_cast<double>(at_now - at_start) / span;
}

Result<WearLedgerSnapshot> ReadWearLedger(Env* env, const std::string& dir) {
  WearLedgerSnapshot snap;
  snap.dir = dir;
  auto entries = env->ListDir(dir);
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return snap;
    return entries.status().Annotate("wear ledger");
  }
  // writer -> which slots exist
  std::map<std::string, std::array<bool, 2>> slots;
  for (const auto& e : *entries) {
    std::string writer;
    int slot = 0;
    if (e.is_dir || !ParseSlotName(e.name, &writer, &slot)) continue;
    slots[writer][static_cast<size_t>(slot)] = true;
  }
  for (const auto& [writer, present] : slots) {
    std::optional<WearWriterState> best;
    std::string errors;
    for (int slot = 0; slot < 2; ++slot) {
      if (!present[static_cast<size_t>(slot)]) continue;
      std::string path = JoinPath(dir, writer + "." + std::to_string(slot));
      auto text = env->ReadFileToString(path);
      if (!text.ok()) {
        errors += fmt::format(" [{}: {}]", path, text.status().message());
        continue;
      }
      auto state = DecodeWearFile(*text);
      if (!state.ok()) {
        errors += fmt::format(" [{}: {}]", path, state.status().message());
        continue;
      }
      if (state->writer != writer) {
        errors += fmt::format(" [{}: holds writer '{}']", path, state->writer);
        continue;
      }
      if (!best || state->seq > best->seq) best = std::move(*state);
    }
    if (!errors.empty()) {
      snap.problems.push_back(fmt::format("wear ledger writer '{}' in {}: {}{}", writer, dir,
                                          best ? "a slot is unreadable, using the other"
                                               : "no readable slot, its bytes are not counted",
                                          errors));
    }
    if (best) snap.writers.push_back(std::move(*best));
  }
  for (const auto& w : snap.writers) {
    snap.bytes += w.bytes;
    if (w.created > 0 && (snap.created == 0 || w.created < snap.created)) snap.created = w.created;
  }
  return snap;
}

std::string WearLedgerDir(const std::string& tier_root, const std::optional<DeviceNumber>& device) {
  std::string key = device ? fmt::format("dev-{}-{}", device->major, device->minor) : "dev-unknown";
  return JoinPath(JoinPath(tier_root, ".wear"), key);
}

// ------------------------------------------------------------------ sysfs --

Result<BlockDevice> ResolveBlockDevice(Env* env, const std::string& sysfs_root, DeviceNumber device) {
  if (device.IsAnonymous()) {
    return Error(Code::kNotFound,
                 "device {} is not a block device (tmpfs, overlayfs, NFS or a btrfs subvolume)",
                 device.ToString());
  }
  std::string dev_dir = JoinPath(sysfs_root, "dev/block/" + device.ToString());
  std::string uevent_path = JoinPath(dev_dir, "uevent");
  if (!env->FileExists(uevent_path)) {
    return Error(Code::kNotFound, "no block device {} under '{}'", device.ToString(), sysfs_root);
  }
  CAIRN_ASSIGN_OR_RETURN(std::string uevent, env->ReadPseudoFile(uevent_path));
  std::string devname, devtype = "disk";
  std::istringstream in(uevent);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, 8, "DEVNAME=") == 0) devname = line.substr(8);
    if (line.compare(0, 8, "DEVTYPE=") == 0) devtype = line.substr(8);
  }
  if (devname.empty() || devname == "." || devname == ".." || devname.find('/') != std::string::npos) {
    return Error(Code::kCorrupt, "'{}' names no usable DEVNAME", uevent_path);
  }
  BlockDevice out;
  std::string block_dir = JoinPath(sysfs_root, "block");
  if (devtype == "partition") {
    // A partition's directory sits inside its disk's: find the disk whose
    // directory has an entry of the partition's name.
    out.partition = devname;
    auto disks = env->ListDir(block_dir);
    if (!disks.ok()) return disks.status().Annotate("resolving partition " + devname);
    for (const auto& d : *disks) {
      if (env->FileExists(JoinPath(JoinPath(block_dir, d.name), devname))) {
        out.name = d.name;
        break;
      }
    }
    if (out.name.empty()) {
      return Error(Code::kNotFound, "no disk under '{}' holds partition {}", block_dir, devname);
    }
  } else {
    out.name = devname;
  }
  out.stat_path = JoinPath(JoinPath(block_dir, out.name), "stat");
  if (!env->FileExists(out.stat_path)) {
    return Error(Code::kNotFound, "block device {} has no '{}'", out.name, out.stat_path);
  }
  return out;
}

Result<uint64_t> ReadDeviceBytesWritten(Env* env, const BlockDevice& device) {
  CAIRN_ASSIGN_OR_RETURN(std::string text, env->ReadPseudoFile(device.stat_path));
  // Documentation/block/stat.rst: field 7 is "write sectors", in 512-byte
  // units regardless of the device's logical block size.
  std::vector<std::string> fields = SplitWhitespace(text);
  uint64_t sectors = 0;
  if (fields.size() < 7 || !ParseU64(fields[6], &sectors)) {
    return Error(Code::kCorrupt, "'{}': no sectors-written field in '{}'", device.stat_path, text);
  }
  if (sectors > std::numeric_limits<uint64_t>::max() / kSectorBytes) {
    return Error(Code::kCorrupt, "'{}': sectors written {} overflow", device.stat_path, sectors);
  }
  return sectors * kSectorBytes;
}

// ----------------------------------------------------------------- ledger --

const char* WearSourceName(WearSource source) {
  return source == WearSource::kSysfs ? "sysfs" : "ledger";
}

WearLedger::WearLedger(Env* env, WearLedgerOptions options) : env_(env), options_(std::move(options)) {}

namespace {

// Removes the temporaries an update of this writer killed between creating
// and renaming left behind (only this writer ever makes temporaries of its
// slots), and says which of its two slots exist.
Result<std::array<bool, 2>> SweepWriterSlots(Env* env, const WearLedgerOptions& options) {
  CAIRN_ASSIGN_OR_RETURN(auto entries, env->ListDir(options.dir));
  const std::string tmp_prefix[2] = {options.writer + ".0.tmp.", options.writer + ".1.tmp."};
  std::array<bool, 2> slot_present = {false, false};
  for (const auto& e : entries) {
    for (const auto& prefix : tmp_prefix) {
      if (e.name.compare(0, prefix.size(), prefix) == 0) {
        (void)env->DeleteFile(JoinPath(options.dir, e.name));
      }
    }
    for (int slot = 0; slot < 2; ++slot) {
      if (e.name == options.writer + "." + std::to_string(slot)) slot_present[slot] = true;
    }
  }
  return slot_present;
}

// The newest valid slot of this writer; nullopt for a fresh writer.
// Errors: kIo when the directory cannot be listed; kCorrupt when slots
// exist but none is readable.
Result<std::optional<WearWriterState>> LoadNewestSlot(Env* env, const WearLedgerOptions& options) {
  CAIRN_ASSIGN_OR_RETURN(auto slot_present, SweepWriterSlots(env, options));
  std::optional<WearWriterState> best;
  std::string errors;
  for (int slot = 0; slot < 2; ++slot) {
    if (!slot_present[slot]) continue;
    std::string path = JoinPath(options.dir, options.writer + "." + std::to_string(slot));
    auto text = env->ReadFileToString(path);
    Result<WearWriterState> state = text.ok() ? DecodeWearFile(*text) : Result<WearWriterState>(text.status());
    if (state.ok() && state->writer != options.writer) {
      state = Error(Code::kCorrupt, "holds writer '{}'", state->writer);
    }
    if (!state.ok()) {
      errors += fmt::format(" [{}: {}]", path, state.status().message());
      continue;
    }
    if (!best || state->seq > best->seq) best = std::move(*state);
  }
  if (!best && !errors.empty()) {
    return Error(Code::kCorrupt,
                 "wear ledger: no readable slot for writer '{}' in '{}':{}; its byte count is "
                 "unknown (move the files away to start this writer again from zero)",
                 options.writer, options.dir, errors);
  }
  return best;
}

}  // namespace

Result<std::unique_ptr<WearLedger>> WearLedger::Open(Env* env, const WearLedgerOptions& options,
                                                     double now) {
  if (options.dir.empty()) return Error(Code::kInvalidArgument, "wear ledger: empty directory");
  if (!ValidWearWriterName(options.writer)) {
    return Error(Code::kInvalidArgument,
                 "wear ledger: writer name '{}' must be 1-64 characters of [A-Za-z0-9_-]",
                 options.writer);
  }
  if (options.max_samples < 3 || options.max_samples > kMaxWearSamples) {
    return Error(Code::kInvalidArgument, "wear ledger: max_samples {} not in [3, {}]",
                 options.max_samples, kMaxWearSamples);
  }
  CAIRN_RETURN_IF_ERROR(env->CreateDirs(options.dir).Annotate("wear ledger"));
  CAIRN_ASSIGN_OR_RETURN(std::optional<WearWriterState> best, LoadNewestSlot(env, options));
  std::optional<BlockDevice> device;
  std::string device_problem;
  if (options.device) {
    auto resolved = ResolveBlockDevice(env, options.sysfs_root, *options.device);
    if (resolved.ok()) {
      device = *resolved;
    } else {
      device_problem = resolved.status().message();
    }
  } else {
    device_problem = "no device given: the ledger is the only source";
  }

  std::unique_ptr<WearLedger> ledger(new WearLedger(env, options));
  {
    // Nobody else sees the ledger yet; the lock is for the analysis' sake.
    MutexLock lock(&ledger->mu_);
    if (best) {
      ledger->state_ = std::move(*best);
      ledger->durable_seq_ = ledger->state_.seq;
      // Keep the configured bound even if an earlier run used a larger one.
      while (ledger->state_.series.size() > options.max_samples) {
        WearSample last = ledger->state_.series.back();
        ledger->state_.series.pop_back();
        AddWearSample(&ledger->state_.series, last, options.max_samples);
      }
    } else {
      ledger->state_.writer = options.writer;
      ledger->state_.created = now;
    }
    ledger->device_ = std::move(device);
    ledger->device_problem_ = std::move(device_problem);
  }
  return ledger;
}

Status WearLedger::Persist() {
  WearWriterState next = state_;
  next.seq = durable_seq_ + 1;
  std::string bytes = EncodeWearFile(next);
  std::string path = JoinPath(options_.dir, SlotName(options_.writer, next.seq));
  Status s = env_->WriteFileAtomic(path, bytes.data(), bytes.size(), options_.sync);
  if (!s.ok()) return s.Annotate("wear ledger update");
  durable_seq_ = next.seq;
  state_.seq = next.seq;
  return Status::Ok();
}

Status WearLedger::Record(uint64_t bytes, double now) {
  MutexLock lock(&mu_);
  if (bytes > std::numeric_limits<uint64_t>::max() - state_.bytes) {
    return Error(Code::kInvalidArgument, "wear ledger: {} + {} bytes overflows", state_.bytes, bytes);
  }
  state_.bytes += bytes;
  AddWearSample(&state_.series, {now, state_.bytes}, options_.max_samples);
  return Persist();
}

WearWriterState WearLedger::state() const {
  MutexLock lock(&mu_);
  return state_;
}

std::optional<BlockDevice> WearLedger::device() const {
  MutexLock lock(&mu_);
  return device_;
}

Result<WearReading> WearLedger::Read(double now, double window, double not_before) {
  CAIRN_ASSIGN_OR_RETURN(WearLedgerSnapshot snap, ReadWearLedger(env_, options_.dir));
  MutexLock lock(&mu_);
  // This writer from memory: it may be ahead of its file (a failed update,
  // or a concurrent Record between the directory read and now).
  auto own = std::find_if(snap.writers.begin(), snap.writers.end(),
                          [&](const WearWriterState& w) { return w.writer == options_.writer; });
  if (own != snap.writers.end()) {
    *own = state_;
  } else {
    snap.writers.push_back(state_);
    std::sort(snap.writers.begin(), snap.writers.end(),
              [](const WearWriterState& a, const WearWriterState& b) { return a.writer < b.writer; });
  }
  snap.bytes = 0;
  snap.created = 0;
  for (const auto& w : snap.writers) {
    snap.bytes += w.bytes;
    if (w.created > 0 && (snap.created == 0 || w.created < snap.created)) snap.created = w.created;
  }

  WearReading r;
  r.time = now;
  r.ledger_bytes = snap.bytes;
  r.span_start = snap.SpanStart(now, window, not_before);
  r.ledger_bandwidth = snap.Bandwidth(now, window, not_before);
  r.problems = snap.problems;
  r.ledger = std::move(snap);
  r.bandwidth = r.ledger_bandwidth;

  if (!device_) {
    r.problems.push_back("block device: " + device_problem_);
    return r;
  }
  r.device = *device_;
  auto written = ReadDeviceBytesWritten(env_, *device_);
  if (!written.ok()) {
    r.problems.push_back("block device: " + written.status().message());
    return r;
  }
  r.device_known = true;
  r.device_bytes = *written;
  if (!device_samples_.empty() &&
      (*written < device_samples_.back().bytes || now < device_samples_.back().time)) {
    device_samples_.clear();  // the counter or the clock restarted
  }
  if (!device_samples_.empty() && device_samples_.back().time == now) device_samples_.pop_back();
  device_samples_.push_back({now, *written});
  // Keep one reading at or before the span's start (the rate's base), and
  // everything after it.
  while (device_samples_.size() >= 2 && device_samples_[1].time <= r.span_start) {
    device_samples_.pop_front();
  }
  while (device_samples_.size() > std::max<size_t>(options_.max_device_samples, 2)) {
    device_samples_.pop_front();
  }
  const WearSample& base = device_samples_.front();
  if (device_samples_.size() >= 2 && now - base.time >= 1.0) {
    r.device_bandwidth_known = true;
    r.device_bandwidth = static_cast<double>(*written - base.bytes) / (now - base.time);
    if (r.device_bandwidth > r.bandwidth) {
      r.bandwidth = r.device_bandwidth;
      r.bandwidth_source = WearSource::kSysfs;
    }
  }
  return r;
}

}  // namespace cairn
