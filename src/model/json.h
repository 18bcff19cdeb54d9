// A small JSON (RFC 8259) value, reader and writer, for I/O profiles and the
// `--json` output of `cairn model`.
//
// Why our own: Debian 12 ships nlohmann-json3-dev and libjsoncpp-dev, but
// neither is a build dependency of Cairn (DESIGN.md "Dependencies") and the
// reference machine has only runtime libraries (libjsoncpp25, libjson-c5,
// libjansson4) without headers; Boost 1.74 predates Boost.JSON and its
// property_tree reader turns every number into a string. A profile is a few
// kilobytes, so a plain recursive-descent parser is enough. If a JSON library
// becomes a dependency, replace this file; its interface is what callers use.
//
// What the reader accepts: exactly RFC 8259 JSON text (one value, optional
// surrounding whitespace), with three deliberate restrictions that make
// untrusted input safe and unambiguous: nesting deeper than kMaxJsonDepth is
// rejected (no stack exhaustion), an object may not repeat a key, and
// numbers must fit a double (1e400 is an error, not infinity). Strings must
// be valid UTF-8; \u escapes, including surrogate pairs, become UTF-8.
// Numbers are doubles, so integers are exact up to 2^53.
// Thread-safety: JsonValue is a value type; the functions are reentrant.
#ifndef CAIRN_MODEL_JSON_H_
#define CAIRN_MODEL_JSON_H_

#include <cassert>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"

namespace cairn {

inline constexpr int kMaxJsonDepth = 64;

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<JsonValue>;
  // Members in document (or insertion) order; keys are unique.
  using Object = std::vector<std::pair<std::string, JsonValue>>;

  JsonValue() = default;  // null
  JsonValue(std::nullptr_t) {}  // NOLINT: implicit by design, like the ones below
  JsonValue(bool b) : value_(b) {}  // NOLINT
  template <typename T,
            typename = std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>>>
  JsonValue(T number) : value_(static_cast<double>(number)) {}  // NOLINT
  JsonValue(std::string s) : value_(std::move(s)) {}            // NOLINT
  JsonValue(const char* s) : value_(std::string(s)) {}          // NOLINT
  JsonValue(Array a) : value_(std::move(a)) {}                  // NOLINT
  JsonValue(Object o) : value_(std::move(o)) {}                 // NOLINT

  Type type() const { return static_cast<Type>(value_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // REQUIRES: the value has that type (asserted; a reader of untrusted
  // documents tests the type first).
  bool AsBool() const { return Get<bool>(); }
  double AsNumber() const { return Get<double>(); }
  const std::string& AsString() const { return Get<std::string>(); }
  const Array& AsArray() const { return Get<Array>(); }
  Array& AsArray() { return Get<Array>(); }
  const Object& AsObject() const { return Get<Object>(); }
  Object& AsObject() { return Get<Object>(); }

  // The member named key, or nullptr when absent or this is not an object.
  const JsonValue* Find(std::string_view key) const;
  // Sets member key, replacing an existing one. REQUIRES: is_object().
  void Set(std::string key, JsonValue value);

  // Structural equality; numbers compare as doubles, members in order.
  friend bool operator==(const JsonValue& a, const JsonValue& b) { return a.value_ == b.value_; }

 private:
  // std::get would throw on a type mismatch; Cairn lets no exception out.
  template <typename T>
  const T& Get() const {
    assert(std::holds_alternative<T>(value_));
    return *std::get_if<T>(&value_);
  }
  template <typename T>
  T& Get() {
    assert(std::holds_alternative<T>(value_));
    return *std::get_if<T>(&value_);
  }

  // The order of the alternatives is the order of Type.
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> value_;
};

const char* JsonTypeName(JsonValue::Type type);

// Parses one JSON text. Errors are kCorrupt with "line L, column C: what".
Result<JsonValue> ParseJson(std::string_view text);

// Serializes value. indent > 0 pretty-prints with that many spaces per level
// (arrays of numbers stay on one line, which keeps profile grids readable);
// indent == 0 writes compactly. Numbers use the shortest text that reads back
// to the same double; NaN and infinities, which JSON cannot express, are
// written as null.
std::string WriteJson(const JsonValue& value, int indent = 2);

}  // namespace cairn

#endif  // CAIRN_MODEL_JSON_H_
