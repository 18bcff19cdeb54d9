// Helpers shared by the MPI benchmarks (bench_support.h holds those that
// need no MPI).
#ifndef CAIRN_BENCH_BENCH_MPI_H_
#define CAIRN_BENCH_BENCH_MPI_H_

#include <mpi.h>
#include <unistd.h>

#include <ctime>

namespace cairn_bench {

// Collective: an id that names this run's directories, the same on every
// rank (rank 0's pid and the time, so that runs after one another and
// side by side get different ones).
inline long long SharedRunId(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  long long id = 0;
  if (rank == 0) id = static_cast<long long>(getpid()) * 1000 + (time(nullptr) % 1000);
  MPI_Bcast(&id, 1, MPI_LONG_LONG, 0, comm);
  return id;
}

}  // namespace cairn_bench

#endif  // CAIRN_BENCH_BENCH_MPI_H_
