// Helpers shared by the single-process integration tests (crash, corruption,
// commit protocol): a temporary directory, a three-tier configuration in it,
// and reproducible per-version data.
#ifndef CAIRN_TESTS_TEST_SUPPORT_H_
#define CAIRN_TESTS_TEST_SUPPORT_H_

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/config.h"

namespace cairn_test {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cairn-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Memory, ssd and pfs tiers under dir; checkpoints go to memory.
inline cairn::Config ThreeTierConfig(const std::string& dir) {
  cairn::Config c;
  c.dir = dir;
  c.log_level = "off";
  c.tier(cairn::TierKind::kMemory).path = dir + "/shm/{node}";
  // The tests damage and restart from memory copies after a finalize, as
  // a job restarted on surviving nodes would find them after a crash.
  c.tier(cairn::TierKind::kMemory).keep_at_finalize = true;
  c.tier(cairn::TierKind::kSsd).path = "{dir}/ssd/{node}";
  c.tier(cairn::TierKind::kPfs).path = "{dir}/pfs";
  return c;
}

// The content of the state at version v: differs in every word per version.
inline void FillVersion(std::vector<uint64_t>& data, int64_t v) {
  uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(v + 1);
  for (auto& w : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w = x;
  }
}

inline bool HoldsVersion(const std::vector<uint64_t>& data, int64_t v) {
  std::vector<uint64_t> expected(data.size());
  FillVersion(expected, v);
  return expected == data;
}

}  // namespace cairn_test

#endif  // CAIRN_TESTS_TEST_SUPPORT_H_
