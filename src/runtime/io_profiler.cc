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

// --- mpirun ----------------------------------------------------------------

MpiLaunch DetectMpiLaunch(const GetEnvFn& getenv) {
  MpiLaunch l;
  auto num = [&](std::initializer_list<const char*> names, int* out) {
    for (const char* n : names) {
      const char* v = getenv(n);
      if (v && *v) {
        *out = std::atoi(v);
        return true;
      }
    }
    return false;
  };
  l.under_mpirun = num({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"},
                       &l.size);
  num({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "SLURM_LOCALID"},
      &l.local_rank);
  if (l.size < 1) l.size = 1;
  return l;
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
  double seconds = 0;
  double cpu_seconds = 0;
  double joules = 0;
};

// Runs body(thread) on n threads released together; times the whole.
Result<Measured> RunParallel(int n, Clock* clock, const RaplMeter& rapl,
                             const std::function<Status(int)>& body) {
  std::vector<Status> status(static_cast<size_t>(n));
  std::latch ready(n + 1);
  std::latch go(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.count_down();
      go.wait();
      status[static_cast<size_t>(t)] = body(t);
    });
  }
  ready.arrive_and_wait();
  std::vector<uint64_t> e0, e1;
  if (rapl.available()) {
    auto r = rapl.Read();
    if (r.ok()) e0 = *r;
  }
  double cpu0 = ProcessCpuSeconds();
  double t0 = clock->MonotonicSeconds();
  go.count_down();
  for (auto& th : threads) th.join();
  Measured m;
  m.seconds = clock->MonotonicSeconds() - t0;
  m.cpu_seconds = ProcessCpuSeconds() - cpu0;
  if (rapl.available() && !e0.empty()) {
    auto r = rapl.Read();
    if (r.ok()) m.joules = rapl.JoulesBetween(e0, *r);
  }
  for (const Status& s : status) CAIRN_RETURN_IF_ERROR(s);
  return m;
}

}  // namespace

Result<ProfileResult> RunIoProfile(Env* env, const Config& config, const ProfilerOptions& options) {
  ProfileResult result;
  GetEnvFn getenv = options.getenv ? options.getenv : GetEnvFn([](const char* n) {
    return static_cast<const char*>(std::getenv(n));
  });
  Clock* clock = options.clock ? options.clock : Clock::Real();

  MpiLaunch mpi = DetectMpiLaunch(getenv);
  if (mpi.under_mpirun && mpi.local_rank != 0) {
    result.skipped = true;
    result.notes.push_back(fmt::format(
        "skipped: local rank {} under mpirun; only local rank 0 of a node profiles it",
        mpi.local_rank));
    return result;
  }
  if (options.bytes == 0) return Error(Code::kInvalidArgument, "bytes per measurement must be > 0");
  std::vector<uint64_t> blocks = options.block_sizes;
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  if (blocks.empty() || blocks.front() == 0) {
    return Error(Code::kInvalidArgument, "block sizes must be > 0");
  }
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw < 1) hw = 1;
  int max_p = options.max_parallelism > 0 ? options.max_parallelism : hw;
  std::vector<int> levels = ParallelismLevels(max_p);

  // Tiers to measure.
  std::vector<std::unique_ptr<Tier>> tiers;
  for (int k = 0; k < kTierKinds; ++k) {
    auto tier = OpenNodeTier(env, config, static_cast<TierKind>(k), options.node);
    if (tier) tiers.push_back(std::move(tier));
  }
  if (tiers.empty()) return Error(Code::kConfig, "no tier is enabled in the configuration");

  // Power.
  RaplMeter rapl = RaplMeter::Open(env, options.sys_root);
  const bool use_rapl = rapl.available();
  if (!use_rapl && !options.power_table) {
    return Error(Code::kConfig,
                 "no power source: RAPL is not readable ({}); give a power table "
                 "(--power-table FILE.json, docs/model.md \"Measuring a profile\")",
                 rapl.reason());
  }

  // CPU frequencies.
  auto cpufreq = CpuFreqControl::Open(env, options.sys_root, options.cpuinfo_path);
  std::vector<uint32_t> freqs =
      cpufreq->can_set() ? cpufreq->frequencies() : std::vector<uint32_t>{cpufreq->current_khz()};

  IoProfile& prof = result.profile;
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
  result.notes.push_back(
      mpi.under_mpirun
          ? fmt::format("run under mpirun ({} processes): only local rank 0 measured; "
                        "parallelism is threads of one process, process parallelism NOT measured",
                        mpi.size)
          : "parallelism is threads of one process (not under mpirun; process parallelism not "
            "measured)");
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
  result.notes.push_back(fmt::format("{} per measurement; grids hold the best of block sizes {}",
                                     SizeText(options.bytes), bs_text));

  const int total = static_cast<int>(freqs.size() * tiers.size() * levels.size() * blocks.size());
  int done = 0;
  std::vector<uint8_t> pattern(blocks.back());
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 131 + 7);

  Status failure;
  for (size_t fi = 0; fi < freqs.size() && failure.ok(); ++fi) {
    if (cpufreq->can_set()) {
      failure = cpufreq->Set(freqs[fi]);
      if (!failure.ok()) break;
    }
    for (size_t ti = 0; ti < tiers.size() && failure.ok(); ++ti) {
      Tier& tier = *tiers[ti];
      const bool persist = tier.persists();
      const bool direct = persist && tier.config().direct_io;
      if (fi == 0) {
        if (!persist) {
          result.notes.push_back(std::string(tier.name()) +
                                 ": memory file system; reads come from RAM by nature");
        } else if (direct) {
          result.notes.push_back(
              std::string(tier.name()) +
              ": writes O_DIRECT (where the file system allows) + fsync; page cache NOT evicted "
              "before reads (no fadvise in Env): reads are uncached only where O_DIRECT was "
              "honoured");
        } else {
          result.notes.push_back(std::string(tier.name()) +
                                 ": writes buffered + fsync (direct_io = false); cache not "
                                 "evicted: reads may come from the page cache");
        }
      }
      DeviceIoProfile* dev = nullptr;
      for (auto& d : prof.devices) {
        if (d.name == tier.name()) dev = &d;
      }
      if (!dev) {
        prof.devices.emplace_back();
        dev = &prof.devices.back();
        dev->name = tier.name();
        dev->parallelism = levels;
        if (options.power_table) {
          auto it = options.power_table->device_active_w.find(dev->name);
          if (it != options.power_table->device_active_w.end()) {
            dev->active_w[0] = it->second[0];
            dev->active_w[1] = it->second[1];
          }
        }
        for (IoOpProfile& o : dev->ops) {
          o.throughput_bps.assign(freqs.size(), std::vector<double>(levels.size(), 0));
          o.busy_cores.assign(freqs.size(), std::vector<double>(levels.size(), 0));
          if (use_rapl) o.watts.assign(freqs.size(), std::vector<double>(levels.size(), 0));
        }
      }
      const std::string scratch =
          JoinPath(tier.root(), fmt::format(".cairn-profile-{}", ::getpid()));
      failure = env->CreateDirs(scratch);
      if (!failure.ok()) break;
      for (size_t pi = 0; pi < levels.size() && failure.ok(); ++pi) {
        const int p = levels[pi];
        for (uint64_t block : blocks) {
          if (options.progress) {
            options.progress(done, total,
                             fmt::format("{} p={} {} @{} kHz", tier.name(), p, SizeText(block),
                                         freqs[fi]));
          }
          ++done;
          // Each thread moves a whole number of blocks, at least one.
          uint64_t per_thread = std::max<uint64_t>(1, (options.bytes / p + block - 1) / block);
          const uint64_t bytes = per_thread * block * static_cast<uint64_t>(p);
          auto file_of = [&](int t) { return JoinPath(scratch, fmt::format("t{}", t)); };
          WriteOptions wo;
          wo.direct_io = direct;
          auto wrote = RunParallel(p, clock, rapl, [&](int t) -> Status {
            CAIRN_ASSIGN_OR_RETURN(auto f, env->NewWritableFile(file_of(t), wo));
            for (uint64_t i = 0; i < per_thread; ++i) {
              CAIRN_RETURN_IF_ERROR(f->Append(pattern.data(), block));
            }
            if (persist) CAIRN_RETURN_IF_ERROR(f->Sync());
            return f->Close();
          });
          if (!wrote.ok()) {
            failure = wrote.status();
            break;
          }
          std::atomic<uint64_t> sum{0};
          auto read = RunParallel(p, clock, rapl, [&](int t) -> Status {
            CAIRN_ASSIGN_OR_RETURN(auto f, env->NewReadableFile(file_of(t)));
            std::vector<uint8_t> buf(block);
            uint64_t local = 0;
            for (uint64_t i = 0; i < per_thread; ++i) {
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
            s.watts = use_rapl ? m.joules / s.seconds : 0;
            result.samples.push_back(s);
            IoOpProfile& o = dev->op(op);
            if (s.throughput_bps > o.throughput_bps[fi][pi]) {
              o.throughput_bps[fi][pi] = s.throughput_bps;
              o.busy_cores[fi][pi] = s.busy_cores;
              if (use_rapl) o.watts[fi][pi] = s.watts;
            }
          }
        }
      }
      (void)env->DeleteRecursive(scratch);
    }
  }
  Status restored = cpufreq->Restore();
  CAIRN_RETURN_IF_ERROR(failure);
  CAIRN_RETURN_IF_ERROR(restored);
  if (options.progress) options.progress(total, total, "done");

  char host[256] = "unknown";
  (void)::gethostname(host, sizeof(host) - 1);
  std::time_t now = static_cast<std::time_t>(Clock::Real()->WallSeconds());
  char date[32] = "";
  struct tm tm_utc;
  if (::gmtime_r(&now, &tm_utc)) std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  prof.description = fmt::format("cairn profile on {}, {}", host, date);
  for (const std::string& n : result.notes) prof.description += "; " + n;
  CAIRN_RETURN_IF_ERROR(ValidateIoProfile(prof));
  return result;
}

}  // namespace cairn
