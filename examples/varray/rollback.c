/* rollback: recovering from a latent error with a versioned array.
 *
 *   mpirun -np 4 ./varray_rollback [iterations] [corrupt_at] [detect_every]
 *
 * A 1-D diffusion runs on an array spread over the ranks; its state lives
 * in a Cairn versioned array, versioned every iteration (keep 8). At
 * iteration corrupt_at, rank 0 silently corrupts one element (a bit flip
 * the hardware did not report). The application checks its invariant (the
 * total heat, which diffusion with closed ends conserves) only every
 * detect_every iterations, so the error is found late: a classic
 * checkpoint, holding only the newest state, would already hold the
 * corruption. The versioned array still holds older versions: the program
 * looks back for the newest version whose invariant holds, restores it and
 * computes on. The final state equals that of a run without the error. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "cairn/cairn.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    int rc_ = (call);                                                            \
    if (rc_ != CAIRN_SUCCESS) {                                                  \
      fprintf(stderr, "%s failed: %s\n", #call, cairn_error_message(rc_));       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)

enum { kPerRank = 4096 };

/* The total of version v (or of the open version when v < 0) over the
 * whole array: every rank reads its own part, then a sum. */
static double Total(cairn_varray a, long long v, int rank, double *part) {
  const unsigned long long first = (unsigned long long)rank * kPerRank;
  if (v < 0) {
    CHECK(cairn_varray_get(a, first, kPerRank, part));
    CHECK(cairn_varray_wait(a));
  } else {
    CHECK(cairn_varray_get_version(a, v, first, kPerRank, part));
  }
  double local = 0, total = 0;
  for (int i = 0; i < kPerRank; ++i) local += part[i];
  MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

/* One explicit diffusion step on this rank's part; the neighbours' edge
 * values are read from the array itself (a get from the other ranks). */
static void Step(cairn_varray a, int rank, int size, double *u, double *next) {
  const unsigned long long first = (unsigned long long)rank * kPerRank;
  double left = 0, right = 0;
  CHECK(cairn_varray_get(a, first, kPerRank, u));
  if (rank > 0) CHECK(cairn_varray_get(a, first - 1, 1, &left));
  if (rank + 1 < size) CHECK(cairn_varray_get(a, first + kPerRank, 1, &right));
  CHECK(cairn_varray_wait(a));
  for (int i = 0; i < kPerRank; ++i) {
    const double l = i > 0 ? u[i - 1] : (rank > 0 ? left : u[i]);
    const double r = i + 1 < kPerRank ? u[i + 1] : (rank + 1 < size ? right : u[i]);
    next[i] = u[i] + 0.25 * (l - 2 * u[i] + r);
  }
  /* Every rank has read before any rank writes. */
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(cairn_varray_put(a, first, kPerRank, next));
}

int main(int argc, char **argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 40;
  const int corrupt_at = argc > 2 ? atoi(argv[2]) : 13;
  const int detect_every = argc > 3 ? atoi(argv[3]) : 5;

  cairn_varray_options options = CAIRN_VARRAY_OPTIONS_INIT;
  options.keep = 8;
  options.block_size = 512;
  cairn_varray a = NULL;
  CHECK(cairn_varray_create(MPI_COMM_WORLD, "heat", (unsigned long long)kPerRank * size,
                            sizeof(double), &options, &a));
  double *u = malloc(kPerRank * sizeof(double)), *next = malloc(kPerRank * sizeof(double));
  for (int i = 0; i < kPerRank; ++i) u[i] = rank == 0 && i < 64 ? 100.0 : 0.0;
  CHECK(cairn_varray_put(a, (unsigned long long)rank * kPerRank, kPerRank, u));
  CHECK(cairn_varray_version_inc(a));
  const double invariant = Total(a, 0, rank, u);
  int corrupted = 0, rollbacks = 0;

  for (int it = 1; it <= iterations; ++it) {
    Step(a, rank, size, u, next);
    if (it == corrupt_at && !corrupted && rank == 0) {
      double wrong = 1e6; /* a silent error in rank 0's memory of the array */
      CHECK(cairn_varray_put(a, 100, 1, &wrong));
    }
    if (it == corrupt_at) corrupted = 1;
    CHECK(cairn_varray_version_inc(a));
    if (it % detect_every != 0) continue;
    long long newest = 0;
    CHECK(cairn_varray_version(a, &newest));
    if (fabs(Total(a, newest - 1, rank, u) - invariant) < 1e-6 * invariant) continue;
    /* Found late: look back for the newest version that is still good. */
    cairn_varray_info info = CAIRN_VARRAY_INFO_INIT;
    CHECK(cairn_varray_info_get(a, &info));
    long long good = -1;
    for (long long v = newest - 1; v >= info.oldest_in_memory && good < 0; --v) {
      if (fabs(Total(a, v, rank, u) - invariant) < 1e-6 * invariant) good = v;
    }
    if (good < 0) {
      if (rank == 0) fprintf(stderr, "no good version is kept: raise keep\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK(cairn_varray_restore(a, good));
    ++rollbacks;
    /* Version newest - 1 holds iteration it; the open version now holds
     * the iteration of version `good`, and the loop computes on from it. */
    const int good_iteration = it - (int)(newest - 1 - good);
    if (rank == 0) {
      printf("iteration %d: invariant broken, rolled back to version %lld (iteration %d)\n", it,
             good, good_iteration);
    }
    it = good_iteration;
  }
  long long version = 0;
  CHECK(cairn_varray_version(a, &version));
  const double total = Total(a, -1, rank, u);
  if (rank == 0) {
    printf("done: %d iterations, %d rollback(s), %lld versions made, total %.6f (expected %.6f)\n",
           iterations, rollbacks, version, total, invariant);
  }
  CHECK(cairn_varray_destroy(&a));
  free(u);
  free(next);
  MPI_Finalize();
  return fabs(total - invariant) < 1e-6 * invariant ? 0 : 1;
}
