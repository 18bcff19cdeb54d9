#include "format/layout.h"

#include <cctype>

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

std::optional<int> ParseRankFilePrefix(const std::string& name) {
  // "r" + 6 digits + "." (RankFilePrefix); 6 digits always fit an int.
  constexpr size_t kDigits = 6;
  if (name.size() < kDigits + 2 || name[0] != 'r' || name[kDigits + 1] != '.') {
    return std::nullopt;
  }
  int rank = 0;
  for (size_t i = 1; i <= kDigits; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    rank = rank * 10 + (name[i] - '0');
  }
  return rank;
}

std::optional<int> ParseManifestFileName(const std::string& name) {
  auto rank = ParseRankFilePrefix(name);
  if (!rank || name != ManifestFileName(*rank)) return std::nullopt;
  return rank;
}

}  // namespace cairn
