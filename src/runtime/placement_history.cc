#include "runtime/placement_history.h"

#include <cmath>
#include <limits>
#include <variant>

#include <fmt/format.h>

#include "model/json.h"

namespace cairn {
namespace {

// JSON numbers are doubles: integers beyond 2^53 would not read back exactly.
constexpr double kMaxExactInteger = 9007199254740992.0;

using Member = std::variant<double PlacementRecord::*, int64_t PlacementRecord::*,
                            uint64_t PlacementRecord::*, std::string PlacementRecord::*,
                            bool PlacementRecord::*>;
struct Field {
  const char* name;
  Member member;
};

// The one list of members: encoding, decoding and their order on the line.
const Field kFields[] = {
    {"run_start", &PlacementRecord::run_start},
    {"time", &PlacementRecord::time},
    {"name", &PlacementRecord::name},
    {"version", &PlacementRecord::version},
    {"number", &PlacementRecord::number},
    {"placement", &PlacementRecord::placement},
    {"rule", &PlacementRecord::rule},
    {"forced", &PlacementRecord::forced},
    {"node_bytes", &PlacementRecord::node_bytes},
    {"ssd_bytes_used", &PlacementRecord::ssd_bytes_used},
    {"ssd_rating_bytes", &PlacementRecord::ssd_rating_bytes},
    {"warranty_seconds", &PlacementRecord::warranty_seconds},
    {"bandwidth", &PlacementRecord::bandwidth},
    {"wear_source", &PlacementRecord::wear_source},
    {"expected_lifetime_seconds", &PlacementRecord::expected_lifetime_seconds},
    {"estimated_lifetime_seconds", &PlacementRecord::estimated_lifetime_seconds},
    {"slowdown", &PlacementRecord::slowdown},
    {"slowdown_bound", &PlacementRecord::slowdown_bound},
    {"checkpoint_seconds", &PlacementRecord::checkpoint_seconds},
};

JsonValue EncodeDouble(double d) {
  if (std::isfinite(d)) return d;
  if (std::isnan(d)) return "nan";
  return d > 0 ? "inf" : "-inf";
}

Status FieldError(const char* field, const std::string& what) {
  return Error(Code::kCorrupt, "placement record: member \"{}\": {}", field, what);
}

Result<double> DecodeDouble(const char* field, const JsonValue& v) {
  if (v.is_number()) return v.AsNumber();
  if (v.is_string()) {
    const std::string& s = v.AsString();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return FieldError(field, fmt::format("expected a number (or \"inf\", \"-inf\", \"nan\"), got {}",
                                       v.is_string() ? "\"" + v.AsString() + "\""
                                                     : std::string(JsonTypeName(v.type()))));
}

Result<double> DecodeInteger(const char* field, const JsonValue& v, double min) {
  if (!v.is_number()) {
    return FieldError(field, fmt::format("expected an integer, got {}", JsonTypeName(v.type())));
  }
  double d = v.AsNumber();
  if (d != std::trunc(d) || d < min || d > kMaxExactInteger) {
    return FieldError(field, fmt::format("expected an integer in [{}, 2^53], got {}", min, d));
  }
  return d;
}

bool EndsTorn(std::string_view line) { return line.empty() || line.back() != '}'; }

}  // namespace

std::string EncodePlacementRecord(const PlacementRecord& r) {
  JsonValue v = JsonValue::Object{};
  for (const Field& f : kFields) {
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(r.*member)>;
          if constexpr (std::is_same_v<T, double>) {
            v.Set(f.name, EncodeDouble(r.*member));
          } else {
            v.Set(f.name, r.*member);
          }
        },
        f.member);
  }
  return WriteJson(v, 0) + "\n";
}

Result<PlacementRecord> DecodePlacementRecord(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  auto doc = ParseJson(line);
  if (!doc.ok()) return doc.status().Annotate("placement record");
  if (!doc->is_object()) {
    return Error(Code::kCorrupt, "placement record: expected an object, got {}",
                 JsonTypeName(doc->type()));
  }
  PlacementRecord r;
  for (const Field& f : kFields) {
    const JsonValue* v = doc->Find(f.name);
    if (v == nullptr) return FieldError(f.name, "missing");
    Status s = std::visit(
        [&](auto member) -> Status {
          using T = std::remove_cvref_t<decltype(r.*member)>;
          if constexpr (std::is_same_v<T, double>) {
            CAIRN_ASSIGN_OR_RETURN(r.*member, DecodeDouble(f.name, *v));
          } else if constexpr (std::is_same_v<T, int64_t>) {
            CAIRN_ASSIGN_OR_RETURN(double d, DecodeInteger(f.name, *v, -kMaxExactInteger));
            r.*member = static_cast<int64_t>(d);
          } else if constexpr (std::is_same_v<T, uint64_t>) {
            CAIRN_ASSIGN_OR_RETURN(double d, DecodeInteger(f.name, *v, 0));
            r.*member = static_cast<uint64_t>(d);
          } else if constexpr (std::is_same_v<T, bool>) {
            if (!v->is_bool()) {
              return FieldError(
                  f.name, fmt::format("expected true or false, got {}", JsonTypeName(v->type())));
            }
            r.*member = v->AsBool();
          } else {
            if (!v->is_string()) {
              return FieldError(f.name,
                                fmt::format("expected a string, got {}", JsonTypeName(v->type())));
            }
            r.*member = v->AsString();
          }
          return Status::Ok();
        },
        f.member);
    CAIRN_RETURN_IF_ERROR(s);
  }
  return r;
}

std::string PlacementHistoryPath(const std::string& ssd_tier_root) {
  return JoinPath(JoinPath(ssd_tier_root, ".status"), "history.jsonl");
}

Status AppendPlacementRecord(Env* env, const std::string& ssd_tier_root,
                             const PlacementRecord& r) {
  const std::string path = PlacementHistoryPath(ssd_tier_root);
  CAIRN_RETURN_IF_ERROR(env->CreateDirs(DirName(path)));
  std::string line = EncodePlacementRecord(r);
  auto size = env->FileSize(path);
  if (size.ok() && *size > 0) {
    // A torn last line must not swallow this record: end it first.
    char last = 0;
    CAIRN_ASSIGN_OR_RETURN(auto file, env->NewReadableFile(path));
    CAIRN_RETURN_IF_ERROR(file->ReadAt(*size - 1, &last, 1));
    if (last != '\n') line.insert(line.begin(), '\n');
  } else if (!size.ok() && size.status().code() != Code::kNotFound) {
    return size.status();
  }
  return env->AppendToFile(path, line.data(), line.size());
}

Result<std::vector<PlacementRecord>> ReadPlacementHistory(Env* env,
                                                          const std::string& ssd_tier_root) {
  const std::string path = PlacementHistoryPath(ssd_tier_root);
  CAIRN_ASSIGN_OR_RETURN(std::string text, env->ReadFileToString(path));
  std::vector<PlacementRecord> out;
  std::string_view rest = text;
  for (int line_no = 1; !rest.empty(); ++line_no) {
    size_t end = rest.find('\n');
    if (end == std::string_view::npos) break;  // torn last line
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    if (EndsTorn(line)) continue;
    auto r = DecodePlacementRecord(line);
    if (!r.ok()) return r.status().Annotate(fmt::format("'{}' line {}", path, line_no));
    out.push_back(std::move(r).value());
  }
  return out;
}

}  // namespace cairn
