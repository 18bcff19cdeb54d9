// Helpers shared by the libFuzzer targets in this directory: an assertion
// that libFuzzer records as a crash, and a checksum fix-up that lets
// mutations reach the parser behind a reader's CRC32C check.
// Thread-safety: free functions; each fuzzer runs one input at a time.
#ifndef CAIRN_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define CAIRN_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/status.h"
#include "codec/crc32c.h"

namespace cairn::fuzz {

// A broken invariant is a finding like a crash: abort() makes libFuzzer
// write the input as a reproducer.
#define CAIRN_FUZZ_CHECK(cond, ...)                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, "  %s\n", fmt::format(__VA_ARGS__).c_str());        \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

// Writes the CRC32C of bytes[0, covered) at bytes[at, at + 4), as the
// writers do (little-endian). Almost every mutation breaks a checksum, so
// without this the fuzzer would test nothing but the checksum comparison;
// the seed corpus holds real files whose checksums are right already.
// REQUIRES: covered <= bytes->size() and at + 4 <= bytes->size().
inline void RestoreCrc32c(std::string* bytes, size_t covered, size_t at) {
  uint32_t crc = Crc32c(bytes->data(), covered);
  std::memcpy(bytes->data() + at, &crc, 4);
}

// A reader that refuses its input must do so with `code` and a message that
// names the input's origin, so that a user learns which file is bad.
inline void CheckRefusal(const Status& status, Code code, const std::string& origin) {
  CAIRN_FUZZ_CHECK(status.code() == code, "refused with {} instead of {}: {}",
                   CodeName(status.code()), CodeName(code), status.message());
  CAIRN_FUZZ_CHECK(status.message().find(origin) != std::string::npos,
                   "the message does not name '{}': {}", origin, status.message());
}

}  // namespace cairn::fuzz

#endif  // CAIRN_TESTS_FUZZ_FUZZ_SUPPORT_H_
