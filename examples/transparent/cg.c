/* cg.c — a small MPI conjugate-gradient solver that knows nothing of Cairn.
 *
 * It solves the 1-D Poisson system A x = b (A = tridiag(-1, 2, -1)) over
 * all ranks, each holding a block of rows, with arrays from malloc and the
 * solver's state in a heap struct that points to them. Run it under
 * libcairn_intercept.so to make it checkpointable (docs/transparent.md):
 *
 *   mpirun -np 4 env LD_PRELOAD=$PWD/lib/libcairn_intercept.so ./cg 20000 400 out
 *   kill -USR1 <pid of any rank>   # a checkpoint at the next MPI_Allreduce
 *
 * Usage: cg ROWS_PER_RANK ITERATIONS OUTDIR [HOLD_ITERATION...]
 * Each rank writes its block of x to OUTDIR/x.RANK at the end; rank 0
 * prints the final residual. At each HOLD_ITERATION, rank 0 prints
 * "hold N" and waits for a line on its standard input (a test uses this to
 * act at a known point without sleeping).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct solver {
  int rank, size;
  long rows;            /* rows of this rank */
  double *x, *r, *p, *ap;
  double *halo;         /* p's neighbours: [0] left, [1] right */
  double rr;            /* r . r */
  int iteration;
};

static double dot(const struct solver *s, const double *a, const double *b) {
  double local = 0, global = 0;
  for (long i = 0; i < s->rows; ++i) local += a[i] * b[i];
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global;
}

/* ap = A p, with p's neighbour values from the ranks on either side. */
static void apply(struct solver *s) {
  MPI_Request req[4];
  int n = 0;
  s->halo[0] = s->halo[1] = 0;
  if (s->rank > 0) {
    MPI_Irecv(&s->halo[0], 1, MPI_DOUBLE, s->rank - 1, 0, MPI_COMM_WORLD, &req[n++]);
    MPI_Isend(&s->p[0], 1, MPI_DOUBLE, s->rank - 1, 1, MPI_COMM_WORLD, &req[n++]);
  }
  if (s->rank < s->size - 1) {
    MPI_Irecv(&s->halo[1], 1, MPI_DOUBLE, s->rank + 1, 1, MPI_COMM_WORLD, &req[n++]);
    MPI_Isend(&s->p[s->rows - 1], 1, MPI_DOUBLE, s->rank + 1, 0, MPI_COMM_WORLD, &req[n++]);
  }
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  for (long i = 0; i < s->rows; ++i) {
    double left = i > 0 ? s->p[i - 1] : s->halo[0];
    double right = i < s->rows - 1 ? s->p[i + 1] : s->halo[1];
    s->ap[i] = 2 * s->p[i] - left - right;
  }
}

static struct solver *setup(long rows) {
  struct solver *s = calloc(1, sizeof *s);
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s->size);
  s->rows = rows;
  s->x = calloc(rows, sizeof(double));
  s->r = malloc(rows * sizeof(double));
  s->p = malloc(rows * sizeof(double));
  s->ap = malloc(rows * sizeof(double));
  s->halo = malloc(2 * sizeof(double));
  for (long i = 0; i < rows; ++i) {  /* b, a smooth load; x0 = 0 so r = p = b */
    long global = s->rank * rows + i;
    s->r[i] = s->p[i] = 1.0 + (double)(global % 97) / 97.0;
  }
  s->rr = dot(s, s->r, s->r);
  return s;
}

static void step(struct solver *s) {
  apply(s);
  double alpha = s->rr / dot(s, s->p, s->ap);
  for (long i = 0; i < s->rows; ++i) {
    s->x[i] += alpha * s->p[i];
    s->r[i] -= alpha * s->ap[i];
  }
  double rr_new = dot(s, s->r, s->r);
  double beta = rr_new / s->rr;
  for (long i = 0; i < s->rows; ++i) s->p[i] = s->r[i] + beta * s->p[i];
  s->rr = rr_new;
  s->iteration++;
}

static void hold(const struct solver *s, int iteration) {
  if (s->rank != 0) return;
  char line[64];
  printf("hold %d\n", iteration);
  fflush(stdout);
  if (fgets(line, sizeof line, stdin) == NULL) fprintf(stderr, "hold %d: no input\n", iteration);
}

static int write_block(const struct solver *s, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/x.%d", dir, s->rank);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(s->x, sizeof(double), s->rows, f) != (size_t)s->rows) {
    perror(path);
    if (f) fclose(f);
    return 1;
  }
  return fclose(f) != 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 4) {
    fprintf(stderr, "usage: %s ROWS_PER_RANK ITERATIONS OUTDIR [HOLD_ITERATION...]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  long rows = atol(argv[1]);
  int iterations = atoi(argv[2]);
  struct solver *s = setup(rows);
  printf("rank %d pid %d\n", s->rank, (int)getpid());
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  while (s->iteration < iterations) {
    for (int h = 4; h < argc; ++h) {
      if (atoi(argv[h]) == s->iteration) hold(s, s->iteration);
    }
    step(s);
  }
  int failed = write_block(s, argv[3]);
  if (s->rank == 0) printf("done: %d iterations, residual %.17g\n", s->iteration, s->rr);
  free(s->x); free(s->r); free(s->p); free(s->ap); free(s->halo); free(s);
  MPI_Finalize();
  return failed;
}
