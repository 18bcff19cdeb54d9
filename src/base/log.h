// Minimal leveled logging to stderr, prefixed with "cairn[rank]".
// The level comes from [general] log_level. Thread-safe (one write per line).
#ifndef CAIRN_BASE_LOG_H_
#define CAIRN_BASE_LOG_H_

#include <string>

#include <fmt/format.h>

namespace cairn {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void SetLogLevel(LogLevel level);
// The level a [general] log_level value names ("debug", "info", "warn",
// "error", "off"; config validation has refused anything else, which
// reads as warn).
LogLevel LogLevelNamed(const std::string& name);
void SetLogRank(int rank);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, const std::string& line);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (LogEnabled(level)) LogLine(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cairn

#endif  // CAIRN_BASE_LOG_H_
