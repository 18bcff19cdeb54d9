/*
 * veloc_heatdis_mem.c — a memory-based VeloC program, written the way
 * VeloC's test/heatdis_mem.c uses the API: protect the state, ask
 * VELOC_Restart_test for the newest version, VELOC_Restart it, and call
 * VELOC_Checkpoint every CKPT_FREQ iterations. Built against <veloc.h> and
 * libcairn_veloc only.
 *
 *   veloc_heatdis_mem ITERATIONS CKPT_FREQ CONFIG RESULT_FILE
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
/* As VeloC's own test/heatdis_mem.c includes it. */
#include "include/veloc.h"

#include "heatdis.h"

#define check_result(cmd)                                         \
  do {                                                            \
    if ((cmd) != VELOC_SUCCESS) {                                 \
      printf("Error running " #cmd ", aborting!\n");              \
      MPI_Abort(MPI_COMM_WORLD, 1);                               \
    }                                                             \
  } while (0)

int main(int argc, char *argv[]) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s ITERATIONS CKPT_FREQ CONFIG RESULT_FILE\n", argv[0]);
    return 2;
  }
  int iterations = atoi(argv[1]), ckpt_freq = atoi(argv[2]);
  int rank, nbProcs, i;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nbProcs);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (VELOC_Init(MPI_COMM_WORLD, argv[3]) != VELOC_SUCCESS) {
    printf("Error initializing VELOC! Aborting...\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  int M = HEATDIS_M, nbLines = HEATDIS_ROWS + 2;
  double *h = (double *)malloc(sizeof(double) * M * nbLines);
  double *g = (double *)malloc(sizeof(double) * M * nbLines);
  heatdis_init(nbLines, M, rank, g);

  VELOC_Mem_protect(0, &i, 1, sizeof(int));
  VELOC_Mem_protect(1, h, (size_t)M * nbLines, sizeof(double));
  VELOC_Mem_protect(2, g, (size_t)M * nbLines, sizeof(double));

  int v = VELOC_Restart_test("heatdis", 0);
  if (v > 0) {
    if (rank == 0) printf("Previous checkpoint found at iteration %d, initiating restart...\n", v);
    check_result(VELOC_Restart("heatdis", v));
  } else {
    i = 0;
  }

  while (i < iterations) {
    heatdis_maybe_die(i);
    heatdis_step(nbProcs, rank, M, nbLines, g, h);
    i++;
    if (i % ckpt_freq == 0) check_result(VELOC_Checkpoint("heatdis", i));
  }

  int rc = heatdis_write_result(argv[4], rank, nbProcs, M, nbLines, g);
  free(h);
  free(g);
  VELOC_Finalize(1); /* wait for checkpoints to finish */
  MPI_Finalize();
  return rc;
}
