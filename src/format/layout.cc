#include "format/layout.h"

#include <cctype>
#include <cstdlib>

namespace cairn {

Status ValidateName(const std::string& what, const std::string& name) {
  if (name.empty()) return Error(Code::kInvalidArgument, "{} is empty", what);
  if (name.size() > kMaxNameLength) {
    return Error(Code::kInvalidArgument, "{} is {} characters long (at most {})", what,
                 name.size(), kMaxNameLength);
  }
  if (name[0] == '.') {
    return Error(Code::kInvalidArgument, "{} '{}' must not start with '.'", what, name);
  }
  for (char ch : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
    if (!ok) {
      return Error(Code::kInvalidArgument,
                   "{} '{}' may contain only letters, digits, '.', '_' and '-'", what, name);
    }
  }
  return Status::Ok();
}

std::string RankFilePrefix(int rank) { return fmt::format("r{:06}.", rank); }
std::string PartFileName(int rank) { return RankFilePrefix(rank) + "part"; }
std::string ManifestFileName(int rank) { return RankFilePrefix(rank) + "manifest"; }
std::string RoutedFileName(int rank, const std::string& logical) {
  return RankFilePrefix(rank) + "f." + logical;
}

std::optional<int> ParseManifestFileName(const std::string& name) {
  static const std::string kSuffix = ".manifest";
  if (name.size() != 7 + kSuffix.size() || name[0] != 'r' ||
      name.compare(7, kSuffix.size(), kSuffix) != 0) {
    return std::nullopt;
  }
  for (size_t i = 1; i < 7; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
  }
  return std::atoi(name.c_str() + 1);
}

}  // namespace cairn
