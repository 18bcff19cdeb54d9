#include "model/stated_profile.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace cairn {
namespace {

constexpr int kRead = static_cast<int>(IoOp::kRead);
constexpr int kWrite = static_cast<int>(IoOp::kWrite);

IoProfile SlidesProfile() {
  auto p = BuildStatedProfile(SlidesNode(), {StatedSsd(), StatedIoDrive()});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : IoProfile();
}

size_t ArgMax(const std::vector<double>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST(StatedProfileTest, ShapeAndValidity) {
  IoProfile p = SlidesProfile();
  ASSERT_TRUE(ValidateIoProfile(p).ok());
  EXPECT_EQ(p.frequencies_khz.size(), 5u);
  EXPECT_EQ(p.power_source, PowerSource::kTable);
  ASSERT_EQ(p.devices.size(), 2u);
  EXPECT_EQ(p.devices[1].name, "iodrive");
  EXPECT_EQ(p.devices[0].max_parallelism(), 48);
  EXPECT_EQ(p.devices[0].parallelism.size(), 48u);
}

TEST(StatedProfileTest, BestPointIsTheStatedFigure) {
  IoProfile p = SlidesProfile();
  const double stated[2][2] = {{270e6, 220e6}, {735e6, 510e6}};  // [device][op]
  for (int dev = 0; dev < 2; ++dev) {
    for (int op : {kRead, kWrite}) {
      const auto& top = p.devices[dev].blocks[0].ops[op].throughput_bps.back();  // f_max row
      double best = *std::max_element(top.begin(), top.end());
      EXPECT_NEAR(best / stated[dev][op], 1.0, 1e-12) << p.devices[dev].name << " op " << op;
      // And no frequency beats the highest one.
      for (const auto& row : p.devices[dev].blocks[0].ops[op].throughput_bps) {
        EXPECT_LE(*std::max_element(row.begin(), row.end()), best * (1 + 1e-12));
      }
    }
  }
}

TEST(StatedProfileTest, PointsMatchHandComputation) {
  IoProfile p = SlidesProfile();
  const DeviceIoProfile& ssd = p.devices[0];
  // core_busy_w(2.1 GHz) = (471.1 − 250) / 48 = 4.60625 W;
  // at 0.8 GHz × (0.8/2.1) × (0.9/1.2)² = 4.60625 × 0.380952 × 0.5625 = 0.987054 W.
  EXPECT_NEAR(p.core_busy_w.back(), 4.60625, 1e-12);
  EXPECT_NEAR(p.core_busy_w.front(), 0.987054, 1e-6);
  // SSD write, 2.1 GHz, 1 process: α = 1, B = 220 MB/s, throughput 220 MB/s;
  // busy = 220e6 · 0.05 / 220e6 = 0.05 cores; W = 250 + 0.05 · 4.60625 + 2.5
  // = 252.7303 W.
  IoPoint w = IoProfilePoint(p, ssd, IoOp::kWrite, 4, 0, 0);
  EXPECT_NEAR(w.throughput_bps, 220e6, 1e-3);
  EXPECT_NEAR(w.watts, 252.7303, 1e-4);
  // SSD read, 0.8 GHz, 1 process: slowdown 2.1/0.8 = 2.625;
  // α = 1 / (0.05 · 2.625 + 0.95) = 1 / 1.08125 = 0.924855;
  // throughput = 270e6 · 0.924855 = 249.711 MB/s;
  // busy = 249.711e6 · (0.05 / 270e6) · 2.625 = 0.121387 cores;
  // W = 250 + 0.121387 · 0.987054 + 2.5 = 252.61981 W.
  IoPoint r = IoProfilePoint(p, ssd, IoOp::kRead, 0, 0, 0);
  EXPECT_NEAR(r.throughput_bps / 1e6, 249.711, 1e-3);
  EXPECT_NEAR(r.watts, 252.61981, 1e-5);
  // SSD read, 2.1 GHz, 2 processes: (1 − 0²) / (1 + 0.02) = 0.980392 of 270.
  EXPECT_NEAR(IoProfilePoint(p, ssd, IoOp::kRead, 4, 1, 0).throughput_bps / 1e6, 264.706, 1e-3);
}

TEST(StatedProfileTest, ReproducesTheSlidesTrends) {
  IoProfile p = SlidesProfile();
  const DeviceIoProfile& ssd = p.devices[0];
  const DeviceIoProfile& iodrive = p.devices[1];
  for (int op : {kRead, kWrite}) {
    // SSD: one process is best; more only add contention.
    const auto& ssd_top = ssd.blocks[0].ops[op].throughput_bps.back();
    EXPECT_EQ(ArgMax(ssd_top), 0u);
    for (size_t i = 1; i < ssd_top.size(); ++i) EXPECT_LT(ssd_top[i], ssd_top[i - 1]) << i;
    // ioDrive: throughput rises up to 8 processes and falls beyond.
    const auto& io_top = iodrive.blocks[0].ops[op].throughput_bps.back();
    EXPECT_EQ(iodrive.parallelism[ArgMax(io_top)], 8) << "op " << op;
    // ioDrive: a lower frequency degrades throughput.
    for (size_t f = 1; f < p.frequencies_khz.size(); ++f) {
      const auto& slow = iodrive.blocks[0].ops[op].throughput_bps[f - 1];
      const auto& fast = iodrive.blocks[0].ops[op].throughput_bps[f];
      for (size_t i = 0; i < 8; ++i) EXPECT_LT(slow[i], fast[i]) << "f " << f << " i " << i;
      for (size_t i = 0; i < slow.size(); ++i) EXPECT_LE(slow[i], fast[i] * (1 + 1e-12));
    }
  }
  // Power: SSD I/O draws "over half" of W_A = 471.1 W; ioDrive I/O with
  // every process "almost the same" as computation.
  for (int op : {kRead, kWrite}) {
    for (size_t f = 0; f < 5; ++f) {
      for (size_t i = 0; i < 48; ++i) {
        EXPECT_GT(IoProfilePoint(p, ssd, static_cast<IoOp>(op), f, i, 0).watts, 471.1 / 2);
      }
    }
    double full = IoProfilePoint(p, iodrive, static_cast<IoOp>(op), 4, 47, 0).watts;
    EXPECT_GT(full, 0.9 * 471.1);
    EXPECT_LT(full, 471.1);
  }
}

TEST(StatedProfileTest, WorksWithoutDvfs) {
  StatedNode node = SlidesNode();
  node.frequencies_khz = {0};  // one frequency, not known
  node.max_parallelism = 4;
  auto p = BuildStatedProfile(node, {StatedIoDrive()});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->frequencies_khz.size(), 1u);
  EXPECT_NEAR(p->core_busy_w[0], 4.60625, 1e-12);
  EXPECT_EQ(p->devices[0].parallelism.size(), 4u);
}

TEST(StatedProfileTest, RejectsImpossibleFigures) {
  StatedNode node = SlidesNode();
  node.app_power_w = node.idle_w;
  EXPECT_EQ(BuildStatedProfile(node, {StatedSsd()}).status().code(), Code::kInvalidArgument);
  node = SlidesNode();
  node.frequencies_khz = {2100000, 800000};
  EXPECT_FALSE(BuildStatedProfile(node, {StatedSsd()}).ok());
  StatedDevice d = StatedSsd();
  d.single_stream_fraction = 0;
  EXPECT_FALSE(BuildStatedProfile(SlidesNode(), {d}).ok());
  d = StatedSsd();
  d.cpu_fraction = 1;
  EXPECT_FALSE(BuildStatedProfile(SlidesNode(), {d}).ok());
  d = StatedSsd();
  d.stated_bps[kWrite] = 0;
  EXPECT_FALSE(BuildStatedProfile(SlidesNode(), {d}).ok());
  EXPECT_FALSE(BuildStatedProfile(SlidesNode(), {}).ok());
  // Two devices with one name: the profile's own validation catches it.
  EXPECT_FALSE(BuildStatedProfile(SlidesNode(), {StatedSsd(), StatedSsd()}).ok());
  EXPECT_EQ(StatedDeviceByName("hdd").status().code(), Code::kNotFound);
  EXPECT_EQ(StatedDeviceByName("iodrive")->name, "iodrive");
}

}  // namespace
}  // namespace cairn
