// Reading and writing the one-value attribute files of sysfs (and procfs),
// through an Env so that tests run over a fake tree under a chosen root.
// Thread-safety: reentrant functions.
#ifndef CAIRN_ENV_SYSFS_H_
#define CAIRN_ENV_SYSFS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "env/env.h"

namespace cairn {

// s without leading and trailing whitespace (attributes end in '\n').
std::string TrimSysfsValue(std::string_view s);

// A decimal unsigned integer, surrounding whitespace allowed; false for
// anything else (a kernel's "<unsupported>" included).
bool ParseSysfsU64(std::string_view s, uint64_t* out);

// The attribute's value, trimmed. Errors from env (kNotFound, kIo).
Result<std::string> ReadSysfsValue(Env* env, const std::string& path);

// Writes value with one write(2), which is how sysfs takes an attribute.
Status WriteSysfsValue(Env* env, const std::string& path, const std::string& value);

}  // namespace cairn

#endif  // CAIRN_ENV_SYSFS_H_
