/*
 * heat.c — 2D heat equation with Cairn checkpoint/restart.
 *
 * An explicit 5-point stencil (Jacobi sweep) on an R x C grid, split across
 * the ranks of MPI_COMM_WORLD in blocks of consecutive rows; neighbouring
 * ranks swap one halo row each way every step (MPI_Sendrecv). The outer
 * border of the grid is a fixed (Dirichlet) boundary: the top edge is held
 * at 100 degrees, the other edges at 0, and three hot squares sit inside the
 * grid at start. The initial condition is a pure function of the global
 * (row, column), and every cell is updated with the same floating-point
 * operations in the same order whatever the decomposition, so the final grid
 * is bit-for-bit the same for any rank count, with or without restarts.
 *
 * The state protected with Cairn is the rank's block of rows (region 0) and
 * the step counter (region 1). Every K steps the job calls
 * cairn_checkpoint("heat", step); at start it asks Cairn for the newest
 * recoverable version and, if there is one, restores it and carries on from
 * the restored step.
 *
 *   heat --steps N --every K --rows R --cols C [--config FILE] [--out FILE]
 *
 * Output (rank 0, stdout, flushed line by line):
 *   heat: R x C grid on P ranks, ...                 once, at start
 *   heat: resumed from version V (step S)            after a restart
 *   step S checkpointed                              after each checkpoint
 *   heat: done, ...                                  at the end
 * With --out, rank 0 writes the final grid as R*C raw doubles (row-major,
 * native byte order).
 *
 * Exit status: 0 on success, 1 when Cairn or the system reports an error
 * (the message names the call and cause), 2 on a bad command line.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "cairn/cairn.h"

/* Regions protected with Cairn; the ids are part of the checkpoint. */
enum { kRegionGrid = 0, kRegionStep = 1 };

static const char kCheckpointName[] = "heat";
static const double kAlpha = 0.2; /* diffusion number; explicit scheme is stable below 0.25 */
static const double kTopEdge = 100.0;

static int g_rank = 0;

/* Any failure after MPI_Init: report and take the whole job down. A lone rank
 * that returned would leave the others blocked in the next collective. */
static void Die(const char *what, const char *why) {
  fprintf(stderr, "heat: rank %d: %s: %s\n", g_rank, what, why);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* not reached */
}

/* Checks the result of a Cairn call; returns it when it is not an error. */
static int Check(int rc, const char *what) {
  if (rc < 0) Die(what, cairn_error_message(rc));
  return rc;
}
#define CAIRN_CHECK(call) Check((call), #call)

#define MPI_CHECK(call)                                                    \
  do {                                                                     \
    int mpi_rc_ = (call);                                                  \
    if (mpi_rc_ != MPI_SUCCESS) {                                          \
      char mpi_msg_[MPI_MAX_ERROR_STRING];                                 \
      int mpi_len_ = 0;                                                    \
      MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);                      \
      Die(#call, mpi_msg_);                                                \
    }                                                                      \
  } while (0)

typedef struct Options {
  int steps;
  int every;
  int rows;
  int cols;
  const char *config;
  const char *out;
} Options;

static void Usage(FILE *to) {
  fprintf(to,
          "usage: heat --steps N --every K --rows R --cols C [--config FILE] [--out FILE]\n"
          "  --steps N     time steps to run in total (N >= 0)\n"
          "  --every K     checkpoint every K steps (K >= 1); the version is the step number\n"
          "  --rows R      grid rows (R >= number of ranks, R >= 3)\n"
          "  --cols C      grid columns (C >= 3)\n"
          "  --config FILE Cairn configuration (TOML); default: $CAIRN_CONFIG or built-in\n"
          "  --out FILE    write the final grid there (R*C raw doubles, row-major)\n");
}

static int ParseInt(const char *text, int lo, int *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (text[0] == '\0' || *end != '\0' || errno != 0 || v < lo || v > INT_MAX) return -1;
  *out = (int)v;
  return 0;
}

/* Returns 0, or a message (printed by rank 0 only) on a bad command line. */
static const char *ParseOptions(int argc, char **argv, Options *o) {
  static char msg[256];
  memset(o, 0, sizeof *o);
  o->steps = o->every = o->rows = o->cols = -1;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return "";
    if (i + 1 >= argc) {
      snprintf(msg, sizeof msg, "option '%s' needs a value (or is unknown)", a);
      return msg;
    }
    const char *v = argv[++i];
    int bad = 0;
    if (strcmp(a, "--steps") == 0) bad = ParseInt(v, 0, &o->steps);
    else if (strcmp(a, "--every") == 0) bad = ParseInt(v, 1, &o->every);
    else if (strcmp(a, "--rows") == 0) bad = ParseInt(v, 3, &o->rows);
    else if (strcmp(a, "--cols") == 0) bad = ParseInt(v, 3, &o->cols);
    else if (strcmp(a, "--config") == 0) o->config = v;
    else if (strcmp(a, "--out") == 0) o->out = v;
    else {
      snprintf(msg, sizeof msg, "unknown option '%s'", a);
      return msg;
    }
    if (bad) {
      snprintf(msg, sizeof msg, "bad value '%s' for %s", v, a);
      return msg;
    }
  }
  if (o->steps < 0 || o->every < 0 || o->rows < 0 || o->cols < 0) {
    return "--steps, --every, --rows and --cols are required";
  }
  return NULL;
}

/* Initial temperature of global cell (i, j): a hot top edge and three hot
 * squares; a pure function of (i, j) so every decomposition agrees. */
static double Initial(int i, int j, int rows, int cols) {
  if (i == 0) return kTopEdge;
  if (i == rows - 1 || j == 0 || j == cols - 1) return 0.0;
  static const struct { double ci, cj, half, temp; } kSpots[] = {
      {0.30, 0.25, 0.06, 80.0}, {0.55, 0.70, 0.08, 60.0}, {0.80, 0.40, 0.04, 95.0}};
  for (size_t s = 0; s < sizeof kSpots / sizeof kSpots[0]; ++s) {
    double di = (double)i / rows - kSpots[s].ci;
    double dj = (double)j / cols - kSpots[s].cj;
    if (di > -kSpots[s].half && di < kSpots[s].half && dj > -kSpots[s].half &&
        dj < kSpots[s].half) {
      return kSpots[s].temp;
    }
  }
  return 0.0;
}

int main(int argc, char **argv) {
  /* MPI_THREAD_MULTIPLE lets Cairn encode the redundancy parity (and drain
   * to lower tiers) on its own thread while the solver runs; with less,
   * cairn_checkpoint encodes inside the call (docs/redundancy.md). */
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  /* Errors come back as codes; Die() reports them and aborts the job. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_MULTIPLE && g_rank == 0) {
    fprintf(stderr, "heat: MPI offers no MPI_THREAD_MULTIPLE; Cairn's background work runs "
                    "inside cairn_checkpoint\n");
  }

  Options opt;
  const char *bad = ParseOptions(argc, argv, &opt);
  if (bad == NULL && opt.rows < nranks) bad = "--rows must be at least the number of ranks";
  if (bad != NULL) {
    /* Every rank sees the same command line, so every rank stops here. */
    if (g_rank == 0) {
      if (bad[0] != '\0') fprintf(stderr, "heat: %s\n", bad);
      Usage(bad[0] != '\0' ? stderr : stdout);
    }
    MPI_Finalize();
    return bad[0] != '\0' ? 2 : 0;
  }

  /* Block decomposition by rows: the first rows % nranks ranks get one more. */
  const int rows = opt.rows, cols = opt.cols;
  const int base = rows / nranks, extra = rows % nranks;
  const int nloc = base + (g_rank < extra ? 1 : 0);
  const int row0 = g_rank * base + (g_rank < extra ? g_rank : extra);
  const int up = g_rank > 0 ? g_rank - 1 : MPI_PROC_NULL;
  const int down = g_rank < nranks - 1 ? g_rank + 1 : MPI_PROC_NULL;

  /* Local rows 1..nloc are owned; rows 0 and nloc+1 are halos. */
  const size_t width = (size_t)cols;
  const size_t cells = (size_t)(nloc + 2) * width;
  double *u = malloc(cells * sizeof *u);
  double *next = malloc(cells * sizeof *next);
  if (u == NULL || next == NULL) Die("malloc", strerror(errno));
  for (int li = 0; li < nloc + 2; ++li) {
    int gi = row0 + li - 1;
    for (int j = 0; j < cols; ++j) {
      u[(size_t)li * width + j] = (gi >= 0 && gi < rows) ? Initial(gi, j, rows, cols) : 0.0;
    }
  }
  memcpy(next, u, cells * sizeof *u); /* fixed boundary cells are never rewritten */
  int step = 0;

  CAIRN_CHECK(cairn_init(MPI_COMM_WORLD, opt.config));
  /* Halos are rebuilt by the exchange at the top of every step: not state. */
  CAIRN_CHECK(cairn_protect(kRegionGrid, u + width, (size_t)nloc * width, sizeof(double)));
  CAIRN_CHECK(cairn_protect(kRegionStep, &step, 1, sizeof step));

  if (g_rank == 0) {
    unsigned long long bytes = (unsigned long long)rows * cols * sizeof(double) +
                               (unsigned long long)nranks * sizeof step;
    printf("heat: %d x %d grid on %d ranks, %d steps, checkpoint every %d; "
           "%llu bytes protected per version (Cairn %s)\n",
           rows, cols, nranks, opt.steps, opt.every, bytes, CAIRN_VERSION_STRING);
    fflush(stdout);
  }

  int latest = cairn_restart_test(kCheckpointName, -1);
  if (latest >= 0) {
    int restored = CAIRN_CHECK(cairn_restart(kCheckpointName, latest));
    /* The version is the step number it was taken at: check the pair agrees. */
    if (step != restored) {
      char why[128];
      snprintf(why, sizeof why, "restored version %d holds step counter %d", restored, step);
      Die("cairn_restart", why);
    }
    cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
    CAIRN_CHECK(cairn_last_restart(&info));
    if (g_rank == 0) {
      if (restored != latest) {
        printf("heat: newest recoverable version was %d, restored %d instead\n", latest,
               restored);
      }
      printf("heat: resumed from version %d (step %d); newest version written was %d, "
             "%d version(s) and %.1f s rolled back\n",
             restored, step, info.newest, info.rollback_versions, info.rollback_seconds);
      fflush(stdout);
    }
  } else if (g_rank == 0) {
    printf("heat: no checkpoint to restart from, starting at step 0\n");
    fflush(stdout);
  }

  double t0 = MPI_Wtime(), tckpt = 0.0;
  int nckpt = 0;
  /* Global rows 0 and rows-1 are boundary; so are columns 0 and cols-1. */
  const int li_first = (row0 == 0) ? 2 : 1;
  const int li_last = (row0 + nloc == rows) ? nloc - 1 : nloc;
  while (step < opt.steps) {
    MPI_CHECK(MPI_Sendrecv(u + width, cols, MPI_DOUBLE, up, 0,
                           u + (size_t)(nloc + 1) * width, cols, MPI_DOUBLE, down, 0,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Sendrecv(u + (size_t)nloc * width, cols, MPI_DOUBLE, down, 1, u, cols,
                           MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int li = li_first; li <= li_last; ++li) {
      const double *c = u + (size_t)li * width;
      const double *a = c - width, *b = c + width; /* rows above and below */
      double *n = next + (size_t)li * width;
      for (int j = 1; j < cols - 1; ++j) {
        n[j] = c[j] + kAlpha * ((a[j] + b[j]) + (c[j - 1] + c[j + 1]) - 4.0 * c[j]);
      }
    }
    /* Copy back rather than swap pointers: region 0 stays registered at u. */
    memcpy(u + width, next + width, (size_t)nloc * width * sizeof *u);
    ++step;
    if (step % opt.every == 0) {
      double tc = MPI_Wtime();
      CAIRN_CHECK(cairn_checkpoint(kCheckpointName, step));
      tckpt += MPI_Wtime() - tc;
      ++nckpt;
      if (g_rank == 0) {
        printf("step %d checkpointed\n", step);
        fflush(stdout);
      }
    }
  }
  double tcompute = MPI_Wtime() - t0;

  /* Gather the owned rows on rank 0 and write them out. */
  int *counts = NULL, *displs = NULL;
  double *grid = NULL;
  if (g_rank == 0) {
    counts = malloc((size_t)nranks * sizeof *counts);
    displs = malloc((size_t)nranks * sizeof *displs);
    grid = malloc((size_t)rows * width * sizeof *grid);
    if (counts == NULL || displs == NULL || grid == NULL) Die("malloc", strerror(errno));
    for (int r = 0; r < nranks; ++r) {
      int n = base + (r < extra ? 1 : 0);
      int first = r * base + (r < extra ? r : extra);
      /* int counts limit one rank's block to INT_MAX doubles (16 GiB). */
      counts[r] = n * cols;
      displs[r] = first * cols;
    }
  }
  MPI_CHECK(MPI_Gatherv(u + width, nloc * cols, MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0,
                        MPI_COMM_WORLD));
  if (g_rank == 0) {
    double sum = 0.0;
    for (size_t k = 0; k < (size_t)rows * width; ++k) sum += grid[k];
    if (opt.out != NULL) {
      FILE *f = fopen(opt.out, "wb");
      if (f == NULL) Die(opt.out, strerror(errno));
      size_t n = (size_t)rows * width;
      if (fwrite(grid, sizeof *grid, n, f) != n || fflush(f) != 0) Die(opt.out, strerror(errno));
      if (fclose(f) != 0) Die(opt.out, strerror(errno));
    }
    printf("heat: done, step %d, mean temperature %.17g; %d checkpoints in this run took "
           "%.3f s of %.3f s\n",
           step, sum / ((double)rows * cols), nckpt, tckpt, tcompute);
    fflush(stdout);
  }
  free(grid);
  free(displs);
  free(counts);

  CAIRN_CHECK(cairn_checkpoint_wait());
  CAIRN_CHECK(cairn_finalize());
  free(next);
  free(u);
  MPI_Finalize();
  return 0;
}
