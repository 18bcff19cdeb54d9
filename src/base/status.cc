#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace cairn {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "success";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kNotInitialized: return "not initialized";
    case Code::kAlreadyInitialized: return "already initialized";
    case Code::kConfig: return "configuration error";
    case Code::kIo: return "I/O error";
    case Code::kNoSpace: return "no space left on tier";
    case Code::kCorrupt: return "stored data is corrupt";
    case Code::kNotFound: return "not found";
    case Code::kMismatch: return "regions do not match the checkpoint";
    case Code::kComm: return "communication error";
    case Code::kInternal: return "internal error";
    case Code::kUnsupported: return "unsupported";
  }
  return "unknown error";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return message_.empty() ? CodeName(code_) : message_;
}

Status ErrnoError(int err, const std::string& what, const std::string& path) {
  Code code = (err == ENOSPC || err == EDQUOT) ? Code::kNoSpace : Code::kIo;
  return Status(code, fmt::format("{} '{}': {}", what, path, std::strerror(err)));
}

}  // namespace cairn
