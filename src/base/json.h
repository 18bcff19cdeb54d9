// JSON documents (nlohmann/json) and checked reading of them, for every file
// Cairn reads back or a user hands it: I/O profiles, power tables, placement
// history, wear-ledger slots. Writers build a `Json` and call dump().
//
// Reading untrusted JSON has two failure points, and both end here as a
// Status instead of an exception (no exception crosses a module):
//  * ParseJson: malformed text, nesting deeper than kMaxJsonDepth (a
//    document is data, not a stack-exhaustion test) and a repeated member
//    name (which JSON leaves undefined and nlohmann would resolve silently by
//    keeping the last) are kCorrupt naming the document, line and column.
//  * JsonField: typed access to one value of a parsed document. A missing
//    member, a wrong type, a number out of range or an unknown member is an
//    error with the caller's code (kCorrupt for files Cairn wrote, kConfig
//    for files a user wrote) naming the document and the value's JSON
//    Pointer (RFC 6901, "/devices/0/blocks/1/block_size").
//
// `Json` keeps members in insertion (or document) order, so that files and
// --json output read in a meaningful order and stay byte-stable.
// Thread-safety: values and reentrant functions. A JsonField refers to its
// document, which must outlive it.
#ifndef CAIRN_BASE_JSON_H_
#define CAIRN_BASE_JSON_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace cairn {

using Json = nlohmann::ordered_json;

inline constexpr int kMaxJsonDepth = 64;

// Parses one JSON text (RFC 8259, with the restrictions above). `document`
// names it in errors ("I/O profile 'p.json'"). Errors: kCorrupt.
Result<Json> ParseJson(std::string_view text, std::string_view document);

// A JSON Pointer (RFC 6901) token: '~' and '/' escaped.
std::string JsonPointerToken(std::string_view key);

class JsonField {
 public:
  // The root of `doc`; errors say "<document>: <pointer>: ..." with `code`.
  JsonField(const Json& doc, std::string document, Code code)
      : json_(&doc), context_(std::make_shared<Context>(Context{std::move(document), code})) {}

  const Json& json() const { return *json_; }
  // "" for the root (RFC 6901); shown as "/" in messages.
  const std::string& pointer() const { return pointer_; }
  // An error about this value: "<document>: <pointer>: <what>".
  Status Invalid(std::string_view what) const;

  // Objects. REQUIRES for all: nothing; a non-object is a type error.
  // Fails when this is not an object or has a member not in `allowed`.
  Status CheckMembers(std::initializer_list<std::string_view> allowed) const;
  Result<JsonField> Member(std::string_view key) const;  // required member
  std::optional<JsonField> Find(std::string_view key) const;  // absent, or not an object: none
  Result<std::vector<std::pair<std::string, JsonField>>> Members() const;

  // Arrays.
  Result<std::vector<JsonField>> Elements() const;

  // Scalars. Numbers must be finite. Integers may be written as whole
  // floating-point numbers (2e6), which older writers produced.
  Result<double> Number() const;
  Result<int64_t> Integer(int64_t min, int64_t max) const;
  Result<uint64_t> Unsigned(uint64_t max) const;
  Result<std::string> String() const;
  Result<bool> Bool() const;
  // Arrays of numbers, and arrays of those (profile grids).
  Result<std::vector<double>> Numbers() const;
  Result<std::vector<std::vector<double>>> Grid() const;

 private:
  struct Context {
    std::string document;
    Code code;
  };
  JsonField(const Json* json, std::string pointer, std::shared_ptr<const Context> context)
      : json_(json), pointer_(std::move(pointer)), context_(std::move(context)) {}
  JsonField Child(const Json& json, std::string_view token) const;
  Status TypeError(std::string_view expected) const;

  const Json* json_;
  std::string pointer_;
  std::shared_ptr<const Context> context_;
};

}  // namespace cairn

#endif  // CAIRN_BASE_JSON_H_
