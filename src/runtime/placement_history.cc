#include "runtime/placement_history.h"

#include <cmath>
#include <limits>
#include <variant>

#include <fmt/format.h>

#include "base/json.h"

namespace cairn {
namespace {

using Member = std::variant<double PlacementRecord::*, int64_t PlacementRecord::*,
                            uint64_t PlacementRecord::*, std::string PlacementRecord::*,
                            bool PlacementRecord::*>;
struct Field {
  const char* name;
  Member member;
  bool optional = false;  // absent: the member keeps PlacementRecord's default
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
    {"policy", &PlacementRecord::policy, true},
    {"lifetime_checked", &PlacementRecord::lifetime_checked, true},
    {"slowdown_checked", &PlacementRecord::slowdown_checked, true},
};

Json EncodeDouble(double d) {
  if (std::isfinite(d)) return d;
  if (std::isnan(d)) return "nan";
  return d > 0 ? "inf" : "-inf";
}

Result<double> DecodeDouble(const JsonField& v) {
  if (v.json().is_string()) {
    const std::string& s = v.json().get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return v.Invalid(fmt::format("expected a number (or \"inf\", \"-inf\", \"nan\"), got \"{}\"", s));
  }
  return v.Number();
}

// Reads member f of `object` into r.
Status DecodeField(const JsonField& object, const Field& f, PlacementRecord* r) {
  if (f.optional && !object.Find(f.name)) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(JsonField v, object.Member(f.name));
  return std::visit(
      [&](auto member) -> Status {
        using T = std::remove_cvref_t<decltype(r->*member)>;
        if constexpr (std::is_same_v<T, double>) {
          CAIRN_ASSIGN_OR_RETURN(r->*member, DecodeDouble(v));
        } else if constexpr (std::is_same_v<T, int64_t>) {
          CAIRN_ASSIGN_OR_RETURN(r->*member, v.Integer(std::numeric_limits<int64_t>::min(),
                                                       std::numeric_limits<int64_t>::max()));
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          CAIRN_ASSIGN_OR_RETURN(r->*member, v.Unsigned(std::numeric_limits<uint64_t>::max()));
        } else if constexpr (std::is_same_v<T, bool>) {
          CAIRN_ASSIGN_OR_RETURN(r->*member, v.Bool());
        } else {
          CAIRN_ASSIGN_OR_RETURN(r->*member, v.String());
        }
        return Status::Ok();
      },
      f.member);
}

bool EndsTorn(std::string_view line) { return line.empty() || line.back() != '}'; }

}  // namespace

std::string EncodePlacementRecord(const PlacementRecord& r) {
  Json v = Json::object();
  for (const Field& f : kFields) {
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(r.*member)>;
          if constexpr (std::is_same_v<T, double>) {
            v[f.name] = EncodeDouble(r.*member);
          } else {
            v[f.name] = r.*member;
          }
        },
        f.member);
  }
  return v.dump() + "\n";
}

Result<PlacementRecord> DecodePlacementRecord(std::string_view line, std::string_view document) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  CAIRN_ASSIGN_OR_RETURN(Json doc, ParseJson(line, document));
  const JsonField object(doc, std::string(document), Code::kCorrupt);
  if (!doc.is_object()) {
    return object.Invalid(fmt::format("expected an object, got {}", doc.type_name()));
  }
  PlacementRecord r;
  for (const Field& f : kFields) CAIRN_RETURN_IF_ERROR(DecodeField(object, f, &r));
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
    auto r = DecodePlacementRecord(line, fmt::format("placement history '{}' line {}", path, line_no));
    if (!r.ok()) return r.status();
    out.push_back(std::move(r).value());
  }
  return out;
}

}  // namespace cairn
