/*
 * heatdis.h — the heat-distribution kernel shared by the compatibility test
 * programs, after the peers' own examples (VeloC test/heatdis.h, FTI
 * examples/heatd.c): each rank owns nbLines rows of M columns (first and last
 * row are halos), swaps halos with its neighbours each step, and the top edge
 * of rank 0 is held hot. The result depends only on the step count and the
 * rank count, so a restarted run must end with the same bytes as an
 * uninterrupted one.
 *
 * Fault injection for the kill-and-restart tests: with HEATDIS_KILL_AT=S in
 * the environment, every rank SIGKILLs itself when it reaches step S (what a
 * node crash does to a job), so that the kill lands at a known point without
 * timing the test with sleeps.
 */
#ifndef CAIRN_TESTS_COMPAT_HEATDIS_H_
#define CAIRN_TESTS_COMPAT_HEATDIS_H_

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define HEATDIS_M 64      /* columns */
#define HEATDIS_ROWS 32   /* rows per rank, halos excluded */

static void heatdis_init(int nbLines, int M, int rank, double *h) {
  for (int i = 0; i < nbLines; i++) {
    for (int j = 0; j < M; j++) h[i * M + j] = 0;
  }
  if (rank == 0) {
    for (int j = M / 4; j < 3 * M / 4; j++) h[j] = 100.0;
  }
}

/* One Jacobi step from h into g, then g back into h; returns the largest
 * change on this rank. */
static double heatdis_step(int nbProcs, int rank, int M, int nbLines, double *g, double *h) {
  MPI_Request req[4];
  int nreq = 0;
  memcpy(h, g, sizeof(double) * M * nbLines);
  if (rank > 0) {
    MPI_Isend(h + M, M, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, &req[nreq++]);
    MPI_Irecv(h, M, MPI_DOUBLE, rank - 1, 0, MPI_COMM_WORLD, &req[nreq++]);
  }
  if (rank < nbProcs - 1) {
    MPI_Isend(h + (nbLines - 2) * M, M, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD, &req[nreq++]);
    MPI_Irecv(h + (nbLines - 1) * M, M, MPI_DOUBLE, rank + 1, 0, MPI_COMM_WORLD, &req[nreq++]);
  }
  MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  double err = 0;
  for (int i = 1; i < nbLines - 1; i++) {
    for (int j = 1; j < M - 1; j++) {
      int k = i * M + j;
      g[k] = 0.25 * (h[k - M] + h[k + M] + h[k - 1] + h[k + 1]);
      double d = g[k] > h[k] ? g[k] - h[k] : h[k] - g[k];
      if (d > err) err = d;
    }
  }
  if (rank == 0) {
    for (int j = M / 4; j < 3 * M / 4; j++) g[j] = 100.0;
  }
  return err;
}

static void heatdis_maybe_die(int step) {
  const char *at = getenv("HEATDIS_KILL_AT");
  if (at != NULL && atoi(at) == step) {
    fflush(stdout);
    kill(getpid(), SIGKILL);
  }
}

/* Rank 0 writes every rank's rows (halos excluded) to `path`, in rank order. */
static int heatdis_write_result(const char *path, int rank, int nbProcs, int M, int nbLines,
                                const double *g) {
  size_t mine = (size_t)M * (nbLines - 2);
  double *all = rank == 0 ? (double *)malloc(sizeof(double) * mine * nbProcs) : NULL;
  MPI_Gather(g + M, (int)mine, MPI_DOUBLE, all, (int)mine, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int rc = 0;
  if (rank == 0) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(all, sizeof(double), mine * nbProcs, f) != mine * nbProcs) rc = 1;
    if (f != NULL && fclose(f) != 0) rc = 1;
    free(all);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

#endif /* CAIRN_TESTS_COMPAT_HEATDIS_H_ */
