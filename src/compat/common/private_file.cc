#include "compat/common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cairn_compat {
namespace {

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error("cannot write '" + path + "': " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status();
}

}  // namespace

Result<std::optional<std::string>> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Status::Error("cannot read '" + path + "': " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error("cannot read '" + path + "'");
  return std::optional<std::string>(text.str());
}

Status ReplaceFile(const std::string& path, const std::string& text) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::Error("cannot create '" + dir + "': " + ec.message());
    chmod(dir.c_str(), 0700);
  }
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Error("cannot create '" + tmp + "': " + std::strerror(errno));
  Status st = WriteAll(fd, text, tmp);
  if (st.ok() && fsync(fd) != 0) st = Status::Error("cannot sync '" + tmp + "': " + std::strerror(errno));
  close(fd);
  if (st.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    st = Status::Error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  }
  if (!st.ok()) unlink(tmp.c_str());
  return st;
}

}  // namespace cairn_compat
