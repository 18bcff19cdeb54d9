#include "runtime/io_profiler.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <latch>
#include <thread>

#include <fmt/format.h>

#include "model/json.h"
#include "runtime/catalog.h"

namespace cairn {

namespace {

// /proc/cpuinfo grows with the number of cores (~1 KiB each).
constexpr size_t kMaxCpuinfoBytes = 4 << 20;

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool ParseU64(std::string_view s, uint64_t* out) {
  std::string t = Trim(s);
  if (t.empty()) return false;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && p == t.data() + t.size();
}

std::vector<uint32_t> ParseFrequencies(std::string_view s) {
  std::vector<uint32_t> out;
  std::string t(s);
  size_t pos = 0;
  while (pos < t.size()) {
    while (pos < t.size() && std::isspace(static_cast<unsigned char>(t[pos]))) ++pos;
    size_t end = pos;
    while (end < t.size() && !std::isspace(static_cast<unsigned char>(t[end]))) ++end;
    uint64_t v = 0;
    if (end > pos && ParseU64(std::string_view(t).substr(pos, end - pos), &v) && v > 0 &&
        v <= UINT32_MAX) {
      out.push_back(static_cast<uint32_t>(v));
    }
    pos = end;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double ProcessCpuSeconds() {
  struct timespec ts;
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string SizeText(uint64_t b) {
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

}  // namespace

// --- power table -----------------------------------------------------------

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

Result<PowerTable> ParsePowerTable(std::string_view json) {
  CAIRN_ASSIGN_OR_RETURN(JsonValue doc, ParseJson(json));
  auto bad = [](const std::string& member, const std::string& what) {
    return Error(Code::kInvalidArgument, "power table: {}: {}", member, what);
  };
  if (!doc.is_object()) return bad("(document)", "must be an object");
  for (const auto& [key, value] : doc.AsObject()) {
    if (key != "format" && key != "frequencies_khz" && key != "idle_w" && key != "core_busy_w" &&
        key != "devices") {
      return bad(key, "unknown member");
    }
  }
  if (const JsonValue* f = doc.Find("format")) {
    if (!f->is_string() || f->AsString() != "cairn-power-table") {
      return bad("format", "must be \"cairn-power-table\"");
    }
  }
  auto numbers = [&](const char* key, std::vector<double>* out) -> Status {
    const JsonValue* v = doc.Find(key);
    if (!v || !v->is_array() || v->AsArray().empty()) {
      return bad(key, "must be a non-empty array of numbers");
    }
    for (const JsonValue& x : v->AsArray()) {
      if (!x.is_number() || !std::isfinite(x.AsNumber()) || x.AsNumber() < 0) {
        return bad(key, "every entry must be a finite number >= 0");
      }
      out->push_back(x.AsNumber());
    }
    return Status::Ok();
  };
  PowerTable table;
  std::vector<double> freqs;
  CAIRN_RETURN_IF_ERROR(numbers("frequencies_khz", &freqs));
  CAIRN_RETURN_IF_ERROR(numbers("idle_w", &table.idle_w));
  CAIRN_RETURN_IF_ERROR(numbers("core_busy_w", &table.core_busy_w));
  for (size_t i = 0; i < freqs.size(); ++i) {
    if (freqs[i] > UINT32_MAX || freqs[i] != std::floor(freqs[i]) ||
        (i > 0 && freqs[i] <= freqs[i - 1])) {
      return bad("frequencies_khz", "must be strictly ascending whole kHz");
    }
    table.frequencies_khz.push_back(static_cast<uint32_t>(freqs[i]));
  }
  if (table.idle_w.size() != freqs.size() || table.core_busy_w.size() != freqs.size()) {
    return bad("idle_w/core_busy_w", "need one entry per frequency");
  }
  for (size_t i = 0; i < table.idle_w.size(); ++i) {
    if (table.idle_w[i] <= 0) return bad(fmt::format("idle_w[{}]", i), "must be > 0");
  }
  if (const JsonValue* d = doc.Find("devices")) {
    if (!d->is_object()) return bad("devices", "must be an object");
    for (const auto& [name, ops] : d->AsObject()) {
      std::array<double, kIoOps> w = {0, 0};
      if (!ops.is_object()) return bad("devices." + name, "must be an object");
      for (const auto& [op, value] : ops.AsObject()) {
        int index = op == "read" ? 0 : op == "write" ? 1 : -1;
        if (index < 0) return bad("devices." + name + "." + op, "unknown member");
        if (!value.is_number() || !std::isfinite(value.AsNumber()) || value.AsNumber() < 0) {
          return bad("devices." + name + "." + op, "must be a finite number >= 0");
        }
        w[index] = value.AsNumber();
      }
      table.device_active_w[name] = w;
    }
  }
  return table;
}

// --- cpufreq ---------------------------------------------------------------

CpuFreqControl::~CpuFreqControl() { (void)Restore(); }

const char* CpuFreqControl::method_name() const {
  switch (method_) {
    case Method::kUserspace: return "userspace governor (scaling_setspeed)";
    case Method::kMaxFreq: return "scaling_max_freq";
    case Method::kNone: break;
  }
  return "none";
}

Status CpuFreqControl::WriteValue(const std::string& path, const std::string& value) {
  // sysfs attributes take one write(2) of the whole value.
  CAIRN_ASSIGN_OR_RETURN(auto file, env_->NewWritableFile(path, WriteOptions{}));
  CAIRN_RETURN_IF_ERROR(file->Append(value.data(), value.size()));
  return file->Close();
}

Result<std::string> CpuFreqControl::ReadValue(const std::string& path) {
  CAIRN_ASSIGN_OR_RETURN(std::string s, env_->ReadPseudoFile(path));
  return Trim(s);
}

std::unique_ptr<CpuFreqControl> CpuFreqControl::Open(Env* env, const std::string& sys_root,
                                                     const std::string& cpuinfo_path) {
  std::unique_ptr<CpuFreqControl> c(new CpuFreqControl(env));
  const std::string base = JoinPath(sys_root, "devices/system/cpu/cpufreq");
  auto entries = env->ListDir(base);
  std::vector<std::string> dirs;
  if (entries.ok()) {
    for (const auto& e : *entries) {
      if (e.name.rfind("policy", 0) == 0) dirs.push_back(JoinPath(base, e.name));
    }
    std::sort(dirs.begin(), dirs.end());
  }
  // Current frequency, for the record even when DVFS works.
  for (const std::string& d : dirs) {
    for (const char* f : {"cpuinfo_cur_freq", "scaling_cur_freq"}) {
      auto v = c->ReadValue(JoinPath(d, f));
      uint64_t khz = 0;
      if (v.ok() && ParseU64(*v, &khz) && khz > 0 && khz <= UINT32_MAX) {
        c->current_khz_ = static_cast<uint32_t>(khz);
        c->current_source_ = JoinPath(d, f);
        break;
      }
    }
    if (c->current_khz_ != 0) break;
  }
  if (c->current_khz_ == 0) {
    auto info = env->ReadPseudoFile(cpuinfo_path, kMaxCpuinfoBytes);
    if (info.ok()) {
      size_t at = info->find("cpu MHz");
      size_t colon = at == std::string::npos ? at : info->find(':', at);
      if (colon != std::string::npos) {
        double mhz = std::atof(info->c_str() + colon + 1);
        if (mhz > 0 && mhz < 1e6) {
          c->current_khz_ = static_cast<uint32_t>(std::lround(mhz * 1000));
          c->current_source_ = cpuinfo_path + " (cpu MHz)";
        }
      }
    }
  }
  if (dirs.empty()) {
    c->reason_ = fmt::format("no cpufreq policy under {}", base);
    return c;
  }
  // Available frequencies: common to every policy.
  std::vector<uint32_t> common;
  for (size_t i = 0; i < dirs.size(); ++i) {
    auto v = c->ReadValue(JoinPath(dirs[i], "scaling_available_frequencies"));
    if (!v.ok() || ParseFrequencies(*v).empty()) {
      c->reason_ = fmt::format("{}/scaling_available_frequencies is not readable", dirs[i]);
      return c;
    }
    std::vector<uint32_t> f = ParseFrequencies(*v);
    if (i == 0) {
      common = f;
    } else {
      std::vector<uint32_t> both;
      std::set_intersection(common.begin(), common.end(), f.begin(), f.end(),
                            std::back_inserter(both));
      common = both;
    }
  }
  if (common.empty()) {
    c->reason_ = "the cpufreq policies have no available frequency in common";
    return c;
  }
  // Method 1: the userspace governor; method 2: scaling_max_freq. A probe
  // writes a value that changes nothing (or switches the governor, which
  // Restore switches back).
  for (const std::string& d : dirs) c->policies_.push_back(Policy{d, "", "", "", ""});
  bool userspace = true;
  for (Policy& p : c->policies_) {
    auto gov = c->ReadValue(JoinPath(p.dir, "scaling_governor"));
    auto avail = c->ReadValue(JoinPath(p.dir, "scaling_available_governors"));
    auto speed = c->ReadValue(JoinPath(p.dir, "scaling_setspeed"));
    if (!gov.ok() || !speed.ok()) {
      userspace = false;
      break;
    }
    p.governor = *gov;
    bool listed = *gov == "userspace" ||
                  (avail.ok() && (" " + *avail + " ").find(" userspace ") != std::string::npos);
    if (!listed) {
      userspace = false;
      break;
    }
    if (*gov != "userspace") {
      c->changed_ = true;
      if (!c->WriteValue(JoinPath(p.dir, "scaling_governor"), "userspace").ok()) {
        userspace = false;
        break;
      }
      auto again = c->ReadValue(JoinPath(p.dir, "scaling_setspeed"));
      if (again.ok()) speed = again;
    }
    uint64_t khz = 0;
    p.setspeed = ParseU64(*speed, &khz) ? *speed : "";
    // Probe: write the speed the policy runs at now (or the lowest).
    std::string probe = !p.setspeed.empty()  ? p.setspeed
                        : c->current_khz_ != 0 ? std::to_string(c->current_khz_)
                                               : std::to_string(common.front());
    if (!c->WriteValue(JoinPath(p.dir, "scaling_setspeed"), probe).ok()) {
      userspace = false;
      break;
    }
    if (p.setspeed.empty()) p.setspeed = probe;
  }
  if (userspace) {
    c->method_ = Method::kUserspace;
    c->frequencies_ = common;
    return c;
  }
  std::string why_userspace = "no writable userspace governor";
  (void)c->Restore();  // undo a partial switch of governors
  c->changed_ = false;
  bool maxfreq = true;
  for (Policy& p : c->policies_) {
    auto lo = c->ReadValue(JoinPath(p.dir, "scaling_min_freq"));
    auto hi = c->ReadValue(JoinPath(p.dir, "scaling_max_freq"));
    if (!lo.ok() || !hi.ok() || !c->WriteValue(JoinPath(p.dir, "scaling_max_freq"), *hi).ok()) {
      maxfreq = false;
      break;
    }
    p.min_freq = *lo;
    p.max_freq = *hi;
    p.governor.clear();
  }
  if (maxfreq) {
    c->method_ = Method::kMaxFreq;
    c->frequencies_ = common;
    return c;
  }
  c->policies_.clear();
  c->reason_ = why_userspace + " and scaling_max_freq is not writable (needs root)";
  return c;
}

Status CpuFreqControl::Set(uint32_t khz) {
  if (!can_set()) return Error(Code::kUnsupported, "DVFS unavailable: {}", reason_);
  changed_ = true;
  const std::string value = std::to_string(khz);
  for (const Policy& p : policies_) {
    std::string file;
    if (method_ == Method::kUserspace) {
      file = JoinPath(p.dir, "scaling_setspeed");
      CAIRN_RETURN_IF_ERROR(WriteValue(file, value));
    } else {
      // The kernel refuses max < min: lower min to the lowest first.
      uint64_t min = 0;
      if (ParseU64(p.min_freq, &min) && min > khz) {
        CAIRN_RETURN_IF_ERROR(
            WriteValue(JoinPath(p.dir, "scaling_min_freq"), std::to_string(frequencies_.front())));
      }
      file = JoinPath(p.dir, "scaling_max_freq");
      CAIRN_RETURN_IF_ERROR(WriteValue(file, value));
    }
    CAIRN_ASSIGN_OR_RETURN(std::string back, ReadValue(file));
    if (back != value) {
      return Error(Code::kIo, "wrote {} to '{}' but it reads back '{}'", value, file, back);
    }
  }
  return Status::Ok();
}

Status CpuFreqControl::Restore() {
  if (!changed_) return Status::Ok();
  Status first;
  auto keep = [&first](Status s) {
    if (first.ok() && !s.ok()) first = s;
  };
  for (const Policy& p : policies_) {
    if (method_ == Method::kMaxFreq) {
      if (!p.max_freq.empty()) keep(WriteValue(JoinPath(p.dir, "scaling_max_freq"), p.max_freq));
      if (!p.min_freq.empty()) keep(WriteValue(JoinPath(p.dir, "scaling_min_freq"), p.min_freq));
    } else {
      if (!p.setspeed.empty() && method_ == Method::kUserspace) {
        keep(WriteValue(JoinPath(p.dir, "scaling_setspeed"), p.setspeed));
      }
      if (!p.governor.empty() && p.governor != "userspace") {
        keep(WriteValue(JoinPath(p.dir, "scaling_governor"), p.governor));
      }
    }
  }
  if (first.ok()) changed_ = false;
  return first;
}

// --- RAPL ------------------------------------------------------------------

uint64_t EnergyDeltaUj(uint64_t before, uint64_t after, uint64_t max_range_uj) {
  if (after >= before) return after - before;
  return (max_range_uj - before) + after;
}

RaplMeter RaplMeter::Open(Env* env, const std::string& sys_root) {
  RaplMeter m;
  m.env_ = env;
  const std::string base = JoinPath(sys_root, "class/powercap");
  auto entries = env->ListDir(base);
  if (!entries.ok()) {
    m.reason_ = fmt::format("no {}", base);
    return m;
  }
  std::vector<std::string> names;
  for (const auto& e : *entries) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  bool any_zone = false;
  for (const std::string& n : names) {
    if (n.rfind("intel-rapl:", 0) != 0) continue;  // intel-rapl-mmio duplicates package
    any_zone = true;
    std::string dir = JoinPath(base, n);
    auto zname = env->ReadPseudoFile(JoinPath(dir, "name"));
    if (!zname.ok()) continue;
    std::string zn = Trim(*zname);
    if (zn.rfind("package", 0) != 0 && zn != "dram") continue;
    uint64_t energy = 0, range = 0;
    auto e = env->ReadPseudoFile(JoinPath(dir, "energy_uj"));
    auto r = env->ReadPseudoFile(JoinPath(dir, "max_energy_range_uj"));
    if (!e.ok() || !ParseU64(*e, &energy) || !r.ok() || !ParseU64(*r, &range) || range == 0) {
      m.reason_ = fmt::format("{}/energy_uj is not readable (root only since Linux 5.10)", dir);
      continue;
    }
    m.zones_.push_back(Zone{JoinPath(dir, "energy_uj"), zn, range});
  }
  if (!m.zones_.empty()) {
    m.reason_.clear();
  } else if (m.reason_.empty()) {
    m.reason_ = any_zone ? "no package or dram RAPL zone" : fmt::format("no RAPL zone in {}", base);
  }
  return m;
}

std::vector<std::string> RaplMeter::zone_names() const {
  std::vector<std::string> out;
  for (const Zone& z : zones_) out.push_back(z.name);
  return out;
}

Result<std::vector<uint64_t>> RaplMeter::Read() const {
  std::vector<uint64_t> out;
  for (const Zone& z : zones_) {
    CAIRN_ASSIGN_OR_RETURN(std::string s, env_->ReadPseudoFile(z.path));
    uint64_t v = 0;
    if (!ParseU64(s, &v)) return Error(Code::kCorrupt, "'{}' holds '{}'", z.path, Trim(s));
    out.push_back(v);
  }
  return out;
}

double RaplMeter::JoulesBetween(const std::vector<uint64_t>& before,
                                const std::vector<uint64_t>& after) const {
  double uj = 0;
  for (size_t i = 0; i < zones_.size() && i < before.size() && i < after.size(); ++i) {
    uj += static_cast<double>(EnergyDeltaUj(before[i], after[i], zones_[i].max_range_uj));
  }
  return uj * 1e-6;
}

std::vector<int> ParallelismLevels(int max_parallelism) {
  std::vector<int> out;
  int p = std::max(1, max_parallelism);
  if (p <= 8) {
    for (int i = 1; i <= p; ++i) out.push_back(i);
  } else {
    for (int i = 1; i < p; i *= 2) out.push_back(i);
    out.push_back(p);
  }
  return out;
}


// --- measurement -----------------------------------------------------------

namespace {

struct Measured {
  double seconds = 0;      // the slowest rank's
  double cpu_seconds = 0;  // every rank's together
  double joules = 0;       // rank 0's RAPL zones, over rapl_seconds
  double rapl_seconds = 0;
};

// One timed pass: `threads` threads of this rank (0: none) each run
// body(thread), the threads of every rank released together after a barrier.
// Thread creation is outside the timed span. Collective.
Result<Measured> TimedPass(Comm& comm, int threads, Clock* clock, const RaplMeter& rapl,
                           const std::function<Status(int)>& body) {
  std::vector<Status> status(static_cast<size_t>(threads));
  std::latch ready(threads + 1);
  std::latch go(1);
  std::atomic<bool> cancelled{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.count_down();
      go.wait();
      if (!cancelled) status[static_cast<size_t>(t)] = body(t);
    });
  }
  ready.arrive_and_wait();
  Status barrier = comm.Barrier();
  if (!barrier.ok()) cancelled = true;
  std::vector<uint64_t> e0;
  double rapl_t0 = 0;
  if (rapl.available()) {
    auto r = rapl.Read();
    if (r.ok()) e0 = *r;
    rapl_t0 = clock->MonotonicSeconds();
  }
  const double cpu0 = ProcessCpuSeconds();
  const double t0 = clock->MonotonicSeconds();
  go.count_down();
  for (auto& th : pool) th.join();
  const double seconds = threads > 0 ? clock->MonotonicSeconds() - t0 : 0;
  const double cpu = threads > 0 ? ProcessCpuSeconds() - cpu0 : 0;
  CAIRN_RETURN_IF_ERROR(barrier);
  Status mine;
  for (const Status& s : status) {
    if (mine.ok()) mine = s;
  }
  CAIRN_RETURN_IF_ERROR(comm.Agree(mine));
  std::vector<int64_t> slowest_ns{std::llround(seconds * 1e9)};
  CAIRN_RETURN_IF_ERROR(comm.AllreduceMax(slowest_ns));
  std::vector<double> cpu_total{cpu};
  CAIRN_RETURN_IF_ERROR(comm.AllreduceSum(cpu_total));
  Measured m;
  m.seconds = static_cast<double>(slowest_ns[0]) * 1e-9;
  m.cpu_seconds = cpu_total[0];
  if (!e0.empty()) {
    auto r = rapl.Read();
    if (r.ok()) {
      m.joules = rapl.JoulesBetween(e0, *r);
      m.rapl_seconds = clock->MonotonicSeconds() - rapl_t0;
    }
  }
  return m;
}

// The profile's grids of tier `name`, made on first use.
DeviceIoProfile& DeviceGrids(IoProfile& prof, const std::string& name, ParallelismKind kind,
                             const std::vector<int>& levels, const std::vector<uint64_t>& blocks,
                             const ProfilerOptions& options, bool rapl) {
  for (auto& d : prof.devices) {
    if (d.name == name) return d;
  }
  DeviceIoProfile& dev = prof.devices.emplace_back();
  dev.name = name;
  dev.parallelism = levels;
  dev.parallelism_kind = kind;
  if (options.power_table) {
    auto it = options.power_table->device_active_w.find(dev.name);
    if (it != options.power_table->device_active_w.end()) {
      dev.active_w[0] = it->second[0];
      dev.active_w[1] = it->second[1];
    }
  }
  const size_t nf = prof.frequencies_khz.size();
  for (uint64_t block : blocks) {
    IoBlockProfile& b = dev.blocks.emplace_back();
    b.block_size = block;
    for (IoOpProfile& o : b.ops) {
      o.throughput_bps.assign(nf, std::vector<double>(levels.size(), 0));
      o.busy_cores.assign(nf, std::vector<double>(levels.size(), 0));
      if (rapl) o.watts.assign(nf, std::vector<double>(levels.size(), 0));
    }
  }
  return dev;
}

}  // namespace

Result<ProfileResult> RunIoProfile(Env* env, const Config& config, const ProfilerOptions& options) {
  ProfileResult result;
  std::unique_ptr<Comm> alone;
  Comm* comm = options.comm;
  if (comm == nullptr) {
    alone = NewSingleComm();
    comm = alone.get();
  }
  const bool rank0 = comm->rank() == 0;
  result.helper = !rank0;
  Clock* clock = options.clock ? options.clock : Clock::Real();

  if (options.bytes == 0) return Error(Code::kInvalidArgument, "bytes per measurement must be > 0");
  std::vector<uint64_t> blocks = options.block_sizes;
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  if (blocks.empty() || blocks.front() == 0) {
    return Error(Code::kInvalidArgument, "block sizes must be > 0");
  }
  std::vector<std::unique_ptr<Tier>> tiers;
  int64_t tier_mask = 0;
  for (int k = 0; k < kTierKinds; ++k) {
    CAIRN_ASSIGN_OR_RETURN(auto tier,
                           OpenNodeTier(env, config, static_cast<TierKind>(k), options.node));
    if (!tier) continue;
    tiers.push_back(std::move(tier));
    tier_mask |= int64_t{1} << k;
  }
  if (tiers.empty()) return Error(Code::kConfig, "no tier is enabled in the configuration");

  // The ranks on rank 0's node, and this rank's place among them (-1: on
  // another node).
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> nodes, comm->Allgather(comm->node()));
  int local_ranks = 0, local_index = -1;
  for (int r = 0; r < comm->size(); ++r) {
    if (nodes[static_cast<size_t>(r)] != nodes[0]) continue;
    if (r == comm->rank()) local_index = local_ranks;
    ++local_ranks;
  }
  const bool processes = local_ranks >= 2;
  const ParallelismKind kind = processes ? ParallelismKind::kProcesses : ParallelismKind::kThreads;

  // The node's power and frequency are node-wide: rank 0 alone reads and
  // sets them, so that ranks never undo each other's cpufreq settings.
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw < 1) hw = 1;
  RaplMeter rapl;
  std::unique_ptr<CpuFreqControl> cpufreq;
  std::vector<uint32_t> freqs;
  int max_p = 0;
  Status setup;
  if (rank0) {
    rapl = RaplMeter::Open(env, options.sys_root);
    if (!rapl.available() && !options.power_table) {
      setup = Error(Code::kConfig,
                    "no power source: RAPL is not readable ({}); give a power table "
                    "(--power-table FILE.json, docs/model.md \"Measuring a profile\")",
                    rapl.reason());
    } else {
      cpufreq = CpuFreqControl::Open(env, options.sys_root, options.cpuinfo_path);
      freqs = cpufreq->can_set() ? cpufreq->frequencies()
                                 : std::vector<uint32_t>{cpufreq->current_khz()};
    }
    if (processes) {
      max_p = options.max_parallelism > 0 ? std::min(options.max_parallelism, local_ranks)
                                          : local_ranks;
    } else {
      max_p = options.max_parallelism > 0 ? options.max_parallelism : hw;
    }
  }
  CAIRN_RETURN_IF_ERROR(comm->Agree(setup));
  // Every rank runs the same loops, of rank 0's sizes.
  std::vector<int64_t> plan{rank0 ? static_cast<int64_t>(freqs.size()) : 0, rank0 ? max_p : 0,
                            rank0 ? tier_mask : 0};
  CAIRN_RETURN_IF_ERROR(comm->AllreduceMax(plan));
  const size_t nf = static_cast<size_t>(plan[0]);
  max_p = static_cast<int>(plan[1]);
  CAIRN_RETURN_IF_ERROR(comm->Agree(
      tier_mask == plan[2]
                 ? Status::Ok()
                 : Error(Code::kConfig, "this rank's configuration enables other tiers than "
                                        "rank 0's")));
  const std::vector<int> levels = ParallelismLevels(max_p);
  // This rank's writers at parallelism p: the first p ranks of the node with
  // one each, or rank 0 with p threads.
  auto writers = [&](int p) {
    if (processes) return local_index >= 0 && local_index < p ? 1 : 0;
    return rank0 ? p : 0;
  };
  const bool writes = writers(levels.back()) > 0;
  const bool use_rapl = rapl.available();

  IoProfile& prof = result.profile;
  if (rank0) {
    prof.frequencies_khz = freqs;
    prof.cores = hw;
    prof.power_source = use_rapl ? PowerSource::kRapl : PowerSource::kTable;
    if (options.power_table) {
      for (uint32_t f : freqs) {
        bool exact = true;
        size_t row = options.power_table->RowFor(f, &exact);
        prof.idle_w.push_back(options.power_table->idle_w[row]);
        prof.core_busy_w.push_back(options.power_table->core_busy_w[row]);
        if (!exact) {
          result.notes.push_back(fmt::format("power table has no row for {} kHz: used {} kHz", f,
                                             options.power_table->frequencies_khz[row]));
        }
      }
    }

    // Notes that make the profile honest about what it is.
    if (processes) {
      result.notes.push_back(fmt::format(
          "parallelism is processes: 1..{} of the {} ranks mpirun put on this node each write, "
          "then read, their own file at once, started by a barrier; throughput is all bytes "
          "over the slowest rank's time, busy cores the writing ranks' CPU time over it; ranks "
          "not writing wait in MPI, which may keep a core busy polling",
          max_p, local_ranks));
      if (options.max_parallelism > local_ranks) {
        result.notes.push_back(fmt::format(
            "--max-parallelism {} exceeds the {} ranks on this node: measured up to {}",
            options.max_parallelism, local_ranks, local_ranks));
      }
    } else if (comm->size() > 1) {
      result.notes.push_back(fmt::format(
          "parallelism is threads of rank 0: mpirun ran {} processes but only rank 0 on this "
          "node (process parallelism needs 2 or more ranks on the node)",
          comm->size()));
    } else {
      result.notes.push_back(
          "parallelism is threads of one process (run alone; process parallelism not measured: "
          "run it under mpirun with one rank per writer)");
    }
    if (comm->nodes() > 1) {
      result.notes.push_back(fmt::format(
          "ranks on the other {} node(s) measured nothing; the profile is of rank 0's node",
          comm->nodes() - 1));
    }
    if (cpufreq->can_set()) {
      result.notes.push_back(fmt::format("DVFS: swept {} frequencies through the {}",
                                         freqs.size(), cpufreq->method_name()));
    } else {
      result.notes.push_back(fmt::format(
          "DVFS unavailable ({}); recorded the current frequency {} kHz{}", cpufreq->reason(),
          cpufreq->current_khz(),
          cpufreq->current_source().empty() ? " (unknown)" : " from " + cpufreq->current_source()));
    }
    if (use_rapl) {
      std::string zones;
      for (const auto& z : rapl.zone_names()) zones += (zones.empty() ? "" : "+") + z;
      result.notes.push_back("power: measured with RAPL (" + zones +
                             ": CPU packages and DRAM only, not the whole node)");
    } else {
      result.notes.push_back(fmt::format("power: NOT measured (RAPL unavailable: {}); from the "
                                         "user's power table {}",
                                         rapl.reason(), options.power_table_name));
    }
    std::string bs_text;
    for (uint64_t b : blocks) bs_text += (bs_text.empty() ? "" : ", ") + SizeText(b);
    result.notes.push_back(fmt::format("{} per measurement; one grid per block size: {}",
                                       SizeText(options.bytes), bs_text));
  }

  const int total = static_cast<int>(nf * tiers.size() * levels.size() * blocks.size());
  int done = 0;
  std::vector<uint8_t> pattern(blocks.back());
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 131 + 7);

  // Every failure is agreed on before the next collective, so that all ranks
  // leave the loops at the same point.
  Status failure;
  for (size_t fi = 0; fi < nf && failure.ok(); ++fi) {
    failure = comm->Agree(rank0 && cpufreq->can_set() ? cpufreq->Set(freqs[fi]) : Status::Ok());
    if (!failure.ok()) break;
    for (size_t ti = 0; ti < tiers.size() && failure.ok(); ++ti) {
      Tier& tier = *tiers[ti];
      const bool persist = tier.persists();
      const bool direct = persist && tier.config().direct_io;
      DeviceIoProfile* dev = nullptr;
      if (rank0) {
        if (fi == 0 && !persist) {
          result.notes.push_back(std::string(tier.name()) +
                                 ": memory file system; reads come from RAM by nature");
        } else if (fi == 0) {
          const char* how =
              direct ? "O_DIRECT (where the file system allows)" : "buffered (direct_io = false)";
          result.notes.push_back(
              std::string(tier.name()) + ": writes " + how +
              " + fsync; page cache evicted before reads (fdatasync + POSIX_FADV_DONTNEED), "
              "so reads come from the device except on a memory file system (tmpfs), which "
              "keeps its pages");
        }
        dev = &DeviceGrids(prof, tier.name(), kind, levels, blocks, options, use_rapl);
      }
      // Per rank: ranks of one node may not share a pid namespace.
      const std::string scratch = JoinPath(
          tier.root(), fmt::format(".cairn-profile-{}-{}", ::getpid(), comm->rank()));
      failure = comm->Agree(writes ? env->CreateDirs(scratch) : Status::Ok());
      if (!failure.ok()) break;
      for (size_t pi = 0; pi < levels.size() && failure.ok(); ++pi) {
        const int p = levels[pi];
        const int mine = writers(p);
        for (size_t bi = 0; bi < blocks.size(); ++bi) {
          const uint64_t block = blocks[bi];
          if (rank0 && options.progress) {
            options.progress(done, total,
                             fmt::format("{} p={} {} @{} kHz", tier.name(), p, SizeText(block),
                                         freqs[fi]));
          }
          ++done;
          // Each writer moves a whole number of blocks, at least one.
          uint64_t per_writer = std::max<uint64_t>(1, (options.bytes / p + block - 1) / block);
          const uint64_t bytes = per_writer * block * static_cast<uint64_t>(p);
          auto file_of = [&](int t) { return JoinPath(scratch, fmt::format("t{}", t)); };
          WriteOptions wo;
          wo.direct_io = direct;
          auto wrote = TimedPass(*comm, mine, clock, rapl, [&](int t) -> Status {
            CAIRN_ASSIGN_OR_RETURN(auto f, env->NewWritableFile(file_of(t), wo));
            for (uint64_t i = 0; i < per_writer; ++i) {
              CAIRN_RETURN_IF_ERROR(f->Append(pattern.data(), block));
            }
            if (persist) CAIRN_RETURN_IF_ERROR(f->Sync());
            return f->Close();
          });
          if (!wrote.ok()) {
            failure = wrote.status();
            break;
          }
          // A read of pages the write left in the page cache measures memory,
          // not the device. (The memory tier's pages are the file.)
          Status evicted;
          for (int t = 0; t < mine && persist && evicted.ok(); ++t) {
            evicted = env->EvictFromCache(file_of(t));
          }
          failure = comm->Agree(evicted);
          if (!failure.ok()) break;
          std::atomic<uint64_t> sum{0};
          auto read = TimedPass(*comm, mine, clock, rapl, [&](int t) -> Status {
            CAIRN_ASSIGN_OR_RETURN(auto f, env->NewReadableFile(file_of(t)));
            std::vector<uint8_t> buf(block);
            uint64_t local = 0;
            for (uint64_t i = 0; i < per_writer; ++i) {
              CAIRN_RETURN_IF_ERROR(f->ReadAt(i * block, buf.data(), block));
              local += buf[i % block];  // touch the data
            }
            sum += local;
            return Status::Ok();
          });
          if (!read.ok()) {
            failure = read.status();
            break;
          }
          if (!rank0) continue;
          for (IoOp op : {IoOp::kWrite, IoOp::kRead}) {
            const Measured& m = op == IoOp::kWrite ? *wrote : *read;
            ProfileSample s;
            s.device = tier.name();
            s.op = op;
            s.frequency_khz = freqs[fi];
            s.parallelism = p;
            s.block_size = block;
            s.bytes = bytes;
            s.seconds = std::max(m.seconds, 1e-9);
            s.throughput_bps = static_cast<double>(bytes) / s.seconds;
            s.busy_cores = std::clamp(m.cpu_seconds / s.seconds, 0.0, static_cast<double>(hw));
            s.watts = use_rapl ? m.joules / std::max(m.rapl_seconds, 1e-9) : 0;
            result.samples.push_back(s);
            IoOpProfile& o = dev->blocks[bi].op(op);
            o.throughput_bps[fi][pi] = s.throughput_bps;
            o.busy_cores[fi][pi] = s.busy_cores;
            if (use_rapl) o.watts[fi][pi] = s.watts;
          }
        }
      }
      if (writes) (void)env->DeleteRecursive(scratch);
    }
  }
  Status finished = rank0 ? cpufreq->Restore() : Status::Ok();
  CAIRN_RETURN_IF_ERROR(failure);
  if (rank0 && finished.ok()) {
    if (options.progress) options.progress(total, total, "done");
    char host[256] = "unknown";
    (void)::gethostname(host, sizeof(host) - 1);
    std::time_t now = static_cast<std::time_t>(Clock::Real()->WallSeconds());
    char date[32] = "";
    struct tm tm_utc;
    if (::gmtime_r(&now, &tm_utc)) std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
    prof.description = fmt::format("cairn profile on {}, {}", host, date);
    for (const std::string& n : result.notes) prof.description += "; " + n;
    finished = ValidateIoProfile(prof);
  }
  CAIRN_RETURN_IF_ERROR(comm->Agree(finished));
  return result;
}

}  // namespace cairn
