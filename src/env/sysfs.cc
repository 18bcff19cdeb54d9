#include "env/sysfs.h"

#include <cctype>
#include <charconv>

namespace cairn {

std::string TrimSysfsValue(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool ParseSysfsU64(std::string_view s, uint64_t* out) {
  std::string t = TrimSysfsValue(s);
  if (t.empty()) return false;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
  return ec == std::errc() && p == t.data() + t.size();
}

Result<std::string> ReadSysfsValue(Env* env, const std::string& path) {
  CAIRN_ASSIGN_OR_RETURN(std::string s, env->ReadPseudoFile(path));
  return TrimSysfsValue(s);
}

Status WriteSysfsValue(Env* env, const std::string& path, const std::string& value) {
  CAIRN_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(path, WriteOptions{}));
  CAIRN_RETURN_IF_ERROR(file->Append(value.data(), value.size()));
  return file->Close();
}

}  // namespace cairn
