#include "runtime/placement_history.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "env/fault_env.h"

namespace cairn {
namespace {

PlacementRecord Sample(int64_t number) {
  PlacementRecord r;
  r.run_start = 1767225600.25;
  r.time = r.run_start + 5.5 * static_cast<double>(number);
  r.name = "heat";
  r.version = 10 * number;
  r.number = number;
  r.placement = number % 3 == 0 ? "ssd" : "memory";
  r.rule = number % 3 == 0 ? "within-limits" : "lifetime";
  r.forced = number == 4;
  r.node_bytes = (uint64_t{1} << 40) + static_cast<uint64_t>(number);
  r.ssd_bytes_used = 3.5e12;
  r.ssd_rating_bytes = 14.6e15;
  r.warranty_seconds = 5 * 365.25 * 86400;
  r.bandwidth = 216.2e6;
  r.wear_source = "ledger";
  r.expected_lifetime_seconds = 1.5768e8 * 0.99;
  r.estimated_lifetime_seconds = 6.75e7;
  r.slowdown = 0.0731;
  r.slowdown_bound = 0.1;
  r.checkpoint_seconds = 0.125;
  r.policy = "clc";
  r.lifetime_checked = true;
  r.slowdown_checked = number % 2 == 0;
  return r;
}

TEST(PlacementHistoryTest, RecordRoundTripsThroughOneLine) {
  PlacementRecord r = Sample(3);
  std::string line = EncodePlacementRecord(r);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  auto back = DecodePlacementRecord(line);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << line;
  EXPECT_EQ(*back, r);
  EXPECT_EQ(EncodePlacementRecord(*back), line);
}

TEST(PlacementHistoryTest, NonFiniteDoublesAreStrings) {
  PlacementRecord r = Sample(1);
  r.estimated_lifetime_seconds = std::numeric_limits<double>::infinity();
  r.bandwidth = std::numeric_limits<double>::infinity();
  r.slowdown = -std::numeric_limits<double>::infinity();
  std::string line = EncodePlacementRecord(r);
  EXPECT_NE(line.find("\"estimated_lifetime_seconds\":\"inf\""), std::string::npos) << line;
  EXPECT_NE(line.find("\"slowdown\":\"-inf\""), std::string::npos) << line;
  auto back = DecodePlacementRecord(line);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);

  r.checkpoint_seconds = std::nan("");
  back = DecodePlacementRecord(EncodePlacementRecord(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(std::isnan(back->checkpoint_seconds));
}

// Replaces the value of `member` in an encoded record by `value` (JSON text).
std::string WithMember(const std::string& line, const std::string& member,
                       const std::string& value) {
  const std::string key = "\"" + member + "\":";
  size_t start = line.find(key);
  EXPECT_NE(start, std::string::npos) << member;
  start += key.size();
  size_t end = line.find_first_of(",}", start);
  if (line[start] == '"') end = line.find_first_of(",}", line.find('"', start + 1));
  return line.substr(0, start) + value + line.substr(end);
}

void ExpectBadMember(const std::string& line, const std::string& member) {
  auto r = DecodePlacementRecord(line);
  ASSERT_FALSE(r.ok()) << "accepted: " << line;
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  // The member's JSON Pointer, or its name when it is missing.
  const std::string& message = r.status().message();
  EXPECT_TRUE(message.find("/" + member + ": ") != std::string::npos ||
              message.find("/: missing member \"" + member + "\"") != std::string::npos)
      << message;
}

TEST(PlacementHistoryTest, BadMembersAreNamed) {
  const std::string line = EncodePlacementRecord(Sample(2));
  ExpectBadMember(WithMember(line, "version", "\"10\""), "version");
  ExpectBadMember(WithMember(line, "number", "1.5"), "number");
  ExpectBadMember(WithMember(line, "node_bytes", "-1"), "node_bytes");
  ExpectBadMember(WithMember(line, "node_bytes", "1e300"), "node_bytes");
  ExpectBadMember(WithMember(line, "forced", "1"), "forced");
  ExpectBadMember(WithMember(line, "placement", "3"), "placement");
  ExpectBadMember(WithMember(line, "bandwidth", "\"fast\""), "bandwidth");
  ExpectBadMember(WithMember(line, "time", "null"), "time");

  std::string missing = line;
  size_t at = missing.find(",\"rule\":");
  missing.erase(at, missing.find(',', at + 1) - at);
  ExpectBadMember(missing, "rule");

  auto not_object = DecodePlacementRecord("[1, 2]");
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.status().code(), Code::kCorrupt);
  auto not_json = DecodePlacementRecord("{\"run_start\": ");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().code(), Code::kCorrupt);
}

TEST(PlacementHistoryTest, IntegersAreExactBeyondDoublePrecision) {
  PlacementRecord r = Sample(3);
  r.node_bytes = (uint64_t{1} << 60) + 1;
  r.version = -(int64_t{1} << 62) - 1;
  auto back = DecodePlacementRecord(EncodePlacementRecord(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->node_bytes, r.node_bytes);
  EXPECT_EQ(back->version, r.version);
}

// Histories written before the policy and the tests used were recorded
// still read: as policy "" with both tests counted as used.
TEST(PlacementHistoryTest, OptionalMembersTakeTheirDefaultsWhenAbsent) {
  PlacementRecord r = Sample(5);
  r.policy = "memory";
  r.lifetime_checked = r.slowdown_checked = false;
  std::string line = EncodePlacementRecord(r);
  size_t at = line.find(",\"policy\":");
  ASSERT_NE(at, std::string::npos) << line;
  line.erase(at, line.rfind('}') - at);
  auto back = DecodePlacementRecord(line);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << line;
  EXPECT_EQ(back->policy, "");
  EXPECT_TRUE(back->lifetime_checked);
  EXPECT_TRUE(back->slowdown_checked);
  EXPECT_EQ(back->checkpoint_seconds, r.checkpoint_seconds);
  // Present, they are checked like any other member.
  ExpectBadMember(WithMember(EncodePlacementRecord(r), "slowdown_checked", "1"),
                  "slowdown_checked");
}

TEST(PlacementHistoryTest, UnknownMembersAreIgnored) {
  std::string line = EncodePlacementRecord(Sample(5));
  line.insert(1, "\"added_later\":[1,2],");
  auto r = DecodePlacementRecord(line);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, Sample(5));
}

TEST(PlacementHistoryTest, AppendsAndReadsBackInOrder) {
  auto env = NewMemEnv();
  const std::string root = "/ssd/0";
  auto none = ReadPlacementHistory(env.get(), root);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kNotFound);

  for (int64_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(i)).ok());
  }
  EXPECT_EQ(PlacementHistoryPath(root), "/ssd/0/.status/history.jsonl");
  auto all = ReadPlacementHistory(env.get(), root);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 5u);
  for (int64_t i = 1; i <= 5; ++i) EXPECT_EQ((*all)[static_cast<size_t>(i - 1)], Sample(i));
}

TEST(PlacementHistoryTest, TornLinesAreSkippedAndNeverSwallowTheNextRecord) {
  auto env = NewMemEnv();
  const std::string root = "/ssd/1";
  const std::string path = PlacementHistoryPath(root);
  ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(1)).ok());
  ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(2)).ok());
  // A crash in the middle of the third append.
  std::string third = EncodePlacementRecord(Sample(3));
  ASSERT_TRUE(env->AppendToFile(path, third.data(), third.size() / 2).ok());

  auto read = ReadPlacementHistory(env.get(), root);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1], Sample(2));

  // The next run appends after the fragment: its record stays whole.
  ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(4)).ok());
  read = ReadPlacementHistory(env.get(), root);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[2], Sample(4));

  // A torn line cut just before its '\n' is complete JSON: it is kept.
  std::string fifth = EncodePlacementRecord(Sample(5));
  ASSERT_TRUE(env->AppendToFile(path, fifth.data(), fifth.size() - 1).ok());
  ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(6)).ok());
  read = ReadPlacementHistory(env.get(), root);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 5u);
  EXPECT_EQ((*read)[3], Sample(5));
  EXPECT_EQ((*read)[4], Sample(6));
}

TEST(PlacementHistoryTest, CompleteBadLineIsCorruptAndNamesLineAndMember) {
  auto env = NewMemEnv();
  const std::string root = "/ssd/0";
  ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(1)).ok());
  std::string bad = WithMember(EncodePlacementRecord(Sample(2)), "number", "\"two\"");
  const std::string path = PlacementHistoryPath(root);
  ASSERT_TRUE(env->AppendToFile(path, bad.data(), bad.size()).ok());
  ASSERT_TRUE(AppendPlacementRecord(env.get(), root, Sample(3)).ok());
  auto read = ReadPlacementHistory(env.get(), root);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), Code::kCorrupt);
  EXPECT_EQ(read.status().message(),
            "placement history '/ssd/0/.status/history.jsonl' line 2: /number: expected an "
            "integer, got string");
}

TEST(PlacementHistoryTest, AppendErrorsComeBack) {
  auto mem = NewMemEnv();
  FaultEnv env(mem.get());
  const std::string root = "/ssd/0";
  ASSERT_TRUE(AppendPlacementRecord(&env, root, Sample(1)).ok());
  // The second mutation of an append is the write itself (after mkdir).
  env.FailAt(env.operations() + 2, Code::kNoSpace, /*once=*/true);
  Status s = AppendPlacementRecord(&env, root, Sample(2));
  EXPECT_EQ(s.code(), Code::kNoSpace) << s.ToString();
  ASSERT_TRUE(AppendPlacementRecord(&env, root, Sample(3)).ok());
  auto read = ReadPlacementHistory(&env, root);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1], Sample(3));
}

TEST(PlacementHistoryTest, AppendedRecordsAreNotDurable) {
  // Informational: a power loss may take the records of this run with it.
  auto mem = NewMemEnv();
  FaultEnv env(mem.get());
  const std::string root = "/ssd/0";
  ASSERT_TRUE(AppendPlacementRecord(&env, root, Sample(1)).ok());
  ASSERT_TRUE(env.DropUnsyncedData().ok());
  EXPECT_FALSE(env.FileExists(PlacementHistoryPath(root)));
}

TEST(PlacementHistoryTest, PosixFileIsPrivateAndReadBack) {
  char dir_template[] = "/tmp/cairn-history-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string root = dir_template;
  Env* env = PosixEnv();
  for (int64_t i = 1; i <= 3; ++i) ASSERT_TRUE(AppendPlacementRecord(env, root, Sample(i)).ok());
  auto read = ReadPlacementHistory(env, root);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[2], Sample(3));
  uint64_t expected = 0;
  for (int64_t i = 1; i <= 3; ++i) expected += EncodePlacementRecord(Sample(i)).size();
  auto size = env->FileSize(PlacementHistoryPath(root));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, expected);
  struct stat st;
  ASSERT_EQ(::stat(PlacementHistoryPath(root).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(env->DeleteRecursive(root).ok());
}

}  // namespace
}  // namespace cairn
