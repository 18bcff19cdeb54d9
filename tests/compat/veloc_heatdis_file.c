/*
 * veloc_heatdis_file.c — a file-based VeloC program, written the way VeloC's
 * test/heatdis_file.c uses the API: the application writes and reads its own
 * checkpoint file at the path VELOC_Route_file gives, between
 * VELOC_Checkpoint_begin/_end and VELOC_Restart_begin/_end.
 *
 *   veloc_heatdis_file ITERATIONS CKPT_FREQ CONFIG RESULT_FILE
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>
#include <veloc.h>

#include "heatdis.h"

#define check_result(cmd)                                         \
  do {                                                            \
    if ((cmd) != VELOC_SUCCESS) {                                 \
      printf("Error running " #cmd ", aborting!\n");              \
      MPI_Abort(MPI_COMM_WORLD, 1);                               \
    }                                                             \
  } while (0)

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
  size_t count = (size_t)M * nbLines;
  double *h = (double *)malloc(sizeof(double) * count);
  double *g = (double *)malloc(sizeof(double) * count);
  heatdis_init(nbLines, M, rank, g);

  char original[VELOC_MAX_NAME], veloc_file[VELOC_MAX_NAME];
  int v = VELOC_Restart_test("heatdis", 0);
  if (v > 0) {
    if (rank == 0) printf("Previous checkpoint found at iteration %d, initiating restart...\n", v);
    check_result(VELOC_Restart_begin("heatdis", v));
    /* Another name than the one written, as in VeloC's own heatdis_file.c:
     * VeloC routes by checkpoint, rank and version, not by this name. */
    sprintf(original, "heatdis-file-ckpt-%d_%d.dat", v, rank);
    check_result(VELOC_Route_file(original, veloc_file));
    int valid = read_state(veloc_file, &i, h, g, count);
    check_result(VELOC_Restart_end(valid));
    if (!valid) {
      printf("rank %d: cannot read %s\n", rank, veloc_file);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  } else {
    i = 0;
  }

  while (i < iterations) {
    heatdis_maybe_die(i);
    heatdis_step(nbProcs, rank, M, nbLines, g, h);
    i++;
    if (i % ckpt_freq == 0) {
      check_result(VELOC_Checkpoint_wait());
      check_result(VELOC_Checkpoint_begin("heatdis", i));
      sprintf(original, "heatdis-file-ckpt_%d_%d.dat", i, rank);
      check_result(VELOC_Route_file(original, veloc_file));
      int valid = write_state(veloc_file, i, h, g, count);
      check_result(VELOC_Checkpoint_end(valid));
    }
  }

  int rc = heatdis_write_result(argv[4], rank, nbProcs, M, nbLines, g);
  free(h);
  free(g);
  VELOC_Finalize(1);
  MPI_Finalize();
  return rc;
}
