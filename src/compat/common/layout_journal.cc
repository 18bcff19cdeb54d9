#include "compat/common/layout_journal.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "compat/common/private_file.h"

namespace cairn_compat {
namespace {

// How many layout changes a journal keeps: versions older than the 64th
// change back are far below any retention a peer configures.
constexpr size_t kMaxRecords = 64;

bool ParseShape(const std::string& word, int* id, Shape* shape) {
  unsigned long long count = 0, elem = 0;
  int consumed = 0;
  if (std::sscanf(word.c_str(), "%d:%llu:%llu%n", id, &count, &elem, &consumed) != 3 ||
      consumed != static_cast<int>(word.size()) || *id < 0) {
    return false;
  }
  shape->count = count;
  shape->elem_size = elem;
  return true;
}

}  // namespace

std::string FormatLayoutRecords(const std::map<int, Layout>& records) {
  std::string out;
  for (const auto& [version, layout] : records) {
    out += std::to_string(version);
    for (const auto& [id, shape] : layout) {
      out += " " + std::to_string(id) + ":" + std::to_string(shape.count) + ":" +
             std::to_string(shape.elem_size);
    }
    out += "\n";
  }
  return out;
}

Result<std::map<int, Layout>> ParseLayoutRecords(const std::string& text, const std::string& origin) {
  std::map<int, Layout> records;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::istringstream words(line);
    std::string word;
    int version = -1;
    if (!(words >> version) || version < 0) {
      return Status::Error(origin + ":" + std::to_string(number) + ": expected a version, found '" +
                           line + "'");
    }
    Layout layout;
    while (words >> word) {
      int id = 0;
      Shape shape;
      if (!ParseShape(word, &id, &shape)) {
        return Status::Error(origin + ":" + std::to_string(number) + ": '" + word +
                             "' is not <id>:<count>:<elem_size>");
      }
      layout[id] = shape;
    }
    records[version] = std::move(layout);
  }
  return records;
}

std::string LayoutJournal::PathOf(const std::string& name) const {
  return dir_ + "/" + name + ".r" + std::to_string(rank_) + ".layout";
}

Result<LayoutJournal::Records> LayoutJournal::Load(const std::string& name) const {
  std::string path = PathOf(name);
  auto text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  if (!*text) return Records{};  // nothing recorded yet
  return ParseLayoutRecords(**text, path);
}

Status LayoutJournal::Store(const std::string& name, const Records& records) const {
  // Durable before the version it describes is written.
  return ReplaceFile(PathOf(name), FormatLayoutRecords(records));
}

Status LayoutJournal::Record(const std::string& name, int version, const Layout& layout) {
  auto records = Load(name);
  if (!records.ok()) return records.status();
  records->erase(records->lower_bound(version), records->end());
  if (!records->empty() && records->rbegin()->second == layout) return Status();
  (*records)[version] = layout;
  while (records->size() > kMaxRecords) records->erase(records->begin());
  return Store(name, *records);
}

Result<std::optional<Layout>> LayoutJournal::Find(const std::string& name, int version) const {
  auto records = Load(name);
  if (!records.ok()) return records.status();
  auto above = records->upper_bound(version);
  if (above == records->begin()) return std::optional<Layout>();
  return std::optional<Layout>(std::prev(above)->second);
}

Status LayoutJournal::Remove(const std::string& name) {
  std::string path = PathOf(name);
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::Error("cannot remove '" + path + "': " + std::strerror(errno));
  }
  return Status();
}

}  // namespace cairn_compat
