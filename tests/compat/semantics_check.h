/* The check of the compat semantics programs: a failed condition names the
 * rank and line, then ends the whole job (every rank, so none waits in a
 * collective for the failed one). Each program sets g_rank after MPI_Init. */
#ifndef CAIRN_TESTS_COMPAT_SEMANTICS_CHECK_H_
#define CAIRN_TESTS_COMPAT_SEMANTICS_CHECK_H_

#include <stdio.h>

#include <mpi.h>

static int g_rank;

#define EXPECT(cond)                                                               \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      printf("rank %d: check failed at line %d: %s\n", g_rank, __LINE__, #cond);   \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    }                                                                              \
  } while (0)

#endif /* CAIRN_TESTS_COMPAT_SEMANTICS_CHECK_H_ */
