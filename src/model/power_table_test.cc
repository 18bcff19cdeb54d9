#include "model/power_table.h"

#include <string>

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(PowerTableTest, ParsesAndPicksTheNearestRow) {
  auto t = ParsePowerTable(R"({"format": "cairn-power-table", "frequencies_khz": [800000, 2100000],
      "idle_w": [100, 120], "core_busy_w": [1, 4], "devices": {"ssd": {"read": 2, "write": 3}}})",
                           "p.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  bool exact = false;
  EXPECT_EQ(t->RowFor(2100000, &exact), 1u);
  EXPECT_TRUE(exact);
  EXPECT_EQ(t->RowFor(1000000, &exact), 0u);
  EXPECT_FALSE(exact);
  EXPECT_EQ(t->idle_w, (std::vector<double>{100, 120}));
  EXPECT_EQ(t->device_active_w.at("ssd")[0], 2);
  EXPECT_EQ(t->device_active_w.at("ssd")[1], 3);

  auto one = ParsePowerTable(R"({"frequencies_khz": [0], "idle_w": [40], "core_busy_w": [6]})",
                             "p.json");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->RowFor(2600000, &exact), 0u);
  EXPECT_TRUE(exact);  // a single row applies to any frequency
}

// Every rejection is kConfig and names the file and the member's pointer.
void ExpectRejected(const std::string& json, const std::string& message) {
  auto t = ParsePowerTable(json, "p.json");
  ASSERT_FALSE(t.ok()) << json;
  EXPECT_EQ(t.status().code(), Code::kConfig) << t.status().ToString();
  EXPECT_NE(t.status().message().find("power table 'p.json': " + message), std::string::npos)
      << t.status().message();
}

TEST(PowerTableTest, RejectsNamingFileAndMember) {
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [1, 2], "core_busy_w": [1]})",
                 "/idle_w: has 2 entries, expected one per frequency (1)");
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [1], "core_busy_w": [1], "x": 1})",
                 "/: unknown member \"x\"");
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [0], "core_busy_w": [1]})",
                 "/idle_w/0: must be > 0 W, got 0");
  ExpectRejected(R"({"frequencies_khz": [2, 1], "idle_w": [1, 1], "core_busy_w": [1, 1]})",
                 "/frequencies_khz: must be strictly ascending");
  ExpectRejected(R"({"frequencies_khz": [1.5], "idle_w": [1], "core_busy_w": [1]})",
                 "/frequencies_khz/0: expected an integer");
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [1], "core_busy_w": ["1"]})",
                 "/core_busy_w/0: expected a number, got string");
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [1]})",
                 "/: missing member \"core_busy_w\"");
  ExpectRejected(R"({"format": "other", "frequencies_khz": [1], "idle_w": [1], "core_busy_w": [1]})",
                 "/format: is \"other\"");
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [1], "core_busy_w": [1],
                     "devices": {"ssd": {"read": -1}}})",
                 "/devices/ssd/read: must be >= 0 W");
  ExpectRejected(R"({"frequencies_khz": [1], "idle_w": [1], "core_busy_w": [1],
                     "devices": {"ssd": {"erase": 1}}})",
                 "/devices/ssd: unknown member \"erase\"");
  ExpectRejected("{", "not valid JSON");
}

}  // namespace
}  // namespace cairn
