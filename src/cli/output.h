// Output helpers for the `cairn` command: aligned text tables for people,
// one JSON object per line for programs (--json).
// Thread-safety: not thread-safe (writes to stdout).
#ifndef CAIRN_CLI_OUTPUT_H_
#define CAIRN_CLI_OUTPUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cairn {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print() const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Builds one JSON object from key/value pairs; values are typed on insert.
class JsonObject {
 public:
  JsonObject& Str(const std::string& key, const std::string& value);
  JsonObject& Int(const std::string& key, int64_t value);
  JsonObject& Num(const std::string& key, double value);
  JsonObject& Bool(const std::string& key, bool value);
  JsonObject& Raw(const std::string& key, const std::string& json);
  std::string ToString() const { return "{" + body_ + "}"; }

 private:
  void Key(const std::string& key);
  std::string body_;
};

std::string JsonQuote(const std::string& s);
std::string HumanBytes(uint64_t bytes);

}  // namespace cairn

#endif  // CAIRN_CLI_OUTPUT_H_
