#include "mpi_test_main.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

namespace cairn_test {
namespace {
std::string g_dir;
}

int Rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int Size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

const std::string& SharedDir() { return g_dir; }

}  // namespace cairn_test

int main(int argc, char** argv) {
#ifdef CAIRN_MPI_TEST_THREAD_MULTIPLE
  // Tests whose code calls MPI from several threads at once (the versioned
  // arrays' message servers).
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#else
  MPI_Init(&argc, &argv);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  char path[256] = {};
  if (cairn_test::Rank() == 0) {
    std::snprintf(path, sizeof(path), "/tmp/cairn-mpi-test-XXXXXX");
    if (::mkdtemp(path) == nullptr) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
  cairn_test::g_dir = path;
  if (cairn_test::Rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (cairn_test::Rank() == 0) std::filesystem::remove_all(cairn_test::g_dir);
  MPI_Finalize();
  return any_failed;
}
