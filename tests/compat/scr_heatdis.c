/*
 * scr_heatdis.c — a heat-distribution program written for SCR the way SCR's
 * examples (examples/test_api.c) and user guide use it: SCR_Have_restart /
 * Start_restart / Route_file / Complete_restart at start, then
 * SCR_Need_checkpoint each step and a named checkpoint dataset
 * ("ckpt.<step>", one file per rank under a directory of that name) through
 * SCR_Start_output / Route_file / Complete_output, and at the end the result
 * as an output-only dataset. Configuration comes from $SCR_CONF_FILE.
 * Built against <scr.h> and libcairn_scr only.
 *
 *   scr_heatdis ITERATIONS RESULT_FILE
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <scr.h>

#include "heatdis.h"

static int write_state(const char *path, int i, const double *h, const double *g, size_t count) {
  FILE *fd = fopen(path, "wb");
  if (fd == NULL) return 0;
  int valid = fwrite(&i, sizeof(int), 1, fd) == 1 && fwrite(h, sizeof(double), count, fd) == count &&
              fwrite(g, sizeof(double), count, fd) == count;
  return fclose(fd) == 0 && valid;
}

static int read_state(const char *path, int *i, double *h, double *g, size_t count) {
  FILE *fd = fopen(path, "rb");
  if (fd == NULL) return 0;
  int valid = fread(i, sizeof(int), 1, fd) == 1 && fread(h, sizeof(double), count, fd) == count &&
              fread(g, sizeof(double), count, fd) == count;
  fclose(fd);
  return valid;
}

static void check(int rc, const char *what) {
  if (rc != SCR_SUCCESS) {
    printf("%s failed, aborting\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Restarts from the newest checkpoint every rank can read; returns the step. */
static int restart(int rank, double *h, double *g, size_t count) {
  int have_restart = 0, step = 0;
  char dset[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME + 32], file[SCR_MAX_FILENAME];
  check(SCR_Have_restart(&have_restart, dset), "SCR_Have_restart");
  while (have_restart) {
    check(SCR_Start_restart(dset), "SCR_Start_restart");
    snprintf(name, sizeof name, "%s/rank_%d.ckpt", dset, rank);
    int valid = SCR_Route_file(name, file) == SCR_SUCCESS && read_state(file, &step, h, g, count);
    if (SCR_Complete_restart(valid) == SCR_SUCCESS) {
      if (rank == 0) printf("Restarted from dataset %s (step %d)\n", dset, step);
      return step;
    }
    check(SCR_Have_restart(&have_restart, dset), "SCR_Have_restart");
  }
  return 0;
}

int main(int argc, char *argv[]) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s ITERATIONS RESULT_FILE\n", argv[0]);
    return 2;
  }
  int iterations = atoi(argv[1]);
  int rank, nbProcs;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nbProcs);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  check(SCR_Init(), "SCR_Init");

  int M = HEATDIS_M, nbLines = HEATDIS_ROWS + 2;
  size_t count = (size_t)M * nbLines;
  double *h = (double *)malloc(sizeof(double) * count);
  double *g = (double *)malloc(sizeof(double) * count);
  heatdis_init(nbLines, M, rank, g);
  int i = restart(rank, h, g, count);

  while (i < iterations) {
    heatdis_maybe_die(i);
    heatdis_step(nbProcs, rank, M, nbLines, g, h);
    i++;
    int need = 0;
    check(SCR_Need_checkpoint(&need), "SCR_Need_checkpoint");
    if (need) {
      char dset[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME + 32], file[SCR_MAX_FILENAME];
      snprintf(dset, sizeof dset, "ckpt.%d", i);
      check(SCR_Start_output(dset, SCR_FLAG_CHECKPOINT), "SCR_Start_output");
      snprintf(name, sizeof name, "%s/rank_%d.ckpt", dset, rank);
      int valid = SCR_Route_file(name, file) == SCR_SUCCESS && write_state(file, i, h, g, count);
      check(SCR_Complete_output(valid), "SCR_Complete_output");
    }
  }

  /* The result as an output dataset: rank 0 writes it where SCR routes it. */
  char file[SCR_MAX_FILENAME] = "";
  check(SCR_Start_output("result", SCR_FLAG_OUTPUT), "SCR_Start_output(result)");
  if (rank == 0) check(SCR_Route_file(argv[2], file), "SCR_Route_file(result)");
  int rc = heatdis_write_result(file, rank, nbProcs, M, nbLines, g);
  check(SCR_Complete_output(rc == 0), "SCR_Complete_output(result)");

  free(h);
  free(g);
  check(SCR_Finalize(), "SCR_Finalize");
  MPI_Finalize();
  return rc;
}
