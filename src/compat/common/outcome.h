// outcome.h — the error type of the compatibility layers (src/compat).
// compat/ sits above the public API and may not use Cairn's internal
// Status/Result (base/), so it carries its own: a message naming the cause
// (file, line, key), or success. Cairn's own errors arrive through
// cairn_error_message and are wrapped with CairnError.
#ifndef CAIRN_COMPAT_COMMON_OUTCOME_H_
#define CAIRN_COMPAT_COMMON_OUTCOME_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cairn_compat {

// Success, or an error with its message.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Error(std::string message) { return Status(std::move(message)); }
  bool ok() const { return !message_.has_value(); }
  const std::string& message() const { return *message_; }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

// A value, or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as for a return
  Result(Status error) : value_(std::move(error)) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const { return std::get<Status>(value_); }
  T& operator*() { return std::get<T>(value_); }
  const T& operator*() const { return std::get<T>(value_); }
  T* operator->() { return &std::get<T>(value_); }

 private:
  std::variant<T, Status> value_;
};

// The Status of the Cairn call that just returned `code` (< 0: its message),
// described by `call` (the C function's name first, then any context:
// "cairn_restart of checkpoint 4"), which names the function once.
Status CairnError(int code, const std::string& call);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_COMMON_OUTCOME_H_
