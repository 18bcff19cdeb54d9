// No exception crosses the C API. This program is built from cairn_c.cc
// and the library's layers with its own OnEngineEntry (api/entry_hook.h),
// which throws what the test asks for at the moment an entry point hands
// control to the engine. Every entry point must then return an error code
// with a message, the process must keep running, and the library must stay
// usable (the instance lock released during unwinding).
#define CAIRN_NO_MPI
#include "cairn/cairn.h"
#include "cairn/pmem.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "api/entry_hook.h"

namespace {

enum class Throw { kNothing, kRuntimeError, kBadAlloc, kNotAnException };
Throw g_throw = Throw::kNothing;

}  // namespace

namespace cairn::api {

void OnEngineEntry(const char* call) {
  switch (g_throw) {
    case Throw::kNothing: return;
    case Throw::kRuntimeError: throw std::runtime_error(std::string("injected in ") + call);
    case Throw::kBadAlloc: throw std::bad_alloc();
    case Throw::kNotAnException: throw 42;
  }
}

}  // namespace cairn::api

namespace {

struct EntryPoint {
  const char* name;
  std::function<int()> call;
};

double g_data[64];

std::vector<EntryPoint> EntryPoints() {
  static char path[4096];
  return {
      {"cairn_protect", [] { return cairn_protect(0, g_data, 64, sizeof(double)); }},
      {"cairn_unprotect", [] { return cairn_unprotect(0); }},
      {"cairn_checkpoint", [] { return cairn_checkpoint("x", 1); }},
      {"cairn_checkpoint_flags", [] { return cairn_checkpoint_flags("x", 1, 0); }},
      {"cairn_last_checkpoint",
       [] {
         cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
         return cairn_last_checkpoint(&info);
       }},
      {"cairn_should_checkpoint", [] { return cairn_should_checkpoint(); }},
      {"cairn_checkpoint_wait", [] { return cairn_checkpoint_wait(); }},
      {"cairn_last_wait",
       [] {
         cairn_wait_info info = CAIRN_WAIT_INFO_INIT;
         return cairn_last_wait(&info);
       }},
      {"cairn_restart", [] { return cairn_restart("x", 1); }},
      {"cairn_last_restart",
       [] {
         cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
         return cairn_last_restart(&info);
       }},
      {"cairn_route_file", [] { return cairn_route_file("f", path, sizeof path); }},
      {"cairn_delete", [] { return cairn_delete("x"); }},
      {"cairn_delete_version", [] { return cairn_delete_version("x", 1); }},
      {"cairn_malloc_protected",
       [] { return cairn_malloc_protected(16) == nullptr ? cairn_last_error() : 0; }},
      {"cairn_free_protected", [] { return cairn_free_protected(nullptr); }},
      {"cairn_checkpoint_requested", [] { return cairn_checkpoint_requested(); }},
      {"cairn_checkpoint_point", [] { return cairn_checkpoint_point(); }},
      {"cairn_finalize", [] { return cairn_finalize(); }},
  };
}

// The entry points that need no instance (varray, pmem): the hook fires as
// their guard starts, before any argument is looked at.
std::vector<EntryPoint> StandaloneEntryPoints() {
  static cairn_varray_info varray_info = CAIRN_VARRAY_INFO_INIT;
  static cairn_pmem_array_info pmem_info = CAIRN_PMEM_ARRAY_INFO_INIT;
  static double value;
  static long long version;
  return {
      {"cairn_varray_create_single",
       [] {
         cairn_varray va = nullptr;
         return cairn_varray_create_single("a", 8, sizeof(double), nullptr, &va);
       }},
      {"cairn_varray_put", [] { return cairn_varray_put(nullptr, 0, 1, &value); }},
      {"cairn_varray_get", [] { return cairn_varray_get(nullptr, 0, 1, &value); }},
      {"cairn_varray_wait", [] { return cairn_varray_wait(nullptr); }},
      {"cairn_varray_get_version",
       [] { return cairn_varray_get_version(nullptr, 0, 0, 1, &value); }},
      {"cairn_varray_version_inc", [] { return cairn_varray_version_inc(nullptr); }},
      {"cairn_varray_version", [] { return cairn_varray_version(nullptr, &version); }},
      {"cairn_varray_restore", [] { return cairn_varray_restore(nullptr, 0); }},
      {"cairn_varray_info_get", [] { return cairn_varray_info_get(nullptr, &varray_info); }},
      {"cairn_varray_destroy",
       [] {
         cairn_varray va = nullptr;
         return cairn_varray_destroy(&va);
       }},
      {"cairn_pmem_array_commit", [] { return cairn_pmem_array_commit(nullptr); }},
      {"cairn_pmem_array_get_info",
       [] { return cairn_pmem_array_get_info(nullptr, &pmem_info); }},
      {"cairn_flush_init", [] { return cairn_flush_init(); }},
      {"cairn_flush_barrier", [] { return cairn_flush_barrier(); }},
      {"cairn_flush_finalize", [] { return cairn_flush_finalize(); }},
  };
}

class ExceptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cairn-exc-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    config_ = dir_ + "/c.toml";
    FILE* f = std::fopen(config_.c_str(), "w");
    std::fprintf(f, "[general]\ndir = \"%s\"\nlog_level = \"off\"\n[tiers.memory]\npath = \"%s/shm/{node}\"\n",
                 dir_.c_str(), dir_.c_str());
    std::fclose(f);
  }
  void TearDown() override {
    g_throw = Throw::kNothing;
    (void)cairn_finalize();
    std::filesystem::remove_all(dir_);
  }

  // Each entry point, with g_throw armed, returns `code` with a message
  // that names it and says `needle`.
  void ExpectEveryEntryPointReports(Throw what, int code, const std::string& needle) {
    ASSERT_EQ(cairn_init_single(config_.c_str()), CAIRN_SUCCESS)
        << cairn_error_message(CAIRN_LAST_ERROR);
    for (const EntryPoint& entry : EntryPoints()) {
      g_throw = what;
      int rc = entry.call();
      g_throw = Throw::kNothing;
      std::string message = cairn_error_message(CAIRN_LAST_ERROR);
      EXPECT_EQ(rc, code) << entry.name << ": " << message;
      EXPECT_EQ(cairn_last_error(), code) << entry.name;
      EXPECT_NE(message.find(entry.name), std::string::npos) << message;
      EXPECT_NE(message.find(needle), std::string::npos) << message;
    }
    for (const EntryPoint& entry : StandaloneEntryPoints()) {
      g_throw = what;
      int rc = entry.call();
      g_throw = Throw::kNothing;
      std::string message = cairn_error_message(CAIRN_LAST_ERROR);
      EXPECT_EQ(rc, code) << entry.name << ": " << message;
      EXPECT_NE(message.find(entry.name), std::string::npos) << message;
      EXPECT_NE(message.find(needle), std::string::npos) << message;
    }
    // cairn_restart_test reports only -1; the cause is the last error.
    g_throw = what;
    EXPECT_EQ(cairn_restart_test("x", -1), -1);
    g_throw = Throw::kNothing;
    EXPECT_EQ(cairn_last_error(), code);
    EXPECT_NE(std::string(cairn_error_message(CAIRN_LAST_ERROR)).find(needle), std::string::npos);
    // The lock was released on the way out: the library still works.
    EXPECT_EQ(cairn_protect(0, g_data, 64, sizeof(double)), CAIRN_SUCCESS);
    EXPECT_EQ(cairn_checkpoint("x", 2), CAIRN_SUCCESS) << cairn_error_message(CAIRN_LAST_ERROR);
    EXPECT_EQ(cairn_restart_test("x", -1), 2);
    EXPECT_EQ(cairn_finalize(), CAIRN_SUCCESS);
  }

  std::string dir_, config_;
};

TEST_F(ExceptionTest, StdExceptionBecomesInternalError) {
  ExpectEveryEntryPointReports(Throw::kRuntimeError, CAIRN_E_INTERNAL, "injected in cairn_");
}

TEST_F(ExceptionTest, BadAllocBecomesNoSpace) {
  ExpectEveryEntryPointReports(Throw::kBadAlloc, CAIRN_E_NO_SPACE, "out of memory");
}

TEST_F(ExceptionTest, AnythingElseBecomesInternalError) {
  ExpectEveryEntryPointReports(Throw::kNotAnException, CAIRN_E_INTERNAL, "unknown type");
}

TEST_F(ExceptionTest, InitThatThrowsLeavesCairnUninitialized) {
  for (Throw what : {Throw::kRuntimeError, Throw::kBadAlloc, Throw::kNotAnException}) {
    g_throw = what;
    int rc = cairn_init_single(config_.c_str());
    g_throw = Throw::kNothing;
    EXPECT_LT(rc, 0);
    EXPECT_NE(std::string(cairn_error_message(rc)).find("cairn_init_single"), std::string::npos);
    EXPECT_EQ(cairn_checkpoint("x", 1), CAIRN_E_NOT_INITIALIZED);
  }
  EXPECT_EQ(cairn_init_single(config_.c_str()), CAIRN_SUCCESS);
}

}  // namespace
