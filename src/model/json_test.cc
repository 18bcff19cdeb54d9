#include "model/json.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace cairn {
namespace {

JsonValue MustParse(std::string_view text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status().ToString();
  return v.ok() ? *v : JsonValue();
}

TEST(JsonTest, ParsesEveryKindOfValue) {
  JsonValue v = MustParse(R"( {"a": [1, -2.5, 3e2, 0, -0.0], "b": {"c": true, "d": false},
                               "e": null, "f": "x\ty"} )");
  ASSERT_TRUE(v.is_object());
  const JsonValue* a = v.Find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->AsArray().size(), 5u);
  EXPECT_EQ(a->AsArray()[0].AsNumber(), 1);
  EXPECT_EQ(a->AsArray()[1].AsNumber(), -2.5);
  EXPECT_EQ(a->AsArray()[2].AsNumber(), 300);
  EXPECT_TRUE(std::signbit(a->AsArray()[4].AsNumber()));
  EXPECT_TRUE(v.Find("b")->Find("c")->AsBool());
  EXPECT_FALSE(v.Find("b")->Find("d")->AsBool());
  EXPECT_TRUE(v.Find("e")->is_null());
  EXPECT_EQ(v.Find("f")->AsString(), "x\ty");
  EXPECT_EQ(v.Find("missing"), nullptr);
  EXPECT_EQ(v.Find("a")->Find("x"), nullptr);  // not an object
  // Member order is document order.
  EXPECT_EQ(v.AsObject()[0].first, "a");
  EXPECT_EQ(v.AsObject()[3].first, "f");
}

TEST(JsonTest, DecodesEscapesToUtf8) {
  EXPECT_EQ(MustParse(R"("\"\\\/\b\f\n\r\t")").AsString(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(MustParse(R"("\u0041\u00e9\u20ac")").AsString(), "A\xC3\xA9\xE2\x82\xAC");
  // U+1F600 as a surrogate pair, and written raw.
  EXPECT_EQ(MustParse(R"("\ud83d\ude00")").AsString(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(MustParse("\"\xF0\x9F\x98\x80\"").AsString(), "\xF0\x9F\x98\x80");
}

TEST(JsonTest, RejectsMalformedText) {
  const char* bad[] = {
      "",          " ",          "{",          "}",           "[1,]",        "[,1]",
      "{\"a\":}",  "{\"a\" 1}",  "{a:1}",      "{\"a\":1,}",  "[1 2]",       "01",
      "1.",        ".5",         "-",          "+1",          "1e",          "1e+",
      "0x10",      "NaN",        "Infinity",   "tru",         "nul",         "\"abc",
      "\"\\x\"",   "\"\\u12\"",  "\"\\u12G4\"", "\"a\nb\"",    "\"\\ud83d\"", "\"\\ude00\"",
      "\"\\ud83d\\u0041\"",      "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF5\x80\x80\x80\"",
      "\"\xE2\x82\"", "1 2",     "{\"a\":1}x", "[1]]",        "1e400",       "-1e400",
      "{\"a\":1,\"a\":2}",
  };
  for (const char* text : bad) {
    auto v = ParseJson(text);
    EXPECT_FALSE(v.ok()) << "accepted: " << text;
    if (!v.ok()) {
      EXPECT_EQ(v.status().code(), Code::kCorrupt) << text;
    }
  }
}

TEST(JsonTest, ErrorsSayWhere) {
  auto v = ParseJson("{\n  \"a\": [1,\n  2,,3]\n}");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("line 3, column 5"), std::string::npos)
      << v.status().message();
  auto dup = ParseJson(R"({"k": 1, "k": 2})");
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("duplicate member \"k\""), std::string::npos);
}

TEST(JsonTest, NumbersAreExactDoublesAndUnderflowIsZero) {
  EXPECT_EQ(MustParse("0.1").AsNumber(), 0.1);
  EXPECT_EQ(MustParse("9007199254740993").AsNumber(), 9007199254740992.0);  // nearest double
  EXPECT_EQ(MustParse("1.7976931348623157e308").AsNumber(), 1.7976931348623157e308);
  EXPECT_EQ(MustParse("4.9e-324").AsNumber(), 4.9e-324);
  EXPECT_EQ(MustParse("1e-400").AsNumber(), 0.0);
  EXPECT_EQ(MustParse("0.00000000000000000000000000000000000000000000000000000000000000000"
                      "000000000000000000000000000000000000000000000000000000000000000000"
                      "000000000000000000000000000000000000000000000000000000000000000000"
                      "000000000000000000000000000000000000000000000000000000000000000000"
                      "000000000000000000000000000000000000000000000000000000000000000000"
                      "0000001")
                .AsNumber(),
            0.0);
  EXPECT_TRUE(std::signbit(MustParse("-1e-400").AsNumber()));
}

TEST(JsonTest, NestingIsBounded) {
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(ok).ok());
  std::string deep(kMaxJsonDepth + 1, '[');
  deep += std::string(kMaxJsonDepth + 1, ']');
  auto v = ParseJson(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nesting"), std::string::npos);
  // Far deeper input fails the same way instead of exhausting the stack.
  EXPECT_FALSE(ParseJson(std::string(1000000, '[')).ok());
}

TEST(JsonTest, WritesReadableJson) {
  JsonValue v = JsonValue::Object{};
  v.Set("name", "ssd");
  v.Set("freqs", JsonValue::Array{800000, 2100000});
  v.Set("grid", JsonValue::Array{JsonValue::Array{1.5, 2}, JsonValue::Array{}});
  v.Set("empty", JsonValue::Object{});
  v.Set("text", "a\"b\\c\n\x01");
  v.Set("bad", NAN);
  v.Set("name", "iodrive");  // replaces, keeps position
  EXPECT_EQ(WriteJson(v, 2),
            "{\n"
            "  \"name\": \"iodrive\",\n"
            "  \"freqs\": [800000, 2100000],\n"
            "  \"grid\": [\n"
            "    [1.5, 2],\n"
            "    []\n"
            "  ],\n"
            "  \"empty\": {},\n"
            "  \"text\": \"a\\\"b\\\\c\\n\\u0001\",\n"
            "  \"bad\": null\n"
            "}");
  EXPECT_EQ(WriteJson(v, 0),
            R"({"name":"iodrive","freqs":[800000,2100000],"grid":[[1.5,2],[]],"empty":{},)"
            R"("text":"a\"b\\c\n\u0001","bad":null})");
  EXPECT_EQ(WriteJson(JsonValue(270e6)), "270000000");
  EXPECT_EQ(WriteJson(JsonValue(1e300)), "1e+300");
  EXPECT_EQ(WriteJson(JsonValue(0.1)), "0.1");
}

// A random document of bounded depth.
JsonValue RandomValue(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 3 ? 3 : 5);
  std::uniform_int_distribution<int> len(0, 4);
  switch (kind(rng)) {
    case 0: return JsonValue();
    case 1: return JsonValue(rng() % 2 == 0);
    case 2: {
      // Arbitrary finite doubles, including tiny, huge and whole ones.
      double d;
      do {
        uint64_t bits = rng();
        std::memcpy(&d, &bits, sizeof(d));
      } while (!std::isfinite(d));
      return rng() % 3 == 0 ? JsonValue(std::trunc(std::fmod(d, 1e18))) : JsonValue(d);
    }
    case 3: {
      std::string s;
      for (int i = len(rng) * 3; i > 0; --i) {
        // ASCII including controls, quotes and backslashes, plus a 2-byte
        // and a 4-byte UTF-8 character.
        int c = static_cast<int>(rng() % 130);
        if (c < 128) {
          s.push_back(static_cast<char>(c));
        } else if (c == 128) {
          s += "\xC3\xA9";
        } else {
          s += "\xF0\x9F\x98\x80";
        }
      }
      return JsonValue(s);
    }
    case 4: {
      JsonValue::Array a;
      for (int i = len(rng); i > 0; --i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      JsonValue o = JsonValue::Object{};
      for (int i = len(rng); i > 0; --i) {
        o.Set("k" + std::to_string(rng() % 8), RandomValue(rng, depth + 1));
      }
      return o;
    }
  }
}

TEST(JsonTest, WriteThenParseRoundTrips) {
  const unsigned seed = 42;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    JsonValue v = RandomValue(rng, 0);
    for (int indent : {0, 2}) {
      std::string text = WriteJson(v, indent);
      auto back = ParseJson(text);
      ASSERT_TRUE(back.ok()) << "seed " << seed << " case " << i << ": "
                             << back.status().ToString() << "\n" << text;
      EXPECT_TRUE(*back == v) << "seed " << seed << " case " << i << "\n" << text;
    }
  }
}

TEST(JsonTest, MutatedInputNeverCrashes) {
  // Fuzz-style: flip, drop and insert bytes of a valid document; the reader
  // must return a value or an error, never crash or hang (run under ASan in
  // CI). A value it accepts must survive a write/parse round trip.
  const unsigned seed = 1234;
  std::mt19937_64 rng(seed);
  const std::string base =
      R"({"format": "x", "a": [1, 2.5e-3, -7, {"b": "\u00e9\ud83d\ude00"}], "t": true, )"
      R"("n": null, "s": "line\nnext"})";
  const char alphabet[] = "{}[]\":,.-+eE0123456789tfnul\\ \x80\xC3\xFF";
  for (int i = 0; i < 20000; ++i) {
    std::string text = base;
    for (int m = 1 + static_cast<int>(rng() % 4); m > 0; --m) {
      size_t pos = rng() % (text.size() + 1);
      char c = alphabet[rng() % (sizeof(alphabet) - 1)];
      switch (rng() % 3) {
        case 0: if (pos < text.size()) text[pos] = c; break;
        case 1: if (pos < text.size()) text.erase(pos, 1); break;
        default: text.insert(pos, 1, c);
      }
    }
    auto v = ParseJson(text);
    if (v.ok()) {
      auto again = ParseJson(WriteJson(*v));
      ASSERT_TRUE(again.ok()) << "seed " << seed << " case " << i;
      EXPECT_TRUE(*again == *v) << "seed " << seed << " case " << i;
    }
  }
}

}  // namespace
}  // namespace cairn
