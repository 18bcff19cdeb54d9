// ini_file.h — reads the INI-style configuration files of FTI and VeloC and
// the "KEY=VALUE [SUBKEY=VALUE ...]" lines of SCR's scr.conf.
#ifndef CAIRN_COMPAT_COMMON_INI_FILE_H_
#define CAIRN_COMPAT_COMMON_INI_FILE_H_

#include <string>
#include <vector>

#include "compat/common/outcome.h"

namespace cairn_compat {

// One `key = value` line. `section` is the [section] it stands under ("" before
// any); `extra` holds further "K=V" words of the same line (SCR's
// "CACHEDIR=/ssd BYTES=270GB"); `line` is 1-based, for messages.
struct IniEntry {
  std::string section;
  std::string key;
  std::string value;
  std::vector<std::string> extra;
  int line = 0;
};

// Where each peer's own parser ends a value, so that a file written for the
// peer means the same here: a comment after a value ("ckpt_dir = ./Local
// # local storage", as in FTI's own template) is not part of the value.
struct IniDialect {
  const char* inline_comment;  // characters that start a comment within a line
  bool after_space_only;       // ... only where whitespace precedes them
  bool unquote;                // a value in "" or '' is taken whole, quotes removed
  const char* separators;      // between key and value
};
// FTI's iniparser: an unquoted value ends at the first ';' or '#'.
inline constexpr IniDialect kFtiIni{";#", false, true, "="};
// VeloC's inih: a ';' after whitespace starts a comment; '=' or ':' separate.
inline constexpr IniDialect kVelocIni{";", true, false, "=:"};
// SCR's scr.conf: '#' is reserved and starts a comment anywhere.
inline constexpr IniDialect kScrConf{"#", false, false, "="};

// Parses configuration text; `origin` names it in errors. Blank lines and
// lines whose first non-blank character is '#' or ';' are skipped, and so is
// an inline comment as `dialect` has it; keys and sections are kept as
// written (callers compare case-insensitively where their peer does). A
// line that is neither a section, a comment nor a key=value is an error
// naming the origin and line.
Result<std::vector<IniEntry>> ParseIni(const std::string& text, const std::string& origin,
                                       const IniDialect& dialect);
// ParseIni of the file at `path`; a file that cannot be read is an error
// naming it.
Result<std::vector<IniEntry>> ReadIniFile(const std::string& path, const IniDialect& dialect);

// Lower-case copy of s (ASCII), for case-insensitive keys and values.
std::string Lower(std::string s);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_COMMON_INI_FILE_H_
