#include "model/json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>

namespace cairn {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<JsonValue> ParseDocument() {
    SkipSpace();
    CAIRN_ASSIGN_OR_RETURN(JsonValue value, ParseValue(1));
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected text after the JSON value");
    return value;
  }

 private:
  Status Fail(std::string_view what) const {
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return Error(Code::kCorrupt, "line {}, column {}: {}", line, pos_ - line_start + 1, what);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  Result<JsonValue> ParseValue(int depth) {
    if (depth > kMaxJsonDepth) return Fail("nesting deeper than the limit of 64");
    switch (Peek()) {
      case '{': return ParseObject(depth);
      case '[': return ParseArray(depth);
      case '"': {
        CAIRN_ASSIGN_OR_RETURN(std::string s, ParseString());
        return JsonValue(std::move(s));
      }
      case 't': CAIRN_RETURN_IF_ERROR(ParseLiteral("true")); return JsonValue(true);
      case 'f': CAIRN_RETURN_IF_ERROR(ParseLiteral("false")); return JsonValue(false);
      case 'n': CAIRN_RETURN_IF_ERROR(ParseLiteral("null")); return JsonValue();
      default: break;
    }
    if (Peek() == '-' || IsDigit(Peek())) return ParseNumber();
    if (AtEnd()) return Fail("unexpected end of text, expected a value");
    return Fail("expected a value");
  }

  Status ParseLiteral(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return Status::Ok();
  }

  Result<JsonValue> ParseObject(int depth) {
    ++pos_;  // '{'
    JsonValue::Object members;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return JsonValue(std::move(members));
    }
    while (true) {
      SkipSpace();
      if (Peek() != '"') return Fail("expected a member name in double quotes");
      size_t key_pos = pos_;
      CAIRN_ASSIGN_OR_RETURN(std::string key, ParseString());
      for (const auto& member : members) {
        if (member.first == key) {
          pos_ = key_pos;
          return Fail(fmt::format("duplicate member \"{}\"", key));
        }
      }
      SkipSpace();
      if (Peek() != ':') return Fail("expected ':' after a member name");
      ++pos_;
      SkipSpace();
      CAIRN_ASSIGN_OR_RETURN(JsonValue value, ParseValue(depth + 1));
      members.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        return JsonValue(std::move(members));
      }
      return Fail("expected ',' or '}' in an object");
    }
  }

  Result<JsonValue> ParseArray(int depth) {
    ++pos_;  // '['
    JsonValue::Array items;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return JsonValue(std::move(items));
    }
    while (true) {
      SkipSpace();
      CAIRN_ASSIGN_OR_RETURN(JsonValue value, ParseValue(depth + 1));
      items.push_back(std::move(value));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        return JsonValue(std::move(items));
      }
      return Fail("expected ',' or ']' in an array");
    }
  }

  Result<uint32_t> ParseHex4() {
    if (text_.size() - pos_ < 4) return Fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      int h = HexValue(text_[pos_ + i]);
      if (h < 0) return Fail("invalid hex digit in \\u escape");
      v = v * 16 + static_cast<uint32_t>(h);
    }
    pos_ += 4;
    return v;
  }

  // One UTF-8 encoded character starting at pos_ (lead byte >= 0x80), with
  // the RFC 3629 limits: no overlong forms, no surrogates, <= U+10FFFF.
  Status CopyUtf8(std::string* out) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(text_[pos_ + i]); };
    unsigned char lead = byte(0);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      n = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      n = 3;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      n = 4;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      return Fail("invalid UTF-8 in a string");
    }
    if (text_.size() - pos_ < n) return Fail("truncated UTF-8 in a string");
    if (byte(1) < lo || byte(1) > hi) return Fail("invalid UTF-8 in a string");
    for (size_t i = 2; i < n; ++i) {
      if (byte(i) < 0x80 || byte(i) > 0xBF) return Fail("invalid UTF-8 in a string");
    }
    out->append(text_.substr(pos_, n));
    pos_ += n;
    return Status::Ok();
  }

  Result<std::string> ParseString() {
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (AtEnd()) return Fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) return Fail("control character in a string (escape it)");
      if (c >= 0x80) {
        CAIRN_RETURN_IF_ERROR(CopyUtf8(&out));
        continue;
      }
      ++pos_;
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        continue;
      }
      if (AtEnd()) return Fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          CAIRN_ASSIGN_OR_RETURN(uint32_t cp, ParseHex4());
          if (cp >= 0xDC00 && cp <= 0xDFFF) return Fail("unpaired low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") return Fail("unpaired high surrogate");
            pos_ += 2;
            CAIRN_ASSIGN_OR_RETURN(uint32_t low, ParseHex4());
            if (low < 0xDC00 || low > 0xDFFF) return Fail("unpaired high surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, &out);
          break;
        }
        default:
          --pos_;
          return Fail("invalid escape in a string");
      }
    }
  }

  Result<JsonValue> ParseNumber() {
    const size_t start = pos_;
    // Decimal magnitude of the number (position of its first significant
    // digit relative to the point, plus the exponent): tells an underflow,
    // which reads as zero, from an overflow, which is an error.
    int64_t magnitude = 0;
    bool significant = false;
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (IsDigit(Peek())) {
      while (IsDigit(Peek())) {
        if (Peek() != '0' || significant) {
          significant = true;
          ++magnitude;
        }
        ++pos_;
      }
    } else {
      return Fail("invalid number");
    }
    if (Peek() == '.') {
      ++pos_;
      if (!IsDigit(Peek())) return Fail("invalid number: digits must follow '.'");
      while (IsDigit(Peek())) {
        if (!significant) {
          if (Peek() == '0') {
            --magnitude;
          } else {
            significant = true;
          }
        }
        ++pos_;
      }
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      bool negative = false;
      if (Peek() == '+' || Peek() == '-') negative = text_[pos_++] == '-';
      if (!IsDigit(Peek())) return Fail("invalid number: digits must follow the exponent");
      int64_t exponent = 0;
      while (IsDigit(Peek())) {
        if (exponent < 1000000) exponent = exponent * 10 + (Peek() - '0');
        ++pos_;
      }
      magnitude += negative ? -exponent : exponent;
    }
    double value = 0;
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      if (magnitude > 0) {
        pos_ = start;
        return Fail("number out of the range of a double");
      }
      value = text_[start] == '-' ? -0.0 : 0.0;  // underflow: as close as a double gets
    } else if (ec != std::errc() || ptr != last) {
      pos_ = start;
      return Fail("invalid number");
    }
    return JsonValue(value);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void WriteString(const std::string& s, std::string* out) {
  out->push_back('"');
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append(fmt::format("\\u{:04x}", c));
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

void WriteNumber(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[64];
  // Whole numbers in plain notation (800000, not 8e+05): profiles hold
  // frequencies in kHz and byte counts that people read.
  bool whole = v == std::trunc(v) && std::fabs(v) < 1e17;
  auto result = whole ? std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed)
                      : std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, result.ptr);
}

bool IsScalarArray(const JsonValue::Array& a) {
  for (const JsonValue& v : a) {
    if (v.is_array() || v.is_object() || v.is_string()) return false;
  }
  return true;
}

void WriteValue(const JsonValue& v, int indent, int level, std::string* out) {
  auto newline = [&](int lvl) {
    if (indent <= 0) return;
    out->push_back('\n');
    out->append(static_cast<size_t>(indent) * lvl, ' ');
  };
  switch (v.type()) {
    case JsonValue::Type::kNull: out->append("null"); return;
    case JsonValue::Type::kBool: out->append(v.AsBool() ? "true" : "false"); return;
    case JsonValue::Type::kNumber: WriteNumber(v.AsNumber(), out); return;
    case JsonValue::Type::kString: WriteString(v.AsString(), out); return;
    case JsonValue::Type::kArray: {
      const auto& a = v.AsArray();
      if (a.empty()) {
        out->append("[]");
        return;
      }
      bool one_line = indent <= 0 || IsScalarArray(a);
      out->push_back('[');
      for (size_t i = 0; i < a.size(); ++i) {
        if (i > 0) out->append(one_line && indent > 0 ? ", " : ",");
        if (!one_line) newline(level + 1);
        WriteValue(a[i], indent, level + 1, out);
      }
      if (!one_line) newline(level);
      out->push_back(']');
      return;
    }
    case JsonValue::Type::kObject: {
      const auto& o = v.AsObject();
      if (o.empty()) {
        out->append("{}");
        return;
      }
      out->push_back('{');
      for (size_t i = 0; i < o.size(); ++i) {
        if (i > 0) out->push_back(',');
        newline(level + 1);
        WriteString(o[i].first, out);
        out->append(indent > 0 ? ": " : ":");
        WriteValue(o[i].second, indent, level + 1, out);
      }
      newline(level);
      out->push_back('}');
      return;
    }
  }
}

}  // namespace

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& member : AsObject()) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

void JsonValue::Set(std::string key, JsonValue value) {
  for (auto& member : AsObject()) {
    if (member.first == key) {
      member.second = std::move(value);
      return;
    }
  }
  AsObject().emplace_back(std::move(key), std::move(value));
}

const char* JsonTypeName(JsonValue::Type type) {
  switch (type) {
    case JsonValue::Type::kNull: return "null";
    case JsonValue::Type::kBool: return "boolean";
    case JsonValue::Type::kNumber: return "number";
    case JsonValue::Type::kString: return "string";
    case JsonValue::Type::kArray: return "array";
    case JsonValue::Type::kObject: return "object";
  }
  return "unknown";
}

Result<JsonValue> ParseJson(std::string_view text) { return Parser(text).ParseDocument(); }

std::string WriteJson(const JsonValue& value, int indent) {
  std::string out;
  WriteValue(value, indent, 0, &out);
  return out;
}

}  // namespace cairn
