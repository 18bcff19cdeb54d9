// Crash campaign: a worker process checkpoints version after version and is
// SIGKILLed at a random moment, over and over on the same storage: half of
// the kills come from the fault env at a random file operation (inside
// cairn_checkpoint or inside the background drain), half from this driver at
// a random time. Each new worker first restarts. The test asserts that
// restart always finds a complete version, restores it bit for bit, and
// never goes back past a version whose checkpoint call had returned.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "comm/comm.h"
#include "env/fault_env.h"
#include "runtime/engine.h"
#include "test_support.h"

namespace {

using cairn_test::FillVersion;
using cairn_test::HoldsVersion;

constexpr size_t kWords = 192 * 1024;  // 1.5 MiB: memory-tier slots in play

// Worker: restart, report "R <version> <ok|BAD>", then checkpoint and report
// "C <version>" after each call returns. kill_at > 0 arms the fault env.
[[noreturn]] void Worker(const std::string& dir, int out_fd, int kill_at) {
  auto say = [out_fd](const std::string& line) {
    std::string l = line + "\n";
    if (::write(out_fd, l.data(), l.size()) < 0) ::_exit(3);
  };
  cairn::FaultEnv env(cairn::PosixEnv());
  auto engine = cairn::Engine::Create(cairn::NewSingleComm(), cairn_test::ThreeTierConfig(dir),
                                      &env, cairn::Clock::Real());
  if (!engine.ok()) {
    say("E " + engine.status().ToString());
    ::_exit(2);
  }
  std::vector<uint64_t> data(kWords, 0);
  int64_t step = 0;
  (void)(*engine)->Protect(0, data.data(), data.size(), sizeof(uint64_t));
  (void)(*engine)->Protect(1, &step, 1, sizeof(step));
  auto v = (*engine)->RestartTest("crash", -1);
  int64_t next = 1;
  if (v.ok() && *v >= 0) {
    auto report = (*engine)->Restart("crash", *v);
    bool ok = report.ok() && report->version == *v && step == *v && HoldsVersion(data, *v);
    say("R " + std::to_string(*v) + (ok ? " ok" : " BAD " + report.status().ToString()));
    next = *v + 1;
  } else {
    say("R -1 ok");
  }
  if (kill_at > 0) env.KillAt(env.operations() + kill_at);
  for (int64_t version = next; version < next + 40; ++version) {
    FillVersion(data, version);
    step = version;
    cairn::Status s = (*engine)->Checkpoint("crash", version);
    if (!s.ok()) {
      say("E " + s.ToString());
      ::_exit(2);
    }
    say("C " + std::to_string(version));
  }
  (void)(*engine)->Finalize();
  ::_exit(0);
}

struct Round {
  int64_t restored = -2;
  bool restore_ok = false;
  int64_t last_committed = -1;
  std::string error;
  bool killed = false;
};

Round RunRound(const std::string& dir, std::mt19937& rng, bool internal_kill) {
  int fds[2];
  if (::pipe(fds) != 0) std::abort();
  int kill_at = internal_kill ? 1 + static_cast<int>(rng() % 600) : 0;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    Worker(dir, fds[1], kill_at);
  }
  ::close(fds[1]);
  FILE* in = ::fdopen(fds[0], "r");
  Round round;
  int commits_before_kill = static_cast<int>(rng() % 6);
  long spin_ns = static_cast<long>(rng() % 4000000);
  char line[512];
  while (std::fgets(line, sizeof line, in) != nullptr) {
    if (line[0] == 'R') {
      long long v = 0;
      char word[16] = {};
      std::sscanf(line, "R %lld %15s", &v, word);
      round.restored = v;
      round.restore_ok = std::string(word) == "ok";
      if (!round.restore_ok) round.error = line;
    } else if (line[0] == 'C') {
      round.last_committed = std::atoll(line + 2);
      if (!internal_kill && --commits_before_kill < 0) {
        // Kill at a random point of the next checkpoint or drain.
        timespec start;
        ::clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
          timespec now;
          ::clock_gettime(CLOCK_MONOTONIC, &now);
          if ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) > spin_ns) break;
        }
        ::kill(pid, SIGKILL);
        break;
      }
    } else {
      round.error = line;
    }
  }
  std::fclose(in);
  int status = 0;
  ::waitpid(pid, &status, 0);
  round.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  return round;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::atoi(argv[1]) : 120;
  unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 20261122u;
  std::printf("crash campaign: %d kills, seed %u\n", runs, seed);
  std::mt19937 rng(seed);
  int failures = 0, kills = 0, internal = 0, restores = 0;
  const int kRoundsPerDir = 12;
  for (int done = 0; done < runs;) {
    cairn_test::TempDir dir;
    int64_t acknowledged = -1;
    for (int r = 0; r < kRoundsPerDir && done < runs; ++r, ++done) {
      bool internal_kill = rng() % 2 == 0;
      Round round = RunRound(dir.path(), rng, internal_kill);
      if (!round.error.empty() || !round.restore_ok) {
        std::printf("FAIL seed %u kill %d: %s\n", seed, done, round.error.c_str());
        ++failures;
      } else if (round.restored < acknowledged) {
        std::printf("FAIL seed %u kill %d: restored %lld but %lld had been committed\n", seed, done,
                    static_cast<long long>(round.restored), static_cast<long long>(acknowledged));
        ++failures;
      }
      if (round.restored >= 0) ++restores;
      if (round.killed) ++kills;
      if (internal_kill && round.killed) ++internal;
      acknowledged = std::max(acknowledged, round.last_committed);
    }
  }
  std::printf("%d runs: %d SIGKILLed (%d at a file operation, %d at a random time), %d restores\n",
              runs, kills, internal, kills - internal, restores);
  std::printf("%d passed, %d failed\n", runs - failures, failures);
  return failures == 0 ? 0 : 1;
}
