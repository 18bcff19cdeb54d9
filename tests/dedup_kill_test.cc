// SIGKILL during deduplicated checkpoints (label dedup): a child process
// checkpoints versions in an incremental dedup mode and acknowledges each
// one on a pipe; the test kills it right after an acknowledgement (so, most
// of the time, inside the next checkpoint) and restarts: the restored
// version is at least the last acknowledged one and bit-exact. Several
// rounds, kill points from a fixed seed (printed).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cairn/cairn.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kPages = 256;

// Version v: most pages as in version 0, every 7th page rewritten.
std::vector<uint8_t> State(int v) {
  std::vector<uint8_t> s(kPages * kPage + 300);
  for (size_t p = 0; p < kPages; ++p) std::memset(s.data() + p * kPage, static_cast<int>(p % 32), kPage);
  for (size_t p = static_cast<size_t>(v) % 7; p < kPages; p += 7) {
    std::memcpy(s.data() + p * kPage + 8, &v, sizeof v);
  }
  std::memset(s.data() + kPages * kPage, v, 300);
  return s;
}

// The child: checkpoints versions 0, 1, ... until killed, writing each
// committed version number to `ack`.
[[noreturn]] void Checkpointer(const std::string& config, int ack) {
  if (cairn_init_single(config.c_str()) != CAIRN_SUCCESS) _exit(2);
  std::vector<uint8_t> state = State(0);
  if (cairn_protect(0, state.data(), state.size(), 1) != CAIRN_SUCCESS) _exit(3);
  for (int v = 0;; ++v) {
    std::vector<uint8_t> next = State(v);
    std::memcpy(state.data(), next.data(), next.size());
    if (cairn_checkpoint("kill", v) != CAIRN_SUCCESS) _exit(4);
    if (write(ack, &v, sizeof v) != sizeof v) _exit(5);
  }
}

TEST(DedupKillTest, RestartAfterSigkillIsBitExactAndNotOlderThanAcknowledged) {
  const uint32_t seed = 20261124;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("cairn-dedup-kill-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/cairn.toml";
  {
    std::ofstream out(config);
    out << "[general]\ndir = \"" << dir << "\"\nlog_level = \"off\"\n"
        << "[tiers.memory]\npath = \"" << dir << "/shm\"\n"
        << "[tiers.ssd]\nenabled = false\n"
        << "[dedup]\nmode = \"collective+incremental\"\nfull_every = 4\n"
        << "[retention]\nkeep = 2\n";
  }
  for (int round = 0; round < 4; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      Checkpointer(config, fds[1]);
    }
    close(fds[1]);
    // Versions restart at 0 in every round's child: each round's copies
    // supersede the last round's (a new run), so the kill point counts
    // from this round's acknowledgements.
    const int kill_after = std::uniform_int_distribution<int>(1, 9)(rng);
    int acked = -1;
    for (int v; acked < kill_after && read(fds[0], &v, sizeof v) == sizeof v;) acked = v;
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    close(fds[0]);
    ASSERT_GE(acked, kill_after) << "round " << round << ": the child stopped early, status "
                                 << status;
    // The restart runs in a child too: the library is initialised once per process.
    pid_t restarter = fork();
    ASSERT_GE(restarter, 0);
    if (restarter == 0) {
      if (cairn_init_single(config.c_str()) != CAIRN_SUCCESS) _exit(10);
      std::vector<uint8_t> state(State(0).size(), 0);
      if (cairn_protect(0, state.data(), state.size(), 1) != CAIRN_SUCCESS) _exit(11);
      const int got = cairn_restart("kill", 1 << 20);
      if (got < acked) _exit(12);
      if (state != State(got)) _exit(13);
      cairn_finalize();
      _exit(0);
    }
    ASSERT_EQ(waitpid(restarter, &status, 0), restarter);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "round " << round << " (killed after version " << acked << "): restart exit "
        << WEXITSTATUS(status) << " (12: older than acknowledged, 13: other bytes)";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
