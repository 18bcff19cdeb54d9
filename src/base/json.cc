#include "base/json.h"

#include <cmath>
#include <exception>
#include <limits>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

namespace cairn {
namespace {

// Thrown by the parser callback to stop parsing; caught in ParseJson.
class Rejected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Follows the parser through the document to enforce what nlohmann does not:
// a depth bound and unique member names. The callback sees no positions, so
// it keeps the JSON Pointer of the current container for its messages.
class StructureCheck {
 public:
  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, Json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (frames_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
          throw Rejected(fmt::format("{}: nesting deeper than {} levels", Pointer(),
                                     kMaxJsonDepth));
        }
        frames_.push_back(Frame{event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        Frame& object = frames_.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second) {
          throw Rejected(fmt::format("{}: member \"{}\" appears twice", Pointer(), object.key));
        }
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        ChildDone();
        break;
      case Event::value:
        ChildDone();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;  // members seen so far (objects)
    std::string key;             // the member being read (objects)
    size_t index;                // elements completed (arrays)
  };

  void ChildDone() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  // The pointer of the value being read (its container's, at a key event).
  std::string Pointer() const {
    std::string out;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      out += "/" + (f.object ? JsonPointerToken(f.key) : std::to_string(f.index));
    }
    return out.empty() ? "/" : out;
  }

  std::vector<Frame> frames_;
};

// nlohmann's messages start with "[json.exception.parse_error.101] ".
std::string WithoutExceptionId(const char* what) {
  std::string_view text = what;
  if (!text.empty() && text.front() == '[') {
    size_t end = text.find("] ");
    if (end != std::string_view::npos) text.remove_prefix(end + 2);
  }
  return std::string(text);
}

// 2^63 and 2^64 as doubles: the first values outside int64 and uint64.
constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

}  // namespace

Result<Json> ParseJson(std::string_view text, std::string_view document) {
  try {
    StructureCheck check;
    return Json::parse(text.begin(), text.end(), std::ref(check));
  } catch (const Rejected& e) {
    return Error(Code::kCorrupt, "{}: {}", document, e.what());
  } catch (const std::exception& e) {  // parse_error, and bad_alloc on absurd input
    return Error(Code::kCorrupt, "{}: not valid JSON: {}", document, WithoutExceptionId(e.what()));
  }
}

std::string JsonPointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Status JsonField::Invalid(std::string_view what) const {
  return Status(context_->code, fmt::format("{}: {}: {}", context_->document,
                                            pointer_.empty() ? "/" : pointer_, what));
}

Status JsonField::TypeError(std::string_view expected) const {
  return Invalid(fmt::format("expected {}, got {}", expected, json_->type_name()));
}

JsonField JsonField::Child(const Json& json, std::string_view token) const {
  return JsonField(&json, pointer_ + "/" + std::string(token), context_);
}

Status JsonField::CheckMembers(std::initializer_list<std::string_view> allowed) const {
  if (!json_->is_object()) return TypeError("an object");
  for (const auto& [key, value] : json_->items()) {
    bool known = false;
    for (std::string_view name : allowed) known = known || key == name;
    if (!known) return Invalid(fmt::format("unknown member \"{}\"", key));
  }
  return Status::Ok();
}

Result<JsonField> JsonField::Member(std::string_view key) const {
  if (!json_->is_object()) return TypeError("an object");
  auto it = json_->find(key);
  if (it == json_->end()) return Invalid(fmt::format("missing member \"{}\"", key));
  return Child(*it, JsonPointerToken(key));
}

std::optional<JsonField> JsonField::Find(std::string_view key) const {
  if (!json_->is_object()) return std::nullopt;
  auto it = json_->find(key);
  if (it == json_->end()) return std::nullopt;
  return Child(*it, JsonPointerToken(key));
}

Result<std::vector<std::pair<std::string, JsonField>>> JsonField::Members() const {
  if (!json_->is_object()) return TypeError("an object");
  std::vector<std::pair<std::string, JsonField>> out;
  for (const auto& [key, value] : json_->items()) {
    out.emplace_back(key, Child(value, JsonPointerToken(key)));
  }
  return out;
}

Result<std::vector<JsonField>> JsonField::Elements() const {
  if (!json_->is_array()) return TypeError("an array");
  std::vector<JsonField> out;
  out.reserve(json_->size());
  for (size_t i = 0; i < json_->size(); ++i) out.push_back(Child((*json_)[i], std::to_string(i)));
  return out;
}

Result<double> JsonField::Number() const {
  if (!json_->is_number()) return TypeError("a number");
  double d = json_->get<double>();
  // nlohmann reads 1e400 as infinity; no stored figure may be one.
  if (!std::isfinite(d)) return Invalid(fmt::format("{} is out of range", json_->dump()));
  return d;
}

Result<int64_t> JsonField::Integer(int64_t min, int64_t max) const {
  auto out_of_range = [&] {
    return Invalid(fmt::format("expected an integer in [{}, {}], got {}", min, max, json_->dump()));
  };
  if (!json_->is_number()) return TypeError("an integer");
  int64_t v = 0;
  if (json_->is_number_unsigned()) {
    uint64_t u = json_->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return out_of_range();
    v = static_cast<int64_t>(u);
  } else if (json_->is_number_integer()) {
    v = json_->get<int64_t>();
  } else {
    double d = json_->get<double>();
    if (!(d == std::trunc(d) && d >= -kTwoTo63 && d < kTwoTo63)) return out_of_range();
    v = static_cast<int64_t>(d);
  }
  if (v < min || v > max) return out_of_range();
  return v;
}

Result<uint64_t> JsonField::Unsigned(uint64_t max) const {
  auto out_of_range = [&] {
    return Invalid(fmt::format("expected an integer in [0, {}], got {}", max, json_->dump()));
  };
  if (!json_->is_number()) return TypeError("an integer");
  uint64_t v = 0;
  if (json_->is_number_unsigned()) {
    v = json_->get<uint64_t>();
  } else if (json_->is_number_integer()) {
    return out_of_range();  // nlohmann reads only negative integers as signed
  } else {
    double d = json_->get<double>();
    if (!(d == std::trunc(d) && d >= 0 && d < kTwoTo64)) return out_of_range();
    v = static_cast<uint64_t>(d);
  }
  if (v > max) return out_of_range();
  return v;
}

Result<std::string> JsonField::String() const {
  if (!json_->is_string()) return TypeError("a string");
  return json_->get<std::string>();
}

Result<bool> JsonField::Bool() const {
  if (!json_->is_boolean()) return TypeError("true or false");
  return json_->get<bool>();
}

Result<std::vector<double>> JsonField::Numbers() const {
  if (!json_->is_array()) return TypeError("an array of numbers");
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> elements, Elements());
  std::vector<double> out;
  out.reserve(elements.size());
  for (const JsonField& e : elements) {
    CAIRN_ASSIGN_OR_RETURN(double d, e.Number());
    out.push_back(d);
  }
  return out;
}

Result<std::vector<std::vector<double>>> JsonField::Grid() const {
  if (!json_->is_array()) return TypeError("an array of arrays of numbers");
  CAIRN_ASSIGN_OR_RETURN(std::vector<JsonField> rows, Elements());
  std::vector<std::vector<double>> out;
  out.reserve(rows.size());
  for (const JsonField& row : rows) {
    CAIRN_ASSIGN_OR_RETURN(std::vector<double> numbers, row.Numbers());
    out.push_back(std::move(numbers));
  }
  return out;
}

}  // namespace cairn
