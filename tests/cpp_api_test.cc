// The C++ API over the same engine: typed regions, Status, the session's
// lifetime, and a restart round trip.
#define CAIRN_NO_MPI
#include "cairn/cairn.hpp"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

namespace {

TEST(CppApiTest, RoundTripAndErrors) {
  // Only the public header here: the library's internals are not visible.
  char tmpl[] = "/tmp/cairn-cpp-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  std::string config = dir + "/c.toml";
  FILE* f = std::fopen(config.c_str(), "w");
  std::fprintf(f, "[general]\ndir = \"%s\"\nlog_level = \"off\"\n[tiers.memory]\npath = \"%s/shm/{node}\"\n",
               dir.c_str(), dir.c_str());
  std::fclose(f);
  std::vector<float> field(4096);
  for (size_t i = 0; i < field.size(); ++i) field[i] = static_cast<float>(i) * 0.5f;
  {
    cairn::Status status;
    auto session = cairn::Session::InitSingle(config, &status);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(session->Protect(0, field).ok());
    cairn::Status bad = session->Checkpoint("../escape", 1);
    EXPECT_EQ(bad.code(), CAIRN_E_INVALID_ARGUMENT);
    EXPECT_NE(bad.message().find("../escape"), std::string::npos);
    EXPECT_TRUE(session->Checkpoint("field", 1).ok());
  }  // the destructor finalizes
  std::vector<float> restored(4096, -1.0f);
  cairn::Status status;
  auto session = cairn::Session::InitSingle(config, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(session->Protect(0, restored).ok());
  EXPECT_EQ(session->RestartTest("field"), 1);
  int version = -1;
  ASSERT_TRUE(session->Restart("field", 1, &version).ok());
  EXPECT_EQ(version, 1);
  EXPECT_EQ(restored, field);
  EXPECT_TRUE(session->Finalize().ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
