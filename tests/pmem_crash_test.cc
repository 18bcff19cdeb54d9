// Crash campaign for in-place versioned arrays (docs/pmem.md, issue 16 item
// 5): a child process persists an array every iteration; the parent kills
// it with SIGKILL at a random moment, reopens the array and checks that it
// holds exactly the last committed iteration, bit for bit. The child
// reports each iteration after its Commit returned, so the reopened
// iteration is the last reported one or the one after it (killed between
// the commit and the report), never older and never torn.
//
// Usage: pmem_crash_test [kills]   (default 240, seed printed)
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "env/env.h"
#include "pmem/async_flusher.h"
#include "pmem/in_place_array.h"

namespace cairn::pmem {
namespace {

constexpr uint64_t kCount = 4096;  // 32 KiB of uint64_t per version
constexpr uint32_t kSeed = 16161616;

// How a variant updates and persists: in place (sync or async flushing),
// copy-based for a non-uniform update, or chosen by profiling.
struct Variant {
  const char* name;
  UpdatePattern pattern;
  bool async;
  bool interior_only;  // non-uniform: elements 0 and N-1 are never written
};
constexpr Variant kVariants[] = {
    {"in-place", UpdatePattern::kUniform, false, false},
    {"in-place+async", UpdatePattern::kUniform, true, false},
    {"copy (non-uniform)", UpdatePattern::kNonUniform, false, true},
    {"copy+async (non-uniform)", UpdatePattern::kNonUniform, true, true},
    {"auto (non-uniform)", UpdatePattern::kAuto, false, true},
    {"auto (uniform)", UpdatePattern::kAuto, false, false},
};

// v(it, i) with v(0, i) = i and v(it, i) = v(it - 1, i) + it * 1000003 + i:
// a closed form, so any element from another iteration shows.
uint64_t Value(int64_t it, uint64_t i) {
  uint64_t n = static_cast<uint64_t>(it);
  return i * (n + 1) + 1000003ull * n * (n + 1) / 2;
}
bool Updated(const Variant& v, uint64_t i) { return !v.interior_only || (i > 0 && i + 1 < kCount); }

// The child: opens (or creates) the array and persists iterations forever,
// writing each committed iteration to `report`. Never returns.
[[noreturn]] void RunChild(const std::string& path, const Variant& v, int report) {
  std::unique_ptr<AsyncFlusher> flusher;
  if (v.async) flusher = std::move(AsyncFlusher::Start(PosixEnv(), {})).value();
  auto opened = InPlaceArray::Open(path, kCount, sizeof(uint64_t), {v.pattern, flusher.get()});
  if (!opened.ok()) {
    std::fprintf(stderr, "child: %s\n", opened.status().ToString().c_str());
    _exit(2);
  }
  InPlaceArray& a = **opened;
  if (a.iteration() == kNoIteration) {
    auto* w = static_cast<uint64_t*>(a.Working());
    for (uint64_t i = 0; i < kCount; ++i) w[i] = Value(0, i);
    if (!a.Commit().ok()) _exit(3);
  }
  for (;;) {
    int64_t it = a.iteration() + 1;
    const auto* old = static_cast<const uint64_t*>(a.Read());
    auto* w = static_cast<uint64_t*>(a.Working());
    // In blocks, each reported done as it finishes (proactive flushing
    // with async; the last block is left for the commit to flush).
    constexpr uint64_t kBlock = kCount / 4;
    for (uint64_t b = 0; b < kCount; b += kBlock) {
      for (uint64_t i = b; i < b + kBlock; ++i) {
        if (Updated(v, i)) w[i] = old[i] + static_cast<uint64_t>(it) * 1000003ull + i;
      }
      if (b + kBlock < kCount && !a.DoneWriting(b, kBlock).ok()) _exit(6);
    }
    a.MarkUpdated();
    if (!a.Commit().ok()) _exit(4);
    if (::write(report, &it, sizeof(it)) != sizeof(it)) _exit(5);
  }
}

// Reads reports until the child has committed at least once in this run
// (so that it is in its loop); the last one seen, or -1 at EOF.
int64_t WaitForFirstReport(int fd) {
  int64_t it = -1;
  return ::read(fd, &it, sizeof(it)) == sizeof(it) ? it : -1;
}

// Everything still in the pipe after the kill; the last whole report.
int64_t DrainReports(int fd, int64_t last) {
  int64_t it;
  while (::read(fd, &it, sizeof(it)) == sizeof(it)) last = it;
  return last;
}

struct Campaign {
  int kills = 0;
  int after_report = 0;   // reopened at the last reported iteration
  int before_report = 0;  // committed, killed before reporting it
};

// One kill of one variant; false (with a message) on any mismatch.
bool KillOnce(const std::string& path, const Variant& v, std::mt19937_64& rng, Campaign* c) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(path, v, fds[1]);
  }
  ::close(fds[1]);
  int64_t reported = WaitForFirstReport(fds[0]);
  // The random kill point: the child runs on for 0..3 ms (tens to
  // hundreds of commits), then dies wherever it is.
  std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  reported = DrainReports(fds[0], reported);
  ::close(fds[0]);
  if (!WIFSIGNALED(status)) {
    std::fprintf(stderr, "%s: child exited with %d before the kill\n", v.name, WEXITSTATUS(status));
    return false;
  }
  auto reopened = InPlaceArray::Open(path, kCount, sizeof(uint64_t), {v.pattern, nullptr});
  if (!reopened.ok()) {
    std::fprintf(stderr, "%s: reopen: %s\n", v.name, reopened.status().ToString().c_str());
    return false;
  }
  int64_t it = (*reopened)->iteration();
  if (it != reported && it != reported + 1) {
    std::fprintf(stderr, "%s: reopened at iteration %lld, last reported %lld\n", v.name,
                 static_cast<long long>(it), static_cast<long long>(reported));
    return false;
  }
  (it == reported ? c->after_report : c->before_report)++;
  const auto* data = static_cast<const uint64_t*>((*reopened)->Consistent());
  for (uint64_t i = 0; i < kCount; ++i) {
    uint64_t want = Updated(v, i) ? Value(it, i) : Value(0, i);
    if (data[i] != want) {
      std::fprintf(stderr, "%s: iteration %lld element %llu is %llu, want %llu\n", v.name,
                   static_cast<long long>(it), static_cast<unsigned long long>(i),
                   static_cast<unsigned long long>(data[i]), static_cast<unsigned long long>(want));
      return false;
    }
  }
  ++c->kills;
  return true;
}

}  // namespace
}  // namespace cairn::pmem

int main(int argc, char** argv) {
  using namespace cairn::pmem;
  const int kills = argc > 1 ? std::atoi(argv[1]) : 240;
  std::printf("pmem crash campaign: %d kills, seed %u\n", kills, kSeed);
  std::mt19937_64 rng(kSeed);
  char tmpl[] = "/dev/shm/cairn-pmem-crash-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  bool ok = true;
  for (const Variant& v : kVariants) {
    const std::string path = dir + "/array.ipv";
    std::filesystem::remove(path);
    Campaign c;
    const int per_variant = (kills + std::size(kVariants) - 1) / std::size(kVariants);
    for (int k = 0; k < per_variant && ok; ++k) ok = KillOnce(path, v, rng, &c);
    std::printf("%-20s %3d kills: %d reopened at the last reported iteration, %d at the one "
                "committed but not yet reported\n",
                v.name, c.kills, c.after_report, c.before_report);
    if (!ok) {
      std::printf("FAILED (seed %u)\n", kSeed);
      break;
    }
  }
  std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
