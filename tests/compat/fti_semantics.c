/*
 * fti_semantics.c — FTI's documented semantics on 2+ ranks, over three
 * "runs" in one process (FTI_Finalize with keep_last_ckpt = 1, FTI_Init):
 *  - FTI_Status() is 0 on a fresh start and 1 when a checkpoint is left;
 *  - FTI_GetStoredSize tells a variable's stored size before it has that
 *    size, FTI_Realloc gives it that size, and FTI_Recover restores it;
 *  - FTI_RecoverVarInit / FTI_RecoverVar / FTI_RecoverVarFinalize restore
 *    variables one by one (an unknown id fails); FTI_Status() becomes 0
 *    only after a recovery without failure;
 *  - HDF5 metadata (FTI_InitGroup, FTI_DefineDataset, composite types) is
 *    checked as FTI checks it;
 *  - ranks may recover in different ways (FTI_Recover on one, FTI_RecoverVar*
 *    on another) into variables too small at first: the failed recovery
 *    stays pending, FTI_Realloc and a second recovery succeed (FTI's
 *    diffSizes test), and the ranks stay in step;
 *  - the dCP levels checkpoint as their base level;
 *  - FTI_Init again without FTI_Finalize restarts FTI "live": the new
 *    instance recovers the checkpoint the first one took.
 * Prints "fti semantics: ok" and exits 0, or names the first failed check.
 *
 *   fti_semantics CONFIG
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fti.h>
#include <mpi.h>

#include "semantics_check.h"

static double value_at(int i) { return 0.5 * i + 100.0 * g_rank; }

int main(int argc, char *argv[]) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  EXPECT(argc == 2);

  /* run 1: n values on each rank, checkpoint 1 */
  EXPECT(FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES);
  EXPECT(FTI_Status() == 0);
  int n = 10 + g_rank;
  double *data = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) data[i] = value_at(i);
  EXPECT(FTI_Protect(0, &n, 1, FTI_INTG) == FTI_SCES);
  EXPECT(FTI_Protect(1, data, n, FTI_DBLE) == FTI_SCES);

  FTIT_H5Group grid;
  EXPECT(FTI_InitGroup(&grid, "grid", NULL) == FTI_SCES);
  EXPECT(strcmp(grid.fullName, "/grid") == 0);
  EXPECT(FTI_InitGroup(&grid, "grid", NULL) == FTI_NSCS); /* twice */
  int64_t dims[1] = {n};
  EXPECT(FTI_DefineDataset(1, 1, dims, "data", &grid) == FTI_SCES);
  dims[0] = n + 1;
  EXPECT(FTI_DefineDataset(1, 1, dims, "data", &grid) == FTI_NSCS);
  fti_id_t pair = FTI_InitCompositeType("pair", 2 * sizeof(int), NULL);
  EXPECT(pair >= 0);
  EXPECT(FTI_AddScalarField(pair, "a", FTI_INTG, 0) == FTI_SCES);
  EXPECT(FTI_AddScalarField(pair, "b", FTI_INTG, 2 * sizeof(int)) == FTI_NSCS);

  EXPECT(FTI_Checkpoint(1, 1) == FTI_DONE);
  EXPECT(FTI_GetStoredSize(1) == 0); /* nothing is being recovered */
  EXPECT(FTI_Finalize() == FTI_SCES);
  free(data);

  /* run 2: the sizes come from the checkpoint */
  EXPECT(FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES);
  EXPECT(FTI_Status() == 1);
  int n2 = 0;
  double *data2 = malloc(sizeof(double));
  EXPECT(FTI_Protect(0, &n2, 1, FTI_INTG) == FTI_SCES);
  EXPECT(FTI_Protect(1, data2, 1, FTI_DBLE) == FTI_SCES);
  EXPECT(FTI_GetStoredSize(1) == (int64_t)sizeof(double) * (10 + g_rank));
  EXPECT(FTI_GetStoredSize(7) == 0);
  data2 = FTI_Realloc(1, data2);
  EXPECT(data2 != NULL);
  EXPECT(FTI_Recover() == FTI_SCES);
  EXPECT(n2 == 10 + g_rank);
  for (int i = 0; i < n2; ++i) EXPECT(data2[i] == value_at(i));
  EXPECT(FTI_Status() == 0);
  EXPECT(FTI_Finalize() == FTI_SCES);

  /* run 3: variable by variable */
  EXPECT(FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES);
  EXPECT(FTI_Status() == 1);
  int n3 = 0;
  double *data3 = calloc((size_t)(10 + g_rank), sizeof(double));
  EXPECT(FTI_Protect(0, &n3, 1, FTI_INTG) == FTI_SCES);
  EXPECT(FTI_Protect(1, data3, 10 + g_rank, FTI_DBLE) == FTI_SCES);
  EXPECT(FTI_RecoverVarInit() == FTI_SCES);
  EXPECT(FTI_RecoverVar(0) == FTI_SCES);
  EXPECT(n3 == 10 + g_rank && data3[1] == 0.0); /* only variable 0 so far */
  EXPECT(FTI_RecoverVar(1) == FTI_SCES);
  for (int i = 0; i < n3; ++i) EXPECT(data3[i] == value_at(i));
  EXPECT(FTI_RecoverVar(7) == FTI_NSCS);
  EXPECT(FTI_RecoverVarFinalize() == FTI_SCES);
  EXPECT(FTI_Status() == 1); /* a recovery with a failure stays pending, as in FTI */
  EXPECT(FTI_Finalize() == FTI_SCES);

  /* run 4: recovery mixed across ranks, the first attempt too small */
  EXPECT(FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES);
  EXPECT(FTI_Status() == 1);
  int n4 = 0;
  double *data4 = calloc(1, sizeof(double));
  EXPECT(FTI_Protect(0, &n4, 1, FTI_INTG) == FTI_SCES);
  EXPECT(FTI_Protect(1, data4, 1, FTI_DBLE) == FTI_SCES);
  for (int attempt = 1; attempt <= 2; ++attempt) {
    int rc = FTI_SCES;
    if (g_rank == 0) {
      rc = FTI_Recover();
    } else {
      rc += FTI_RecoverVarInit();
      rc += FTI_RecoverVar(0);
      rc += FTI_RecoverVar(1);
      rc += FTI_RecoverVarFinalize();
    }
    if (attempt == 1) {
      EXPECT(rc != FTI_SCES);
      EXPECT(FTI_Status() == 1); /* still recoverable, as in FTI */
      data4 = FTI_Realloc(1, data4);
      EXPECT(data4 != NULL);
    } else {
      EXPECT(rc == FTI_SCES);
    }
  }
  EXPECT(n4 == 10 + g_rank);
  for (int i = 0; i < n4; ++i) EXPECT(data4[i] == value_at(i));
  EXPECT(FTI_Status() == 0);
  EXPECT(FTI_GetStoredSize(1) == (int64_t)sizeof(double) * n4); /* known after recovery */
  EXPECT(FTI_Checkpoint(2, FTI_MAX_LEVEL_ID + 1) == FTI_NSCS);
  EXPECT(FTI_Checkpoint(2, FTI_L4_DCP) == FTI_DONE);
  EXPECT(FTI_Finalize() == FTI_SCES);

  /* run 5: FTI_Init twice, the second finding the first one's checkpoint */
  EXPECT(FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES);
  EXPECT(FTI_Status() == 1);
  EXPECT(FTI_Protect(0, &n4, 1, FTI_INTG) == FTI_SCES);
  EXPECT(FTI_Protect(1, data4, n4, FTI_DBLE) == FTI_SCES);
  EXPECT(FTI_Recover() == FTI_SCES);
  data4[0] = -1.0;
  EXPECT(FTI_Checkpoint(3, FTI_L1_DCP) == FTI_DONE);
  EXPECT(FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES);
  EXPECT(FTI_Status() == 1);
  EXPECT(FTI_Protect(0, &n4, 1, FTI_INTG) == FTI_SCES);
  EXPECT(FTI_Protect(1, data4, n4, FTI_DBLE) == FTI_SCES);
  data4[0] = 0.0;
  EXPECT(FTI_Recover() == FTI_SCES);
  EXPECT(data4[0] == -1.0 && data4[1] == value_at(1));
  EXPECT(FTI_Finalize() == FTI_SCES);

  free(data2);
  free(data3);
  free(data4);
  if (g_rank == 0) printf("fti semantics: ok\n");
  MPI_Finalize();
  return 0;
}
