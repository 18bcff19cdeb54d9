/* Built by install_test.sh against an installed Cairn exactly as the
 * README says (mpicc $(pkg-config --cflags --libs cairn)) and run without
 * LD_LIBRARY_PATH: a checkpoint and restart round trip on every rank, then
 * cairn_delete of that checkpoint while another one stays.
 * argv[1]: the configuration file. */
#include <cairn/cairn.h>

#include <stdio.h>
#include <string.h>

static int check(int rc, const char *what) {
  if (rc < 0) fprintf(stderr, "%s: %s\n", what, cairn_error_message(rc));
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long cells[1024];
  for (int i = 0; i < 1024; ++i) cells[i] = rank * 100000L + i;
  failed |= check(cairn_init(MPI_COMM_WORLD, argc > 1 ? argv[1] : NULL), "cairn_init") < 0;
  failed |= check(cairn_protect(0, cells, 1024, sizeof(long)), "cairn_protect") < 0;
  failed |= check(cairn_checkpoint("installed", 7), "cairn_checkpoint") < 0;
  memset(cells, 0, sizeof cells);
  failed |= check(cairn_restart("installed", 7), "cairn_restart") != 7;
  failed |= cells[1023] != rank * 100000L + 1023;
  failed |= check(cairn_checkpoint("kept", 1), "cairn_checkpoint") < 0;
  failed |= check(cairn_checkpoint_wait(), "cairn_checkpoint_wait") < 0;
  failed |= check(cairn_delete("installed"), "cairn_delete") < 0;
  failed |= cairn_restart_test("installed", -1) != -1 || cairn_last_error() != CAIRN_SUCCESS;
  failed |= cairn_restart_test("kept", -1) != 1;
  failed |= check(cairn_finalize(), "cairn_finalize") < 0;
  if (rank == 0) printf("cairn %d: round trip %s\n", cairn_version(), failed ? "FAILED" : "ok");
  MPI_Finalize();
  return failed;
}
