// Helpers shared by the benchmarks: command lines through CLI11, JSON lines
// through nlohmann/json and generated configurations through toml++, so
// that no benchmark quotes, escapes or parses by hand.
#ifndef CAIRN_BENCH_BENCH_SUPPORT_H_
#define CAIRN_BENCH_BENCH_SUPPORT_H_

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace cairn_bench {

// The median of samples (the mean of the middle two for an even count; 0
// for none): what the benchmarks report of repeated timings.
inline double Median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

// A JSON object whose members print in the order they were set.
using Json = nlohmann::ordered_json;

// Prints value on stdout as one line of compact JSON, then flushes (the
// benchmarks report progress on stderr between lines). Non-finite numbers
// print as null: JSON has no infinity.
inline void PrintJsonLine(const Json& value) {
  std::string line = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::puts(line.c_str());
  std::fflush(stdout);
}

// A TOML document as text; toml++ quotes and escapes every string (paths
// may hold quotes or backslashes).
inline std::string TomlText(const toml::table& document) {
  std::ostringstream out;
  out << toml::toml_formatter(document) << '\n';
  return out.str();
}

// A number option in [min, max]; unlike CLI::Range it also refuses nan.
inline CLI::Validator FiniteRange(double min, double max) {
  std::ostringstream range;
  range << "FINITE in [" << min << " - " << max << "]";
  return CLI::Validator(
      [min, max, text = range.str()](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || !std::isfinite(v) || v < min || v > max) {
          return "Value " + value + " not " + text;
        }
        return "";
      },
      range.str());
}

// Parses the command line into app. Returns nullopt to go on, else the
// exit status: 0 after --help, 2 after a usage error. Only a `speaker`
// (rank 0 of an MPI benchmark) prints the help or the error.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv,
                                           bool speaker = true) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::ostringstream silent;
    if (speaker) {
      app.exit(e);
    } else {
      app.exit(e, silent, silent);
    }
    return e.get_exit_code() == 0 ? 0 : 2;
  }
}

// Removes path and everything under it (symlinks as links), quietly.
inline void RemoveTree(const std::string& path) {
  nftw(
      path.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p), 0; },
      32, FTW_DEPTH | FTW_PHYS);
}

// Removes directory trees when this process ends, however it ends: a
// benchmark killed by mpirun (Ctrl-C, a closed output pipe, a time limit)
// otherwise leaves its data behind, gigabytes of RAM under /dev/shm. A
// helper process, forked before MPI_Init (MPI must not see a fork), reads
// the paths from a pipe and removes them once the pipe closes, which is
// when this process exits or is killed, SIGKILL included.
class RemovedAtExit {
 public:
  RemovedAtExit() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      return;
    }
    if (pid == 0) RunHelper(fds[0], fds[1]);  // never returns
    close(fds[0]);
    fd_ = fds[1];
  }
  ~RemovedAtExit() {
    if (fd_ >= 0) close(fd_);
  }
  RemovedAtExit(const RemovedAtExit&) = delete;
  RemovedAtExit& operator=(const RemovedAtExit&) = delete;

  // Removes `path` when this process ends (the benchmark may remove it
  // itself before).
  void Add(const std::string& path) {
    const std::string line = path + '\n';
    if (fd_ >= 0 && write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      std::fprintf(stderr, "warning: %s will be left behind if this run is killed\n",
                   path.c_str());
    }
  }

 private:
  [[noreturn]] static void RunHelper(int read_end, int write_end) {
    close(write_end);
    prctl(PR_SET_NAME, "bench-cleanup");  // not the benchmark's name in ps or pkill
    // Out of the job's process group and session, so that the signal that
    // ends the job does not end the helper too, and off the job's output,
    // so that nothing waits for the helper's copy of it.
    setsid();
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    const int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2 && null >= 0; ++fd) dup2(null, fd);
    std::string paths;
    char buf[4096];
    for (;;) {
      const ssize_t n = read(read_end, buf, sizeof buf);
      if (n > 0) {
        paths.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    for (size_t at = 0, end; (end = paths.find('\n', at)) != std::string::npos; at = end + 1) {
      RemoveTree(paths.substr(at, end - at));
    }
    _exit(0);
  }

  int fd_ = -1;
};

}  // namespace cairn_bench

#endif  // CAIRN_BENCH_BENCH_SUPPORT_H_
