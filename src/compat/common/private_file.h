// private_file.h — the few files the peer layers keep beside Cairn's tiers
// (layout journals, SCR's index): read whole, and replaced atomically.
#ifndef CAIRN_COMPAT_COMMON_PRIVATE_FILE_H_
#define CAIRN_COMPAT_COMMON_PRIVATE_FILE_H_

#include <optional>
#include <string>

#include "compat/common/outcome.h"

namespace cairn_compat {

// The contents of `path`, or nullopt when it does not exist.
Result<std::optional<std::string>> ReadWholeFile(const std::string& path);

// Replaces `path` with `text`: its directory created (0700), a temporary
// file (0600) written and fsynced, then renamed over `path`, so that a
// reader sees the old or the new contents, never a part.
Status ReplaceFile(const std::string& path, const std::string& text);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_COMMON_PRIVATE_FILE_H_
