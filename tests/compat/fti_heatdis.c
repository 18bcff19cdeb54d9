/*
 * fti_heatdis.c — a heat-distribution solver written for FTI the way FTI's
 * examples (examples/heatdis.c, heatd2.c) use it: FTI_Init with the
 * configuration file, FTI_COMM_WORLD for the application's communication,
 * FTI_InitType for a struct, FTI_Protect, FTI_Snapshot every iteration
 * (which recovers on the first call of a restarted run), and explicit
 * FTI_Checkpoint(id, level) calls cycling through levels 1 to 4.
 * Built against <fti.h> and libcairn_fti only.
 *
 *   fti_heatdis ITERATIONS CKPT_FREQ CONFIG RESULT_FILE
 */
#include <stdio.h>
#include <stdlib.h>

#include <fti.h>
#include <mpi.h>

#include "heatdis.h"

typedef struct {
  int id;
  int level;
} CkptInfo;

int main(int argc, char *argv[]) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s ITERATIONS CKPT_FREQ CONFIG RESULT_FILE\n", argv[0]);
    return 2;
  }
  int iterations = atoi(argv[1]), ckpt_freq = atoi(argv[2]);
  int rank, nbProcs, i = 0;
  MPI_Init(&argc, &argv);
  if (FTI_Init(argv[3], MPI_COMM_WORLD) != FTI_SCES) {
    printf("FTI_Init failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_size(FTI_COMM_WORLD, &nbProcs);
  MPI_Comm_rank(FTI_COMM_WORLD, &rank);

  int M = HEATDIS_M, nbLines = HEATDIS_ROWS + 2;
  double *h = (double *)malloc(sizeof(double) * M * nbLines);
  double *g = (double *)malloc(sizeof(double) * M * nbLines);
  heatdis_init(nbLines, M, rank, g);

  FTIT_type ckptInfo;
  CkptInfo myCkpt = {0, 0};
  FTI_InitType(&ckptInfo, sizeof(CkptInfo));
  FTI_Protect(0, &i, 1, FTI_INTG);
  FTI_Protect(1, &myCkpt, 1, ckptInfo);
  FTI_Protect(2, h, M * nbLines, FTI_DBLE);
  FTI_Protect(3, g, M * nbLines, FTI_DBLE);

  int restarted = FTI_Status() != 0;
  while (i < iterations) {
    if (FTI_Snapshot() < 0) {
      printf("FTI_Snapshot failed\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (restarted) {
      if (rank == 0) printf("Recovered checkpoint %d (level %d) at step %d\n", myCkpt.id, myCkpt.level, i);
      restarted = 0;
      if (i >= iterations) break;
    }
    heatdis_maybe_die(i);
    heatdis_step(nbProcs, rank, M, nbLines, g, h);
    i++;
    if (i % ckpt_freq == 0) {
      myCkpt.id = i;
      myCkpt.level = (i / ckpt_freq - 1) % 4 + 1;
      if (FTI_Checkpoint(myCkpt.id, myCkpt.level) != FTI_DONE) {
        printf("FTI_Checkpoint failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }

  int rc = heatdis_write_result(argv[4], rank, nbProcs, M, nbLines, g);
  free(h);
  free(g);
  FTI_Finalize();
  MPI_Finalize();
  return rc;
}
