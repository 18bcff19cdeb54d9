#include "env/env.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

// Runs every test against the POSIX env (in a fresh temporary directory) and
// the in-memory env, so both keep the same contract.
class EnvTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      env_ = PosixEnv();
      char tmpl[] = "/tmp/cairn-env-test-XXXXXX";
      ASSERT_NE(::mkdtemp(tmpl), nullptr);
      root_ = tmpl;
    } else {
      owned_ = NewMemEnv();
      env_ = owned_.get();
      root_ = "/mem";
      ASSERT_TRUE(env_->CreateDirs(root_).ok());
    }
  }
  void TearDown() override { (void)env_->DeleteRecursive(root_); }

  std::unique_ptr<Env> owned_;
  Env* env_ = nullptr;
  std::string root_;
};

TEST_P(EnvTest, WriteReadRoundTrip) {
  std::string path = JoinPath(root_, "a");
  std::string data(100000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  for (bool direct : {false, true}) {
    {
      auto file = env_->NewWritableFile(path, WriteOptions{direct, 0});
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      ASSERT_TRUE((*file)->Append(data.data(), 5000).ok());
      ASSERT_TRUE((*file)->Append(data.data() + 5000, data.size() - 5000).ok());
      ASSERT_TRUE((*file)->Sync().ok());
      ASSERT_TRUE((*file)->Close().ok());
    }
    auto back = env_->ReadFileToString(path);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, data) << "direct=" << direct;
  }
}

TEST_P(EnvTest, ShortReadIsCorrupt) {
  std::string path = JoinPath(root_, "short");
  ASSERT_TRUE(env_->WriteFileAtomic(path, "abc", 3, true).ok());
  auto file = env_->NewReadableFile(path);
  ASSERT_TRUE(file.ok());
  char buf[8];
  EXPECT_EQ((*file)->ReadAt(0, buf, 8).code(), Code::kCorrupt);
  EXPECT_TRUE((*file)->ReadAt(1, buf, 2).ok());
  EXPECT_EQ(std::memcmp(buf, "bc", 2), 0);
}

TEST_P(EnvTest, MissingFileIsNotFound) {
  EXPECT_EQ(env_->NewReadableFile(JoinPath(root_, "none")).status().code(), Code::kNotFound);
  EXPECT_EQ(env_->ListDir(JoinPath(root_, "none")).status().code(), Code::kNotFound);
  EXPECT_EQ(env_->FileSize(JoinPath(root_, "none")).status().code(), Code::kNotFound);
}

TEST_P(EnvTest, DirectoriesListAndDelete) {
  ASSERT_TRUE(env_->CreateDirs(JoinPath(root_, "x/y/z")).ok());
  ASSERT_TRUE(env_->WriteFileAtomic(JoinPath(root_, "x/f"), "1", 1, false).ok());
  auto entries = env_->ListDir(JoinPath(root_, "x"));
  ASSERT_TRUE(entries.ok());
  std::vector<std::string> names;
  for (const auto& e : *entries) names.push_back(e.name + (e.is_dir ? "/" : ""));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"f", "y/"}));
  ASSERT_TRUE(env_->DeleteRecursive(JoinPath(root_, "x")).ok());
  EXPECT_FALSE(env_->FileExists(JoinPath(root_, "x")));
}

TEST_P(EnvTest, AtomicWriteReplaces) {
  std::string path = JoinPath(root_, "m");
  ASSERT_TRUE(env_->WriteFileAtomic(path, "old", 3, true).ok());
  ASSERT_TRUE(env_->WriteFileAtomic(path, "newer", 5, true).ok());
  EXPECT_EQ(*env_->ReadFileToString(path), "newer");
  auto entries = env_->ListDir(root_);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->size(), 1u) << "temporary file left behind";
}

// Threads of one process replacing the same file never share a temporary
// file: every write succeeds and the file ends whole, as one of them wrote it.
TEST_P(EnvTest, ConcurrentAtomicWritesOfOneFileStayWhole) {
  const std::string path = JoinPath(root_, "shared");
  constexpr int kWriters = 4;
  std::vector<std::string> contents;
  for (int i = 0; i < kWriters; ++i) contents.push_back(std::string(64 * 1024, char('a' + i)));
  std::vector<Status> results(kWriters);
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      for (int round = 0; round < 20 && results[i].ok(); ++round) {
        results[i] = env_->WriteFileAtomic(path, contents[i].data(), contents[i].size(), false);
      }
    });
  }
  for (auto& w : writers) w.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  auto bytes = env_->ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(std::find(contents.begin(), contents.end(), *bytes), contents.end());
  auto entries = env_->ListDir(root_);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(entries->size(), 1u) << "a temporary file was left behind";
}

TEST_P(EnvTest, MapFileWritesReachFile) {
  std::string path = JoinPath(root_, "map");
  {
    auto map = env_->MapFile(path, 8192, true);
    ASSERT_TRUE(map.ok()) << map.status().ToString();
    std::memset((*map)->data(), 'q', 8192);
    ASSERT_TRUE((*map)->Sync().ok());
  }
  EXPECT_EQ(*env_->FileSize(path), 8192u);
  auto map = env_->MapFile(path, 0, false);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ((*map)->data()[8191], 'q');
}

TEST_P(EnvTest, PopulateKeepsTheBytes) {
  // Ranges that start and end inside a page, and one beyond the end.
  std::string path = JoinPath(root_, "populate");
  constexpr uint64_t kBytes = 5 * 4096 + 123;
  {
    auto map = env_->MapFile(path, kBytes, true);
    ASSERT_TRUE(map.ok()) << map.status().ToString();
    for (uint64_t i = 0; i < kBytes; ++i) (*map)->data()[i] = static_cast<uint8_t>(i * 7);
    for (auto [offset, n] : {std::pair<uint64_t, uint64_t>{100, 3 * 4096}, {0, kBytes},
                             {kBytes - 10, 1 << 20}, {kBytes + 1, 10}}) {
      Status s = (*map)->Populate(offset, n);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }
  auto map = env_->MapFile(path, 0, false);
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE((*map)->Populate(0, kBytes).ok());
  for (uint64_t i = 0; i < kBytes; ++i) {
    ASSERT_EQ((*map)->data()[i], static_cast<uint8_t>(i * 7)) << "byte " << i;
  }
}

TEST_P(EnvTest, SetLengthResizesTheFileAndKeepsTheMapping) {
  std::string path = JoinPath(root_, "slot");
  constexpr uint64_t kBytes = 4 * 4096;
  auto map = env_->MapFile(path, kBytes, true);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  uint8_t* data = (*map)->data();
  std::memset(data, 'x', kBytes);
  ASSERT_TRUE((*map)->SetLength(4096 + 10).ok());
  EXPECT_EQ(*env_->FileSize(path), 4096u + 10);
  EXPECT_EQ((*map)->size(), kBytes);  // the mapping stays
  EXPECT_EQ((*map)->data(), data);
  ASSERT_TRUE((*map)->SetLength(kBytes).ok());
  EXPECT_EQ(*env_->FileSize(path), kBytes);
  std::memset(data + 4096 + 10, 'y', kBytes - 4096 - 10);  // the regrown tail is writable
  EXPECT_EQ(data[4096 + 9], 'x');
  Status too_long = (*map)->SetLength(kBytes + 1);
  EXPECT_FALSE(too_long.ok());
  map->reset();
  EXPECT_EQ(*env_->ReadFileUpTo(path, kBytes),
            std::string(4096 + 10, 'x') + std::string(kBytes - 4096 - 10, 'y'));
}

INSTANTIATE_TEST_SUITE_P(PosixAndMem, EnvTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Posix" : "Mem"; });

// A procfs-like file: reports size 0, reads fine up to its real length.
class PseudoFileEnv : public EnvWrapper {
 public:
  PseudoFileEnv(Env* target, std::string contents) : EnvWrapper(target), contents_(std::move(contents)) {}
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override {
    struct File : ReadableFile {
      std::string data, name;
      Status ReadAt(uint64_t offset, void* dst, size_t n) const override {
        if (offset + n > data.size()) return Error(Code::kCorrupt, "short read");
        std::memcpy(dst, data.data() + offset, n);
        return Status::Ok();
      }
      uint64_t size() const override { return 0; }
      const std::string& path() const override { return name; }
    };
    auto f = std::make_unique<File>();
    f->data = contents_;
    f->name = path;
    return std::unique_ptr<ReadableFile>(std::move(f));
  }

 private:
  std::string contents_;
};

TEST(PseudoFileTest, FindsTheRealLengthBeyondAPage) {
  auto mem = NewMemEnv();
  std::string big(10000, 'p');
  PseudoFileEnv env(mem.get(), big);
  auto text = env.ReadPseudoFile("/proc/cpuinfo");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, big);
  EXPECT_EQ(env.ReadPseudoFile("/proc/cpuinfo", 5000).status().code(), Code::kUnsupported);
  PseudoFileEnv empty(mem.get(), "");
  EXPECT_EQ(*empty.ReadPseudoFile("/proc/x"), "");
}

TEST_P(EnvTest, ReadFileUpToRefusesLongerFiles) {
  std::string path = JoinPath(root_, "config.toml");
  ASSERT_TRUE(env_->WriteFileAtomic(path, "0123456789", 10, false).ok());
  auto whole = env_->ReadFileUpTo(path, 10);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(*whole, "0123456789");
  auto longer = env_->ReadFileUpTo(path, 9);
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status().code(), Code::kInvalidArgument);
  EXPECT_NE(longer.status().message().find(path), std::string::npos);
}

// A FIFO where a config or manifest belongs made readers wait forever for a
// writer; anything but a regular file is refused at once, naming what it is.
TEST(PosixEnvTest, NonRegularFilesAreRefusedWithoutHanging) {
  char tmpl[] = "/tmp/cairn-env-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string root = tmpl;
  std::string fifo = JoinPath(root, "fifo.toml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  struct Case {
    std::string path, kind;
  } cases[] = {{fifo, "a FIFO"}, {root, "a directory"}, {"/dev/zero", "a character device"}};
  for (const auto& c : cases) {
    auto text = PosixEnv()->ReadFileUpTo(c.path, 1 << 20);
    ASSERT_FALSE(text.ok()) << c.path;
    EXPECT_EQ(text.status().code(), Code::kInvalidArgument);
    EXPECT_NE(text.status().message().find(c.path), std::string::npos) << text.status().message();
    EXPECT_NE(text.status().message().find(c.kind), std::string::npos) << text.status().message();
  }
  (void)PosixEnv()->DeleteRecursive(root);
}

// Absolute paths of absolute input are the same in both envs: lexical
// resolution of `.`, `..` and slashes; the real file system is not asked.
TEST_P(EnvTest, AbsolutePathResolvesLexically) {
  EXPECT_EQ(*env_->AbsolutePath("/a//b/./c/../d/"), "/a/b/d");
  EXPECT_EQ(*env_->AbsolutePath("/../x"), "/x");
  EXPECT_EQ(*env_->AbsolutePath("/"), "/");
  std::string missing = JoinPath(root_, "no/such/../dir");
  EXPECT_EQ(*env_->CanonicalPath(missing), root_ + "/no/dir");
}

TEST(MemEnvTest, RelativePathsHangBelowRoot) {
  auto env = NewMemEnv();
  EXPECT_EQ(*env->AbsolutePath("./cairn-data"), "/cairn-data");
  EXPECT_EQ(*env->CanonicalPath("a/../b/"), "/b");
}

// A relative path resolves against the working directory, symlinks as far
// as the path exists; a removed working directory is an error naming the
// path, not an exception.
TEST(PosixEnvTest, PathsResolveAgainstTheWorkingDirectoryAndSymlinks) {
  char tmpl[] = "/tmp/cairn-env-test-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string root = *PosixEnv()->CanonicalPath(tmpl);  // /tmp may be a link itself
  ASSERT_TRUE(PosixEnv()->CreateDirs(root + "/real").ok());
  ASSERT_EQ(::symlink((root + "/real").c_str(), (root + "/link").c_str()), 0);
  EXPECT_EQ(*PosixEnv()->CanonicalPath(root + "/link/new/x"), root + "/real/new/x");
  EXPECT_EQ(*PosixEnv()->AbsolutePath(root + "/link/x"), root + "/link/x");

  int cwd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cwd, 0);
  ASSERT_EQ(::chdir((root + "/link").c_str()), 0);
  auto relative = PosixEnv()->CanonicalPath("sub/../y");
  ASSERT_EQ(::chdir((root + "/real").c_str()), 0);
  ASSERT_EQ(::rmdir((root + "/real").c_str()), 0);
  auto gone = PosixEnv()->AbsolutePath("./cairn-data");
  ASSERT_EQ(::fchdir(cwd), 0);
  ::close(cwd);
  ASSERT_TRUE(relative.ok()) << relative.status().ToString();
  EXPECT_EQ(*relative, root + "/real/y");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kIo);
  EXPECT_NE(gone.status().message().find("./cairn-data"), std::string::npos)
      << gone.status().message();
  (void)PosixEnv()->DeleteRecursive(root);
}

// A thread runs with the name and the added nice value it was started
// with, in both environments (the in-memory one has real threads too);
// nice adds to the starter's and stops at 19.
TEST_P(EnvTest, ThreadsRunNamedAndNiced) {
  errno = 0;
  const int starter = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  ASSERT_EQ(errno, 0);
  for (int nice : {0, 3, 40}) {
    char name[16] = {};
    int priority = -100;
    auto thread = env_->StartThread(ThreadOptions{.name = "cairn-test-thread-long", .nice = nice},
                                    [&] {
                                      pthread_getname_np(pthread_self(), name, sizeof name);
                                      priority = getpriority(PRIO_PROCESS,
                                                             static_cast<id_t>(gettid()));
                                    });
    ASSERT_TRUE(thread.ok()) << thread.status().ToString();
    (*thread)->Join();
    EXPECT_STREQ(name, "cairn-test-thre");  // the kernel's 15 characters
    EXPECT_EQ(priority, std::min(19, starter + nice)) << "nice " << nice;
  }
}

TEST(PathTest, Helpers) {
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/c"), "/");
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
}

}  // namespace
}  // namespace cairn
