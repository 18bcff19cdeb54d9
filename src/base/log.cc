#include "base/log.h"

#include <unistd.h>

#include <atomic>

namespace cairn {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<int> g_rank{-1};
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

LogLevel LogLevelNamed(const std::string& name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return LogLevel::kWarn;
}
void SetLogRank(int rank) { g_rank = rank; }
bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void LogLine(LogLevel level, const std::string& line) {
  static const char* kNames[] = {"debug", "info", "warn", "error"};
  std::string out = g_rank >= 0 ? fmt::format("cairn[{}] {}: {}\n", g_rank.load(),
                                              kNames[static_cast<int>(level)], line)
                                : fmt::format("cairn {}: {}\n", kNames[static_cast<int>(level)], line);
  // One write(2) per line keeps lines from different threads whole.
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());
  (void)ignored;
}

}  // namespace cairn
