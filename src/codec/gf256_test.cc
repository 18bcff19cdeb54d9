#include "codec/gf256.h"

#include <isa-l/erasure_code.h>

#include <gtest/gtest.h>

namespace cairn {
namespace {

TEST(Gf256Test, MulMatchesReferenceAndIsal) {
  for (unsigned a = 0; a < 256; ++a) {
    for (unsigned b = 0; b < 256; ++b) {
      const uint8_t x = static_cast<uint8_t>(a), y = static_cast<uint8_t>(b);
      const uint8_t want = gf256::MulBase(x, y);
      ASSERT_EQ(gf256::Mul(x, y), want) << a << " * " << b;
      // Same field as ISA-L: parity we compute agrees with ec_encode_data.
      ASSERT_EQ(gf_mul(x, y), want) << a << " * " << b;
    }
  }
}

TEST(Gf256Test, InverseDivisionAndLogs) {
  for (unsigned a = 1; a < 256; ++a) {
    const uint8_t x = static_cast<uint8_t>(a);
    EXPECT_EQ(gf256::MulBase(x, gf256::Inv(x)), 1) << a;
    EXPECT_EQ(gf256::Inv(x), gf_inv(x)) << a;
    EXPECT_EQ(gf256::Exp(gf256::Log(x)), x) << a;
    for (unsigned b = 1; b < 256; b += 7) {
      const uint8_t y = static_cast<uint8_t>(b);
      EXPECT_EQ(gf256::MulBase(gf256::Div(x, y), y), x) << a << " / " << b;
    }
  }
  EXPECT_EQ(gf256::Div(0, 5), 0);
}

TEST(Gf256Test, AlphaIsPrimitive) {
  // alpha = 2 generates all 255 nonzero elements: the locators alpha^j of a
  // code up to 255 long are distinct.
  std::array<bool, 256> seen{};
  for (unsigned e = 0; e < 255; ++e) {
    const uint8_t x = gf256::ExpBase(e);
    ASSERT_EQ(gf256::Exp(e), x) << e;
    ASSERT_FALSE(seen[x]) << "alpha^" << e << " repeats";
    seen[x] = true;
  }
  EXPECT_FALSE(seen[0]);
  EXPECT_EQ(gf256::Exp(255), 1);
}

}  // namespace
}  // namespace cairn
