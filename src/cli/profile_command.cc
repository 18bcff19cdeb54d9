#include "cli/profile_command.h"

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "api/process_comm.h"
#include "base/config.h"
#include "cli/inventory.h"
#include "comm/comm.h"
#include "env/env.h"
#include "model/io_profile.h"
#include "model/power_table.h"
#include "runtime/io_profiler.h"

namespace cairn {

namespace {

struct ProfileFlags {
  std::string config_path;
  std::string out = "cairn-profile.json";
  int max_parallelism = 0;
  std::string bytes = "32MiB";
  std::vector<std::string> block_sizes = {"64KiB", "1MiB", "4MiB"};
  std::string power_table;
  bool json = false;
};

// One line, redrawn in place: [#####     ] 12/36 ssd p=2 1 MiB @2600000 kHz
void DrawProgress(int done, int total, const std::string& what) {
  constexpr int kWidth = 30;
  int filled = total > 0 ? done * kWidth / total : kWidth;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r[%s] %d/%d %-40.40s", bar.c_str(), done, total, what.c_str());
  if (done >= total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

int RunProfile(const ProfileFlags& flags) {
  // Under mpirun every rank runs this; rank 0 alone speaks, except that a
  // rank whose own setup fails says why.
  auto process = ProcessComm::Open(ProcessEnvLookup());
  if (!process.ok()) {
    fmt::print(stderr, "cairn profile: {}\n", process.status().ToString());
    return 1;
  }
  Comm& comm = (*process)->comm();
  const bool rank0 = comm.rank() == 0;
  const std::string prefix =
      comm.size() > 1 ? fmt::format("cairn profile (rank {})", comm.rank()) : "cairn profile";

  ProfilerOptions options;
  options.comm = &comm;
  options.max_parallelism = flags.max_parallelism;
  auto bytes = ParseSize(flags.bytes);
  if (!bytes.ok() || *bytes == 0) {
    if (rank0) {
      fmt::print(stderr, "cairn profile: --bytes '{}': {}\n", flags.bytes,
                 bytes.ok() ? "must be > 0" : bytes.status().ToString());
    }
    return 2;
  }
  options.bytes = *bytes;
  options.block_sizes.clear();
  for (const std::string& b : flags.block_sizes) {
    auto size = ParseSize(b);
    if (!size.ok() || *size == 0) {
      if (rank0) {
        fmt::print(stderr, "cairn profile: --block-sizes '{}': {}\n", b,
                   size.ok() ? "must be > 0" : size.status().ToString());
      }
      return 2;
    }
    options.block_sizes.push_back(*size);
  }
  // Files are read by each rank, and may differ between nodes: all ranks
  // must have theirs before any measures.
  Env* env = PosixEnv();
  int failed_exit = 0;
  if (!flags.power_table.empty()) {
    auto text = env->ReadFileToString(flags.power_table);
    Result<PowerTable> table =
        text.ok() ? ParsePowerTable(*text, flags.power_table) : Result<PowerTable>(text.status());
    if (table.ok()) {
      options.power_table = *table;
      options.power_table_name = flags.power_table;
    } else {
      fmt::print(stderr, "{}: --power-table: {}\n", prefix, table.status().ToString());
      failed_exit = 2;
    }
  }
  auto config = LoadCliConfig(flags.config_path);
  if (failed_exit == 0 && !config.ok()) {
    fmt::print(stderr, "{}: {}\n", prefix, config.status().ToString());
    failed_exit = 1;
  }
  auto all_ready = comm.AllTrue(failed_exit == 0);
  if (!all_ready.ok()) {
    fmt::print(stderr, "{}: {}\n", prefix, all_ready.status().ToString());
    return 1;
  }
  if (!*all_ready) return failed_exit != 0 ? failed_exit : 1;
  if (rank0 && ::isatty(STDERR_FILENO)) options.progress = DrawProgress;

  auto result = RunIoProfile(env, *config, options);
  if (!result.ok()) {
    // Every rank has the same error, naming the rank it came from.
    if (rank0) fmt::print(stderr, "cairn profile: {}\n", result.status().ToString());
    return 1;
  }
  if (result->helper) return 0;
  const std::string json = SerializeIoProfile(result->profile);
  Status s = env->WriteFileAtomic(flags.out, json.data(), json.size(), true);
  if (!s.ok()) {
    fmt::print(stderr, "cairn profile: writing {}: {}\n", flags.out, s.ToString());
    return 1;
  }
  if (flags.json) {
    fmt::print("{}\n", json);
    return 0;
  }
  const bool processes =
      result->profile.devices.front().parallelism_kind == ParallelismKind::kProcesses;
  fmt::print("{:<8} {:<5} {:>10} {:>7} {:>8} {:>12} {:>6} {:>8}\n", "device", "op", "freq_kHz",
             processes ? "procs" : "threads", "block", "MB/s", "cores", "watts");
  for (const ProfileSample& x : result->samples) {
    fmt::print("{:<8} {:<5} {:>10} {:>7} {:>7}K {:>12.1f} {:>6.2f} {:>8}\n", x.device,
               IoOpName(x.op), x.frequency_khz, x.parallelism, x.block_size >> 10,
               x.throughput_bps / 1e6, x.busy_cores,
               x.watts > 0 ? fmt::format("{:.1f}", x.watts) : std::string("-"));
  }
  for (const std::string& n : result->notes) fmt::print("note: {}\n", n);
  fmt::print("wrote {} (power source: {}); use it with: cairn model --profile {}\n", flags.out,
             PowerSourceName(result->profile.power_source), flags.out);
  return 0;
}

}  // namespace

void AddProfileCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Measure this node's I/O profile for `cairn model`: write (fsync'd, O_DIRECT where "
      "possible) and read (after evicting the files from the page cache) throughput of every "
      "enabled tier against I/O parallelism and block size, at every CPU frequency cpufreq "
      "lets it set, with power from RAPL or from --power-table. Parallelism is processes under "
      "`mpirun -np N` (N ranks on the node), threads otherwise");
  cmd->add_option("--config", flags->config_path,
                  "configuration file (default: $CAIRN_CONFIG, else built-in defaults); its "
                  "enabled tiers are measured");
  cmd->add_option("--out", flags->out, "the profile, JSON (docs/model.md)")->capture_default_str();
  cmd->add_option("--max-parallelism", flags->max_parallelism,
                  "P: measure 1..P writers (powers of two and P when P > 8); default the "
                  "hardware threads, or under mpirun the ranks on the node (at most those)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--bytes", flags->bytes,
                  "bytes moved per measurement, all writers together (e.g. 32MiB, 1GiB); larger "
                  "is more accurate and slower")
      ->capture_default_str();
  cmd->add_option("--block-sizes", flags->block_sizes,
                  "bytes per read/write call to measure, comma-separated; the profile keeps one "
                  "grid per block size and `cairn model` picks the best")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--power-table", flags->power_table,
                  "JSON power table (W per frequency, idle and per busy core; active W per "
                  "device) used when RAPL is not readable; required then")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", flags->json, "print the profile written instead of the table");
  cmd->footer(
      "Without a writable cpufreq interface (userspace governor or scaling_max_freq; needs "
      "root) the profile has one frequency and says \"DVFS unavailable\". Under `mpirun -np "
      "N`, for p = 1..N, p ranks of rank 0's node write and read at once (process "
      "parallelism); rank 0 alone prints and writes the profile. Keep the tiers idle while profiling. Exit status: "
      "0 ok, 2 bad option, 1 measuring or writing failed.");
  cmd->callback([flags, &exit_code]() { exit_code = RunProfile(*flags); });
}

}  // namespace cairn
