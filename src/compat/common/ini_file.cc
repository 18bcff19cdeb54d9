#include "compat/common/ini_file.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cairn_compat {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool IsQuote(char c) { return c == '"' || c == '\''; }

// The line up to its inline comment, if `dialect` has one there. A quoted
// value's characters are never a comment.
std::string StripInlineComment(const std::string& line, const IniDialect& dialect) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (dialect.unquote && IsQuote(c)) {
      quote = c;
    } else if (std::strchr(dialect.inline_comment, c) != nullptr && c != '\0' &&
               (!dialect.after_space_only ||
                (i > 0 && std::isspace(static_cast<unsigned char>(line[i - 1]))))) {
      return line.substr(0, i);
    }
  }
  return line;
}

// "key = value" or SCR's "KEY=VALUE SUB=V ...". Values with no '=' after the
// first pair (an INI value with spaces, "ckpt_dir = /a b") stay whole.
bool ParsePair(const std::string& text, const IniDialect& dialect, IniEntry* entry) {
  size_t eq = text.find_first_of(dialect.separators);
  if (eq == std::string::npos || eq == 0) return false;
  entry->key = Trim(text.substr(0, eq));
  std::string rest = Trim(text.substr(eq + 1));
  if (dialect.unquote && rest.size() >= 2 && IsQuote(rest.front()) && rest.back() == rest.front()) {
    entry->value = rest.substr(1, rest.size() - 2);
    return !entry->key.empty();
  }
  // Further "K=V" words (SCR's sub-parameters) are split off only when every
  // following word has the form K=V.
  std::istringstream words(rest);
  std::vector<std::string> parts;
  for (std::string w; words >> w;) parts.push_back(w);
  bool sub_params = parts.size() > 1 &&
                    std::all_of(parts.begin() + 1, parts.end(), [](const std::string& w) {
                      return w.find('=') != std::string::npos && w.front() != '=';
                    });
  if (sub_params) {
    entry->value = parts[0];
    entry->extra.assign(parts.begin() + 1, parts.end());
  } else {
    entry->value = rest;
  }
  return !entry->key.empty();
}

}  // namespace

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<std::vector<IniEntry>> ParseIni(const std::string& text, const std::string& origin,
                                       const IniDialect& dialect) {
  std::istringstream in(text);
  std::vector<IniEntry> entries;
  std::string section;
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    std::string whole = Trim(raw);
    if (whole.empty() || whole[0] == '#' || whole[0] == ';') continue;
    std::string trimmed = Trim(StripInlineComment(whole, dialect));
    if (trimmed.front() == '[') {
      if (trimmed.back() != ']') {
        return Status::Error(origin + ":" + std::to_string(line) + ": unterminated section '" +
                             trimmed + "'");
      }
      section = Trim(trimmed.substr(1, trimmed.size() - 2));
      continue;
    }
    IniEntry entry;
    entry.section = section;
    entry.line = line;
    if (!ParsePair(trimmed, dialect, &entry)) {
      return Status::Error(origin + ":" + std::to_string(line) +
                           ": expected 'key = value', found '" + whole + "'");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::vector<IniEntry>> ReadIniFile(const std::string& path, const IniDialect& dialect) {
  std::ifstream in(path);
  if (!in) return Status::Error("cannot read configuration file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error("error reading configuration file '" + path + "'");
  return ParseIni(text.str(), path, dialect);
}

}  // namespace cairn_compat
