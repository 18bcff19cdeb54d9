// Status and Result<T>: how every fallible call inside Cairn reports failure.
// No exception crosses a module boundary; a Status carries a pinned code
// (mirroring the C API's cairn_status) and a message naming the cause.
// Thread-safety: values; safe to copy between threads.
#ifndef CAIRN_BASE_STATUS_H_
#define CAIRN_BASE_STATUS_H_

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace cairn {

// Values equal the C API's CAIRN_E_* codes (checked in api/).
enum class Code : int {
  kOk = 0,
  kInvalidArgument = -1,
  kNotInitialized = -2,
  kAlreadyInitialized = -3,
  kConfig = -4,
  kIo = -5,
  kNoSpace = -6,
  kCorrupt = -7,
  kNotFound = -8,
  kMismatch = -9,
  kComm = -10,
  kInternal = -11,
  kUnsupported = -12,
};

const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "what: message" — adds context on the way up without losing the code.
  Status Annotate(const std::string& what) const {
    return ok() ? *this : Status(code_, what + ": " + message_);
  }
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename... Args>
Status Error(Code code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

// Status for the current errno after `what` failed on `path`.
Status ErrnoError(int err, const std::string& what, const std::string& path);

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(state_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace cairn

// Early return of a failed Status from an expression yielding Status.
#define CAIRN_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::cairn::Status cairn_status_ = (expr); \
    if (!cairn_status_.ok()) return cairn_status_; \
  } while (0)

#define CAIRN_CONCAT_INNER(a, b) a##b
#define CAIRN_CONCAT(a, b) CAIRN_CONCAT_INNER(a, b)

// CAIRN_ASSIGN_OR_RETURN(auto x, ExprReturningResult());
#define CAIRN_ASSIGN_OR_RETURN(lhs, expr) \
  CAIRN_ASSIGN_OR_RETURN_IMPL(CAIRN_CONCAT(cairn_result_, __LINE__), lhs, expr)
#define CAIRN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // CAIRN_BASE_STATUS_H_
