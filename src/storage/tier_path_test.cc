#include "storage/tier_path.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "env/env.h"

namespace cairn {
namespace {

// A fresh directory under /tmp, removed with everything in it at the end.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/cairn-tier-path-XXXXXX";
    path_ = ::mkdtemp(tmpl) != nullptr ? tmpl : "";
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Config ConfigWithPaths(const std::string& memory, const std::string& ssd, const std::string& pfs) {
  Config config;
  config.dir = "/scratch/job";
  config.tier(TierKind::kMemory).path = memory;
  config.tier(TierKind::kSsd).path = ssd;
  config.tier(TierKind::kPfs).path = pfs;
  return config;
}

void ExpectOverlap(const Config& config, const std::string& first_key,
                   const std::string& second_key, const std::string& path) {
  auto roots = ExpandTierRoots(PosixEnv(), config, "3");
  ASSERT_FALSE(roots.ok()) << path;
  EXPECT_EQ(roots.status().code(), Code::kConfig);
  for (const std::string& part : {first_key, second_key, path, std::string("node 3")}) {
    EXPECT_NE(roots.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << roots.status().message();
  }
}

TEST(TierPathTest, ExpandsEveryPlaceholder) {
  auto path = ExpandTierPath(PosixEnv(), "{dir}/x/{user}/{dirkey}/{node}", "/scratch/job", "7");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(path->rfind("/scratch/job/x/", 0), 0u) << *path;
  EXPECT_EQ(path->substr(path->size() - 2), "/7");
  EXPECT_EQ(path->find('{'), std::string::npos) << *path;
  // {dirkey} names the directory, however it is spelt.
  auto key = [](const std::string& dir) {
    return *ExpandTierPath(PosixEnv(), "{dirkey}", dir, "0");
  };
  EXPECT_EQ(key("/scratch/job"), key("/scratch/job/"));
  EXPECT_EQ(key("/scratch/job"), key("/scratch/other/../job"));
  EXPECT_NE(key("/scratch/job"), key("/scratch/job2"));
  EXPECT_EQ(key("/scratch/job").size(), 8u);
  EXPECT_EQ(*TierPathNodeParent(PosixEnv(), "{dir}/ssd/{node}", "/s"), "/s/ssd");
  EXPECT_EQ(*TierPathNodeParent(PosixEnv(), "{dir}/pfs", "/s"), "");
}

// std::filesystem::absolute threw (through the C API) when the working
// directory had been removed and {dir} was relative, as by default.
TEST(TierPathTest, RemovedWorkingDirectoryIsAnError) {
  int cwd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cwd, 0);
  {
    ScratchDir gone;
    ASSERT_EQ(::chdir(gone.path().c_str()), 0);
    ASSERT_EQ(::rmdir(gone.path().c_str()), 0);
    auto path =
        ExpandTierPath(PosixEnv(), "/dev/shm/cairn-{user}/{dirkey}/{node}", "./cairn-data", "0");
    Config defaults =
        ConfigWithPaths("/dev/shm/cairn-{user}/{dirkey}/{node}", "{dir}/ssd/{node}", "{dir}/pfs");
    defaults.dir = "./cairn-data";
    auto roots = ExpandTierRoots(PosixEnv(), defaults, "0");
    ASSERT_EQ(::fchdir(cwd), 0);
    ASSERT_FALSE(path.ok());
    EXPECT_EQ(path.status().code(), Code::kIo);
    EXPECT_NE(path.status().message().find("./cairn-data"), std::string::npos)
        << path.status().message();
    ASSERT_FALSE(roots.ok());
    EXPECT_NE(roots.status().message().find("./cairn-data"), std::string::npos)
        << roots.status().message();
  }
  ::close(cwd);
}

TEST(TierPathTest, DisjointTiersExpand) {
  auto roots = ExpandTierRoots(
      PosixEnv(), ConfigWithPaths("/m/{node}", "{dir}/ssd/{node}", "{dir}/ssd2"), "3");
  ASSERT_TRUE(roots.ok()) << roots.status().ToString();
  EXPECT_EQ((*roots)[static_cast<int>(TierKind::kMemory)], "/m/3");
  EXPECT_EQ((*roots)[static_cast<int>(TierKind::kPmem)], "");  // disabled by default
  EXPECT_EQ((*roots)[static_cast<int>(TierKind::kSsd)], "/scratch/job/ssd/3");
  EXPECT_EQ((*roots)[static_cast<int>(TierKind::kPfs)], "/scratch/job/ssd2");
  // A disabled tier may share a path: it is never opened.
  Config config = ConfigWithPaths("{dir}/a", "{dir}/a", "{dir}/pfs");
  config.tier(TierKind::kSsd).enabled = false;
  auto one = ExpandTierRoots(PosixEnv(), config, "0");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)[1], "");
}

// The first drain deleted the only copy when two tiers shared a directory.
TEST(TierPathTest, OverlappingTiersAreAConfigError) {
  ExpectOverlap(ConfigWithPaths("{dir}/t/{node}", "{dir}/t/{node}", "/p"), "tiers.memory.path",
                "tiers.ssd.path", "/scratch/job/t/3");
  ExpectOverlap(ConfigWithPaths("/m", "{dir}/ssd/{node}", "{dir}"), "tiers.ssd.path",
                "tiers.pfs.path", "/scratch/job/ssd/3");
  ExpectOverlap(ConfigWithPaths("{dir}/x/../ssd/{node}/", "{dir}/ssd/{node}", "/p"),
                "tiers.memory.path", "tiers.ssd.path", "/scratch/job/ssd/3");
  ExpectOverlap(ConfigWithPaths("/m//a/", "/m/a/{node}", "/p"), "tiers.memory.path",
                "tiers.ssd.path", "/m/a/3");
  ExpectOverlap(ConfigWithPaths("/", "/m/{node}", "/p"), "tiers.memory.path", "tiers.ssd.path",
                "/m/3");
}

TEST(TierPathTest, OverlapThroughASymlinkIsFound) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty());
  std::string real = scratch.path() + "/real";
  std::string link = scratch.path() + "/link";
  ASSERT_TRUE(std::filesystem::create_directory(real));
  std::filesystem::create_directory_symlink(real, link);
  ExpectOverlap(ConfigWithPaths(link + "/tier", real + "/tier/{node}", "/p"), "tiers.memory.path",
                "tiers.ssd.path", real + "/tier/3");
}

// Paths resolve through the Env: an in-memory env has no working directory
// (a relative data directory hangs below "/") and never asks the real file
// system, whose working directory and symlinks are not its business.
TEST(TierPathTest, PathsResolveThroughTheEnv) {
  auto env = NewMemEnv();
  Config config = ConfigWithPaths("{dir}/m/{node}", "{dir}/ssd/{node}", "{dir}/x/../m");
  config.dir = "./cairn-data";
  auto roots = ExpandTierRoots(env.get(), config, "3");
  ASSERT_FALSE(roots.ok());
  EXPECT_NE(roots.status().message().find("'./cairn-data/x/../m' (that is '/cairn-data/m')"),
            std::string::npos)
      << roots.status().message();
  auto key = [&](const std::string& dir) {
    return *ExpandTierPath(env.get(), "{dirkey}", dir, "0");
  };
  EXPECT_EQ(key("cairn-data"), key("/cairn-data"));
  EXPECT_EQ(key("./a/../cairn-data/"), key("/cairn-data"));
}

}  // namespace
}  // namespace cairn
