// bench/dirty_tracking: what each dirty-page tracking method of transparent
// mode (transparent/dirty_tracker.h) costs, on one buffer in one run:
//   first_write_ns       one write to each page right after arming, per page
//                        (the fault the method takes on a page's first write)
//   collect_ns_per_page  collecting the written pages and re-arming, per page
//   memset_ns_per_page   a plain memset of the same (already faulted) buffer,
//                        the baseline: the work a first write replaces at best
// Each figure is the median of --reps repetitions (best in *_best). Methods
// the kernel lacks are reported with "available": false.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.h"
#include "transparent/dirty_tracker.h"

namespace {

using cairn::DirtyMethod;
using Clock = std::chrono::steady_clock;

constexpr size_t kPage = 4096;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Spread {
  double median = 0;
  double best = 0;
};
Spread Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front()};
}

// Writes one byte in every page: each is that page's first write since arming.
void TouchEveryPage(volatile char* buffer, size_t pages, char value) {
  for (size_t p = 0; p < pages; ++p) buffer[p * kPage] = value;
}

cairn_bench::Json Measure(DirtyMethod method, char* buffer, size_t pages, int reps,
                          const Spread& memset_ns) {
  cairn_bench::Json out;
  out["method"] = cairn::DirtyMethodName(method);
  out["pages"] = pages;
  out["available"] = cairn::DirtyTracker::Available(method);
  out["memset_ns_per_page"] = memset_ns.median;
  if (!out["available"].get<bool>()) return out;
  auto tracker = cairn::DirtyTracker::Create(method, buffer, pages * kPage);
  if (!tracker.ok()) {
    out["available"] = false;
    out["error"] = tracker.status().ToString();
    return out;
  }
  std::vector<double> write_ns, collect_ns;
  cairn::DirtyPageSet set;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    TouchEveryPage(buffer, pages, static_cast<char>(r + 1));
    auto t1 = Clock::now();
    cairn::Status s = (*tracker)->Collect(&set);
    auto t2 = Clock::now();
    if (!s.ok() || set.pages() != pages) {
      out["error"] = s.ok() ? "collected " + std::to_string(set.pages()) + " pages" : s.ToString();
      return out;
    }
    write_ns.push_back(Seconds(t0, t1) * 1e9 / pages);
    collect_ns.push_back(Seconds(t1, t2) * 1e9 / pages);
  }
  Spread w = Summarize(write_ns), c = Summarize(collect_ns);
  out["first_write_ns"] = w.median;
  out["first_write_ns_best"] = w.best;
  out["collect_ns_per_page"] = c.median;
  out["collect_ns_per_page_best"] = c.best;
  out["memset_ns_per_page_best"] = memset_ns.best;
  out["first_write_vs_memset"] = w.median / memset_ns.median;
  out["reps"] = reps;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cost of each dirty-page tracking method beside a plain memset"};
  size_t mib = 256;
  int reps = 5;
  bool json = false;
  std::vector<std::string> methods{"uffd-wp", "soft-dirty", "mprotect", "none"};
  app.add_option("--mib", mib, "buffer size in MiB")->check(CLI::Range(1, 1 << 16));
  app.add_option("--reps", reps, "repetitions (median and best reported)")->check(CLI::Range(1, 1000));
  app.add_option("--methods", methods, "methods to measure");
  app.add_flag("--json", json, "one JSON object per method on stdout");
  if (auto rc = cairn_bench::ParseCommandLine(app, argc, argv)) return *rc;

  size_t pages = mib * (size_t{1} << 20) / kPage;
  // A fresh mapping per method: a tracker leaves its marks on the pages.
  for (const std::string& name : methods) {
    auto method = cairn::ParseDirtyMethod(name);
    if (!method.ok()) {
      std::fprintf(stderr, "%s\n", method.status().ToString().c_str());
      return 2;
    }
    auto* buffer = static_cast<char*>(mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE,
                                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (buffer == MAP_FAILED) {
      std::perror("mmap");
      return 1;
    }
    std::memset(buffer, 1, pages * kPage);  // faulted in: the baseline pays no page allocation
    std::vector<double> memset_ns;
    for (int r = 0; r < reps; ++r) {
      auto t0 = Clock::now();
      std::memset(buffer, r, pages * kPage);
      memset_ns.push_back(Seconds(t0, Clock::now()) * 1e9 / pages);
    }
    cairn_bench::Json row = Measure(*method, buffer, pages, reps, Summarize(memset_ns));
    munmap(buffer, pages * kPage);
    if (json) {
      cairn_bench::PrintJsonLine(row);
    } else {
      std::printf("%-11s %8zu pages  first write %8.1f ns  collect %6.1f ns/page  memset %5.1f "
                  "ns/page%s\n",
                  name.c_str(), pages, row.value("first_write_ns", 0.0),
                  row.value("collect_ns_per_page", 0.0), row.value("memset_ns_per_page", 0.0),
                  row["available"].get<bool>() ? "" : "  (not offered by this kernel)");
    }
  }
  return 0;
}
