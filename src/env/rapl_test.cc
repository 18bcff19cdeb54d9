#include "env/rapl.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "env/fake_sysfs.h"

namespace cairn {
namespace {

TEST(RaplTest, EnergyDeltaHandlesWrapAround) {
  EXPECT_EQ(EnergyDeltaUj(100, 350, 1000), 250u);
  EXPECT_EQ(EnergyDeltaUj(900, 100, 1000), 200u);  // 900 -> 1000 = 0 -> 100
  EXPECT_EQ(EnergyDeltaUj(5, 5, 1000), 0u);
}

TEST(RaplTest, RaplReadsPackageAndDramAndUnwraps) {
  auto mem = NewMemEnv();
  FakeRapl(mem.get());
  RaplMeter m = RaplMeter::Open(mem.get(), "/sys");
  ASSERT_TRUE(m.available()) << m.reason();
  EXPECT_EQ(m.zone_names(), (std::vector<std::string>{"package-0", "dram"}));
  auto before = m.Read();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, (std::vector<uint64_t>{999000000, 10}));
  // package wraps: 999000000 -> 1e9 -> 500000 = 1.5 J; dram 10 -> 2000010 = 2 J.
  Put(mem.get(), "/sys/class/powercap/intel-rapl:0/energy_uj", "500000\n");
  Put(mem.get(), "/sys/class/powercap/intel-rapl:1/energy_uj", "2000010\n");
  auto after = m.Read();
  ASSERT_TRUE(after.ok());
  EXPECT_NEAR(m.JoulesBetween(*before, *after), 3.5, 1e-9);
}

TEST(RaplTest, RaplUnavailableSaysWhy) {
  auto mem = NewMemEnv();
  RaplMeter m = RaplMeter::Open(mem.get(), "/sys");
  EXPECT_FALSE(m.available());
  EXPECT_NE(m.reason().find("powercap"), std::string::npos) << m.reason();
}

}  // namespace
}  // namespace cairn
