#include "base/json.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace cairn {
namespace {

Json Parsed(const std::string& text) {
  auto doc = ParseJson(text, "test");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : Json();
}

void ExpectParseError(const std::string& text, const std::string& needle) {
  auto doc = ParseJson(text, "doc 'x.json'");
  ASSERT_FALSE(doc.ok()) << "accepted: " << text;
  EXPECT_EQ(doc.status().code(), Code::kCorrupt);
  EXPECT_NE(doc.status().message().find("doc 'x.json': "), std::string::npos)
      << doc.status().message();
  EXPECT_NE(doc.status().message().find(needle), std::string::npos) << doc.status().message();
}

TEST(JsonTest, RejectsMalformedTextWithItsPosition) {
  ExpectParseError("{\"a\": ", "line 1, column 7");
  ExpectParseError("{\"a\": 1,}", "not valid JSON");
  ExpectParseError("[1, 2] 3", "not valid JSON");
  ExpectParseError("\"\xff\"", "not valid JSON");  // not UTF-8
  ExpectParseError("", "not valid JSON");
  ExpectParseError("{\"a\": 1}\n{", "line 2");
}

TEST(JsonTest, RejectsRepeatedMembersNamingWhere) {
  ExpectParseError(R"({"a": 1, "a": 2})", "/: member \"a\" appears twice");
  ExpectParseError(R"({"x": [0, {"b": 1, "b": 1}]})", "/x/1: member \"b\" appears twice");
  // Equal names in different objects are fine.
  EXPECT_EQ(Parsed(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})")["b"][1]["a"], 2);
}

TEST(JsonTest, BoundsNesting) {
  std::string ok(kMaxJsonDepth, '['), deep(kMaxJsonDepth + 1, '[');
  ok += std::string(kMaxJsonDepth, ']');
  deep += std::string(kMaxJsonDepth + 1, ']');
  EXPECT_TRUE(ParseJson(ok, "test").ok());
  ExpectParseError(deep, "nesting deeper than 64");
  // Far deeper than any stack could recurse: still an error, not a crash.
  ExpectParseError(std::string(1 << 20, '['), "nesting deeper");
}

TEST(JsonTest, KeepsMemberOrderAndRoundTripsNumbers) {
  Json doc = Parsed(R"({"z": 1, "a": 2.5, "m": 18446744073709551615, "n": -9223372036854775808})");
  EXPECT_EQ(doc.dump(), R"({"z":1,"a":2.5,"m":18446744073709551615,"n":-9223372036854775808})");
  const uint32_t seed = 20261101;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    double d = std::bit_cast<double>(rng());
    if (!std::isfinite(d)) continue;
    Json back = Parsed(Json(d).dump());
    ASSERT_EQ(back.get<double>(), d) << "seed " << seed << " value " << Json(d).dump();
  }
}

TEST(JsonTest, FieldsAreTypeCheckedAndNameTheirPointer) {
  Json doc = Parsed(R"({"n": 1.5, "i": 7, "big": 2e6, "neg": -3, "s": "x", "b": true,
                        "a": [[1, 2], [3]], "o": {"k/ey~": null}})");
  JsonField root(doc, "profile 'p.json'", Code::kConfig);
  auto field = [&](const char* key) { return root.Member(key).value(); };
  EXPECT_EQ(field("n").Number().value(), 1.5);
  EXPECT_EQ(field("i").Integer(0, 10).value(), 7);
  EXPECT_EQ(field("big").Unsigned(UINT64_MAX).value(), 2000000u);  // a whole float
  EXPECT_EQ(field("neg").Integer(-5, 0).value(), -3);
  EXPECT_EQ(field("s").String().value(), "x");
  EXPECT_TRUE(field("b").Bool().value());
  EXPECT_EQ(field("a").Grid().value(), (std::vector<std::vector<double>>{{1, 2}, {3}}));

  auto message = [](const Status& s) {
    EXPECT_EQ(s.code(), Code::kConfig) << s.ToString();
    return s.message();
  };
  EXPECT_EQ(message(field("n").Integer(0, 10).status()),
            "profile 'p.json': /n: expected an integer in [0, 10], got 1.5");
  EXPECT_EQ(message(field("i").Integer(0, 5).status()),
            "profile 'p.json': /i: expected an integer in [0, 5], got 7");
  EXPECT_EQ(message(field("neg").Unsigned(10).status()),
            "profile 'p.json': /neg: expected an integer in [0, 10], got -3");
  EXPECT_EQ(message(field("s").Number().status()),
            "profile 'p.json': /s: expected a number, got string");
  EXPECT_EQ(message(root.Member("missing").status()),
            "profile 'p.json': /: missing member \"missing\"");
  EXPECT_EQ(message(root.CheckMembers({"n", "i"})),
            "profile 'p.json': /: unknown member \"big\"");
  EXPECT_EQ(message(field("a").Elements().value()[1].Elements().value()[0].String().status()),
            "profile 'p.json': /a/1/0: expected a string, got number");
  auto members = field("o").Members().value();
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].first, "k/ey~");
  EXPECT_EQ(message(members[0].second.Bool().status()),
            "profile 'p.json': /o/k~1ey~0: expected true or false, got null");
  EXPECT_FALSE(field("s").Find("x").has_value());
  EXPECT_EQ(message(field("o").Numbers().status()),
            "profile 'p.json': /o: expected an array of numbers, got object");
}

TEST(JsonTest, OutOfRangeNumbersAreErrors) {
  auto doc = ParseJson(R"({"huge": 1e400})", "test");
  if (!doc.ok()) {
    // A parser that refuses the overflow is as good as one that flags it.
    EXPECT_EQ(doc.status().code(), Code::kCorrupt);
    return;
  }
  JsonField root(*doc, "test", Code::kCorrupt);
  auto n = root.Member("huge").value().Number();
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("/huge"), std::string::npos) << n.status().message();
}

}  // namespace
}  // namespace cairn
