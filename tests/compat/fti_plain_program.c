/*
 * fti_plain_program.c — a program that includes only <fti.h>, as FTI's own
 * tests do: it relies on the standard headers FTI's fti.h pulls in (malloc,
 * printf, memset, getpid, bool) and on FTI_ENDW, and describes a protected
 * struct with a composite type under POSIX output (ckpt_io 1), which asks
 * for no HDF5 files: its CTest fails if the HDF5 warning appears.
 * Prints "fti plain program: ok" and exits 0, or names the failed check.
 *
 *   fti_plain_program CONFIG
 */
#include <fti.h>

typedef struct {
  int step;
  double energy;
} state_t;

int main(int argc, char *argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bool ok = argc == 2 && FTI_Init(argv[1], MPI_COMM_WORLD) == FTI_SCES;
  state_t *state = malloc(sizeof(state_t));
  memset(state, 0, sizeof(*state));
  state->step = (int)getpid() > 0 ? FTI_ENDW : 0;
  fti_id_t type = FTI_InitCompositeType("state", sizeof(state_t), NULL);
  ok = ok && type >= 0;
  ok = ok && FTI_AddScalarField(type, "step", FTI_INTG, 0) == FTI_SCES;
  ok = ok && FTI_AddScalarField(type, "energy", FTI_DBLE, sizeof(double)) == FTI_SCES;
  ok = ok && FTI_Protect(0, state, 1, type) == FTI_SCES;
  ok = ok && FTI_Checkpoint(1, FTI_L1) == FTI_DONE;
  ok = ok && FTI_Finalize() == FTI_SCES;
  if (!ok || state->step != 995) {
    printf("rank %d: fti plain program failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) printf("fti plain program: ok\n");
  free(state);
  MPI_Finalize();
  return 0;
}
