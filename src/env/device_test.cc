#include "env/device.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "env/env.h"

namespace cairn {
namespace {

TEST(DeviceTest, FileAndItsDirectoryShareADevice) {
  char tmpl[] = "/tmp/cairn-device-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::string file = JoinPath(dir, "f");
  ASSERT_TRUE(PosixEnv()->WriteFileAtomic(file, "x", 1, false).ok());
  auto a = DeviceOf(dir);
  auto b = DeviceOf(file);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->ToString(), std::to_string(a->major) + ":" + std::to_string(a->minor));
  (void)PosixEnv()->DeleteRecursive(dir);
}

TEST(DeviceTest, MissingPathIsNotFound) {
  auto d = DeviceOf("/nonexistent/cairn/device/test");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::kNotFound);
  EXPECT_NE(d.status().message().find("/nonexistent/cairn/device/test"), std::string::npos);
}

TEST(DeviceTest, ProcIsAnonymous) {
  // procfs, like tmpfs and overlayfs, has no block device: major 0.
  auto d = DeviceOf("/proc/self");
  if (!d.ok()) GTEST_SKIP() << "no /proc here";
  EXPECT_TRUE(d->IsAnonymous()) << d->ToString();
}

}  // namespace
}  // namespace cairn
