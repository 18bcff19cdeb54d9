// Shared helpers for MPI integration tests: a GoogleTest main that runs
// inside MPI and prints results from rank 0 only, and a per-run data dir.
// A test built with CAIRN_MPI_TEST_THREAD_MULTIPLE defined gets MPI
// initialised with MPI_THREAD_MULTIPLE.
#ifndef CAIRN_TESTS_MPI_TEST_MAIN_H_
#define CAIRN_TESTS_MPI_TEST_MAIN_H_

#include <mpi.h>

#include <string>

namespace cairn_test {

int Rank();
int Size();
// A fresh directory shared by all ranks (created by rank 0), removed at exit.
const std::string& SharedDir();

}  // namespace cairn_test

#endif  // CAIRN_TESTS_MPI_TEST_MAIN_H_
