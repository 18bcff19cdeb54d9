#include "storage/tier_path.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "codec/crc32c.h"

namespace cairn {
namespace {

// getpwuid_r's buffer stops growing here: no password entry is this long.
constexpr size_t kMaxPasswdBuffer = 1 << 20;

// The user's name from the password database, or the numeric uid when it
// has none. getpwuid_r, since getpwuid's static result is shared with every
// other thread of the application.
std::string UserName() {
  uid_t uid = ::getuid();
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);  // -1: no hint
  std::vector<char> buffer(hint > 0 ? static_cast<size_t>(hint) : 1024);
  for (;;) {
    struct passwd entry;
    struct passwd* found = nullptr;
    int err = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
    if (err == ERANGE && buffer.size() < kMaxPasswdBuffer) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (err == 0 && found != nullptr) return found->pw_name;
    return std::to_string(uid);
  }
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
}

std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Result<std::string> Expand(Env* env, std::string pattern, const std::string& dir) {
  ReplaceAll(pattern, "{dir}", dir);
  ReplaceAll(pattern, "{user}", UserName());
  if (pattern.find("{dirkey}") != std::string::npos) {
    auto absolute_dir = env->AbsolutePath(dir);
    if (!absolute_dir.ok()) return absolute_dir.status().Annotate("the data directory");
    const std::string& absolute = *absolute_dir;
    ReplaceAll(pattern, "{dirkey}",
               fmt::format("{:08x}", Crc32c(absolute.data(), absolute.size())));
  }
  return pattern;
}

// Whether inner is outer or lies inside it (both resolved).
bool IsWithin(const std::string& inner, const std::string& outer) {
  if (inner.compare(0, outer.size(), outer) != 0) return false;
  return inner.size() == outer.size() || outer == "/" || inner[outer.size()] == '/';
}

// "'/a/b'", or "'x/../b' (that is '/a/b')" when resolving changed it.
std::string ShowPath(const std::string& expanded, const std::string& resolved) {
  if (expanded == resolved) return "'" + expanded + "'";
  return fmt::format("'{}' (that is '{}')", expanded, resolved);
}

}  // namespace

Result<std::string> ExpandTierPath(Env* env, const std::string& pattern, const std::string& dir,
                                   const std::string& node) {
  CAIRN_ASSIGN_OR_RETURN(std::string out, Expand(env, pattern, dir));
  ReplaceAll(out, "{node}", node);
  return out;
}

Result<std::string> TierPathNodeParent(Env* env, const std::string& pattern,
                                       const std::string& dir) {
  size_t pos = pattern.find("{node}");
  if (pos == std::string::npos) return std::string();
  CAIRN_ASSIGN_OR_RETURN(std::string parent, Expand(env, pattern.substr(0, pos), dir));
  return WithoutTrailingSlash(parent);
}

Result<std::array<std::string, kTierKinds>> ExpandTierRoots(Env* env, const Config& config,
                                                            const std::string& node) {
  std::array<std::string, kTierKinds> roots;
  std::array<std::string, kTierKinds> resolved;
  for (int k = 0; k < kTierKinds; ++k) {
    if (!config.tiers[k].enabled) continue;
    CAIRN_ASSIGN_OR_RETURN(roots[k], ExpandTierPath(env, config.tiers[k].path, config.dir, node));
    CAIRN_ASSIGN_OR_RETURN(resolved[k], env->CanonicalPath(roots[k]));
    for (int j = 0; j < k; ++j) {
      if (resolved[j].empty()) continue;
      if (IsWithin(resolved[k], resolved[j]) || IsWithin(resolved[j], resolved[k])) {
        return Error(Code::kConfig,
                     "config keys 'tiers.{}.path' and 'tiers.{}.path' overlap on node {}: {} and "
                     "{}; each tier needs a directory of its own, outside the others (a drain or "
                     "retention on one would delete the other's copies)",
                     TierKindName(static_cast<TierKind>(j)), TierKindName(static_cast<TierKind>(k)),
                     node, ShowPath(roots[j], resolved[j]), ShowPath(roots[k], resolved[k]));
      }
    }
  }
  return roots;
}

}  // namespace cairn
