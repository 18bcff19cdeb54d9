#include "model/io_profile.h"

#include <string>

#include <gtest/gtest.h>

#include "base/json.h"

namespace cairn {
namespace {

// Two frequencies, parallelism {1, 4}, one 1 MiB block size, table power:
// small enough to check every number by hand.
IoProfile SmallProfile() {
  IoProfile p;
  p.description = "test";
  p.frequencies_khz = {1000000, 2000000};
  p.cores = 4;
  p.power_source = PowerSource::kTable;
  p.idle_w = {100, 110};
  p.core_busy_w = {2, 5};
  DeviceIoProfile d;
  d.name = "ssd";
  d.parallelism = {1, 4};
  d.active_w[static_cast<int>(IoOp::kRead)] = 1;
  d.active_w[static_cast<int>(IoOp::kWrite)] = 3;
  IoBlockProfile& b = d.blocks.emplace_back();
  b.block_size = 1 << 20;
  b.op(IoOp::kRead).throughput_bps = {{100e6, 90e6}, {120e6, 95e6}};
  b.op(IoOp::kRead).busy_cores = {{0.5, 2}, {0.25, 1}};
  b.op(IoOp::kWrite).throughput_bps = {{80e6, 60e6}, {100e6, 70e6}};
  b.op(IoOp::kWrite).busy_cores = {{0.5, 4}, {0.5, 3}};
  p.devices.push_back(d);
  return p;
}

TEST(IoProfileTest, PointsFollowThePowerSource) {
  IoProfile p = SmallProfile();
  ASSERT_TRUE(ValidateIoProfile(p).ok()) << ValidateIoProfile(p).ToString();
  const DeviceIoProfile& d = p.devices[0];
  // Table: idle 110 + 3 busy cores · 5 W + 3 W of device = 128 W.
  IoPoint w = IoProfilePoint(p, d, IoOp::kWrite, 1, 1, 0);
  EXPECT_EQ(w.throughput_bps, 70e6);
  EXPECT_EQ(w.watts, 128);
  // 100 + 0.5 · 2 + 1 = 102 W.
  EXPECT_EQ(IoProfilePoint(p, d, IoOp::kRead, 0, 0, 0).watts, 102);

  // RAPL: the measured figure plus the device, which RAPL cannot see.
  p.power_source = PowerSource::kRapl;
  p.devices[0].blocks[0].op(IoOp::kWrite).watts = {{150, 160}, {170, 180}};
  p.devices[0].blocks[0].op(IoOp::kRead).watts = {{140, 150}, {160, 170}};
  ASSERT_TRUE(ValidateIoProfile(p).ok());
  EXPECT_EQ(IoProfilePoint(p, p.devices[0], IoOp::kWrite, 1, 1, 0).watts, 183);
  EXPECT_EQ(IoProfilePoint(p, p.devices[0], IoOp::kRead, 0, 1, 0).watts, 151);
}

TEST(IoProfileTest, PointsComeFromTheirBlock) {
  IoProfile p = SmallProfile();
  IoBlockProfile big = p.devices[0].blocks[0];
  big.block_size = 4 << 20;
  big.op(IoOp::kWrite).throughput_bps[1][1] = 140e6;
  big.op(IoOp::kWrite).busy_cores[1][1] = 1;
  p.devices[0].blocks.push_back(big);
  ASSERT_TRUE(ValidateIoProfile(p).ok()) << ValidateIoProfile(p).ToString();
  IoPoint w = IoProfilePoint(p, p.devices[0], IoOp::kWrite, 1, 1, 1);
  EXPECT_EQ(w.throughput_bps, 140e6);
  EXPECT_EQ(w.watts, 110 + 5 + 3);
  EXPECT_EQ(IoProfilePoint(p, p.devices[0], IoOp::kWrite, 1, 1, 0).throughput_bps, 70e6);

  auto back = ParseIoProfile(SerializeIoProfile(p));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->devices[0].blocks.size(), 2u);
  EXPECT_EQ(back->devices[0].blocks[1].block_size, 4u << 20);
  EXPECT_EQ(back->devices[0].blocks[1].op(IoOp::kWrite).throughput_bps[1][1], 140e6);

  // Block sizes ascend; 0 (not recorded) only as the single block.
  std::swap(p.devices[0].blocks[0], p.devices[0].blocks[1]);
  EXPECT_NE(ValidateIoProfile(p).message().find("/devices/0/blocks/1/block_size"),
            std::string::npos)
      << ValidateIoProfile(p).message();
  p.devices[0].blocks[0].block_size = 0;
  EXPECT_EQ(ValidateIoProfile(p).code(), Code::kInvalidArgument);
  p.devices[0].blocks.pop_back();
  EXPECT_TRUE(ValidateIoProfile(p).ok()) << ValidateIoProfile(p).ToString();
  p.devices[0].blocks.clear();
  EXPECT_NE(ValidateIoProfile(p).message().find("/devices/0/blocks: needs at least one"),
            std::string::npos)
      << ValidateIoProfile(p).message();
}

TEST(IoProfileTest, JsonRoundTrip) {
  IoProfile p = SmallProfile();
  std::string text = SerializeIoProfile(p);
  auto back = ParseIoProfile(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  EXPECT_EQ(SerializeIoProfile(*back), text);
  EXPECT_EQ(back->frequencies_khz, p.frequencies_khz);
  EXPECT_EQ(back->devices[0].blocks[0].op(IoOp::kWrite).busy_cores,
            p.devices[0].blocks[0].op(IoOp::kWrite).busy_cores);
  EXPECT_EQ(back->devices[0].blocks[0].block_size, 1u << 20);
  EXPECT_EQ(back->devices[0].active_w[1], 3);
  EXPECT_EQ(back->devices[0].parallelism_kind, ParallelismKind::kProcesses);
  EXPECT_NE(text.find("\"parallelism_kind\": \"processes\""), std::string::npos) << text;

  p.devices[0].parallelism_kind = ParallelismKind::kThreads;
  back = ParseIoProfile(SerializeIoProfile(p));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->devices[0].parallelism_kind, ParallelismKind::kThreads);
  p.devices[0].parallelism_kind = ParallelismKind::kProcesses;

  p.power_source = PowerSource::kRapl;
  p.idle_w.clear();
  p.core_busy_w.clear();
  for (auto& op : p.devices[0].blocks[0].ops) {
    op.busy_cores.clear();
    op.watts = {{150, 160}, {170, 180}};
  }
  text = SerializeIoProfile(p);
  back = ParseIoProfile(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  EXPECT_EQ(back->power_source, PowerSource::kRapl);
  EXPECT_EQ(SerializeIoProfile(*back), text);
}

TEST(IoProfileTest, ReadsTheDocumentedForm) {
  // The example of docs/model.md, without DVFS (one unknown frequency).
  const char* text = R"({
    "format": "cairn-io-profile", "version": 2,
    "cpu": {"frequencies_khz": [0], "cores": 2},
    "power": {"source": "rapl"},
    "devices": [{"name": "nvme0", "parallelism": [1, 2],
                 "blocks": [
                   {"block_size": 65536,
                    "read":  {"throughput_bps": [[1e9, 2e9]], "watts": [[30, 34]]},
                    "write": {"throughput_bps": [[0.5e9, 1e9]], "watts": [[31, 35]]}},
                   {"block_size": 1048576,
                    "read":  {"throughput_bps": [[2e9, 3e9]], "watts": [[30, 35]]},
                    "write": {"throughput_bps": [[1e9, 1.5e9]], "watts": [[31, 36]]}}]}]
  })";
  auto p = ParseIoProfile(text);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->devices[0].max_parallelism(), 2);
  EXPECT_EQ(p->devices[0].active_w[0], 0);
  EXPECT_EQ(p->devices[0].blocks[0].block_size, 65536u);
  // Profiles written before "parallelism_kind" existed count processes.
  EXPECT_EQ(p->devices[0].parallelism_kind, ParallelismKind::kProcesses);
  EXPECT_EQ(IoProfilePoint(*p, p->devices[0], IoOp::kWrite, 0, 1, 1).watts, 36);
  EXPECT_EQ(IoProfilePoint(*p, p->devices[0], IoOp::kWrite, 0, 1, 0).watts, 35);
  EXPECT_NE(p->FindDevice("nvme0"), nullptr);
  EXPECT_EQ(p->FindDevice("ssd"), nullptr);
}

TEST(IoProfileTest, ReadsVersionOneAsOneUnrecordedBlock) {
  // Version 1 (before block sizes): the grids sit in the device itself.
  const char* text = R"({
    "format": "cairn-io-profile", "version": 1,
    "cpu": {"frequencies_khz": [0], "cores": 2},
    "power": {"source": "rapl"},
    "devices": [{"name": "nvme0", "parallelism": [1, 2],
                 "read":  {"throughput_bps": [[2e9, 3e9]], "watts": [[30, 35]]},
                 "write": {"throughput_bps": [[1e9, 1.5e9]], "watts": [[31, 36]]}}]
  })";
  auto p = ParseIoProfile(text);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->devices[0].blocks.size(), 1u);
  EXPECT_EQ(p->devices[0].blocks[0].block_size, 0u);
  EXPECT_EQ(IoProfilePoint(*p, p->devices[0], IoOp::kWrite, 0, 1, 0).watts, 36);
  // Written back, it is version 2 and reads back the same.
  std::string v2 = SerializeIoProfile(*p);
  EXPECT_NE(v2.find("\"version\": 2"), std::string::npos) << v2;
  auto back = ParseIoProfile(v2);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(SerializeIoProfile(*back), v2);
  // Each version has its own device members.
  std::string mixed = text;
  mixed.replace(mixed.find("\"version\": 1"), 12, "\"version\": 2");
  auto rejected = ParseIoProfile(mixed);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("unknown member \"read\""), std::string::npos)
      << rejected.status().message();
  std::string v1_kind = text;
  v1_kind.replace(v1_kind.find("\"parallelism\""), 0, "\"parallelism_kind\": \"threads\", ");
  rejected = ParseIoProfile(v1_kind);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.status().message().find("unknown member \"parallelism_kind\""),
            std::string::npos)
      << rejected.status().message();
}

// Applies `edit` to the JSON of SmallProfile and expects ParseIoProfile to
// fail with `code` and a message containing `needle`.
void ExpectRejected(void (*edit)(Json&), Code code, const std::string& needle) {
  Json root = Json::parse(SerializeIoProfile(SmallProfile()));
  edit(root);
  auto p = ParseIoProfile(root.dump(2), "p.json");
  ASSERT_FALSE(p.ok()) << "accepted an edit expected to fail with: " << needle;
  EXPECT_EQ(p.status().code(), code) << p.status().message();
  EXPECT_NE(p.status().message().find("I/O profile 'p.json': "), std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find(needle), std::string::npos) << p.status().message();
}

Json& Dev(Json& root) { return root["devices"][0]; }
Json& Block(Json& root) { return Dev(root)["blocks"][0]; }

TEST(IoProfileTest, RejectsBadDocuments) {
  ExpectRejected([](Json& r) { r["format"] = "other"; }, Code::kCorrupt, "/format: is \"other\"");
  ExpectRejected([](Json& r) { r["version"] = 3; }, Code::kUnsupported, "version 3");
  ExpectRejected([](Json& r) { r["version"] = 0; }, Code::kUnsupported, "version 0");
  ExpectRejected([](Json& r) { r["extra"] = 1; }, Code::kCorrupt, "/: unknown member \"extra\"");
  ExpectRejected([](Json& r) { r["cpu"]["cores"] = 1.5; }, Code::kCorrupt, "/cpu/cores");
  ExpectRejected([](Json& r) { r["cpu"]["cores"] = "4"; }, Code::kCorrupt,
                 "/cpu/cores: expected an integer, got string");
  ExpectRejected([](Json& r) { r["power"]["source"] = "meter"; }, Code::kCorrupt,
                 "/power/source: is \"meter\"");
  ExpectRejected([](Json& r) { Dev(r)["name"] = "../x"; }, Code::kInvalidArgument,
                 "/devices/0/name");
  ExpectRejected([](Json& r) { Dev(r)["parallelism"] = {4, 1}; }, Code::kInvalidArgument,
                 "ascending");
  ExpectRejected([](Json& r) { Dev(r)["parallelism"] = {0, 4}; }, Code::kCorrupt,
                 "/devices/0/parallelism/0");
  ExpectRejected([](Json& r) { Block(r)["write"]["throughput_bps"] = Json::array({{1, 2}}); },
                 Code::kInvalidArgument, "/devices/0/blocks/0/write/throughput_bps: has 1 rows");
  ExpectRejected([](Json& r) { Block(r)["read"]["throughput_bps"] = {{1, 0}, {1, 2}}; },
                 Code::kInvalidArgument, "/devices/0/blocks/0/read/throughput_bps/0/1");
  ExpectRejected([](Json& r) { Block(r)["read"]["busy_cores"] = {{1, 5}, {1, 2}}; },
                 Code::kInvalidArgument,
                 "/devices/0/blocks/0/read/busy_cores/0/1");  // more than 4 cores
  ExpectRejected([](Json& r) { Block(r)["read"].erase("busy_cores"); }, Code::kInvalidArgument,
                 "busy_cores");  // table power needs busy cores
  ExpectRejected([](Json& r) { r["power"]["source"] = "rapl"; }, Code::kInvalidArgument,
                 "watts");  // RAPL power needs watts
  ExpectRejected([](Json& r) { r["power"]["idle_w"] = {1}; }, Code::kInvalidArgument,
                 "/power/idle_w");
  ExpectRejected([](Json& r) { r["cpu"]["frequencies_khz"] = {2, 1}; }, Code::kInvalidArgument,
                 "ascending");
  ExpectRejected([](Json& r) { r["cpu"]["frequencies_khz"] = {0, 1}; }, Code::kInvalidArgument,
                 "0 (unknown)");
  ExpectRejected([](Json& r) { r["devices"] = Json::array(); }, Code::kInvalidArgument,
                 "/devices");
  ExpectRejected([](Json& r) { r["devices"].push_back(Dev(r)); }, Code::kInvalidArgument,
                 "appears twice");
  ExpectRejected([](Json& r) { Dev(r)["parallelism_kind"] = "cores"; }, Code::kCorrupt,
                 "/devices/0/parallelism_kind: is \"cores\"");
  ExpectRejected([](Json& r) { Dev(r)["parallelism_kind"] = 2; }, Code::kCorrupt,
                 "/devices/0/parallelism_kind: expected a string");
  ExpectRejected([](Json& r) { Dev(r)["active_w"] = {{"read", -1}}; }, Code::kInvalidArgument,
                 "/devices/0/active_w/read");
  ExpectRejected([](Json& r) { Block(r).erase("write"); }, Code::kCorrupt,
                 "/devices/0/blocks/0: missing member \"write\"");
  ExpectRejected([](Json& r) { Dev(r).erase("blocks"); }, Code::kCorrupt,
                 "missing member \"blocks\"");
  ExpectRejected([](Json& r) { Block(r)["block_size"] = 1.5; }, Code::kCorrupt,
                 "/devices/0/blocks/0/block_size");
  ExpectRejected([](Json& r) { Block(r)["block_size"] = 1e12; }, Code::kCorrupt,
                 "/devices/0/blocks/0/block_size");
  ExpectRejected([](Json& r) { Block(r)["block_size"] = -1; }, Code::kCorrupt,
                 "/devices/0/blocks/0/block_size");
  auto malformed = ParseIoProfile("{\"format\": ", "p.json");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), Code::kCorrupt);
  EXPECT_NE(malformed.status().message().find("I/O profile 'p.json': not valid JSON: "),
            std::string::npos)
      << malformed.status().message();
  EXPECT_NE(malformed.status().message().find("line 1"), std::string::npos);
  auto repeated = ParseIoProfile(R"({"format": "cairn-io-profile", "format": "x"})", "p.json");
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("member \"format\" appears twice"), std::string::npos)
      << repeated.status().message();
}

}  // namespace
}  // namespace cairn
