#include "env/device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>

namespace cairn {

std::string DeviceNumber::ToString() const {
  return std::to_string(major) + ":" + std::to_string(minor);
}

Result<DeviceNumber> DeviceOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    Status s = ErrnoError(err, "stat", path);
    if (err == ENOENT || err == ENOTDIR) return Status(Code::kNotFound, s.message());
    return s;
  }
  return DeviceNumber{static_cast<uint32_t>(major(st.st_dev)), static_cast<uint32_t>(minor(st.st_dev))};
}

}  // namespace cairn
