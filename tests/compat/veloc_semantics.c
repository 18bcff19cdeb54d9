/*
 * veloc_semantics.c — VeloC's documented semantics, on 2+ ranks:
 *  - VELOC_Checkpoint_end(0) on one rank commits the version on no rank;
 *  - VELOC_Restart_test(name, needed) is the newest version <= needed (0: any),
 *    VELOC_FAILURE when there is none;
 *  - VELOC_Restart brings back the protected memory of the version asked for;
 *  - VELOC_Checkpoint_selective(SOME) saves only the ids listed, and
 *    VELOC_Recover_selective(SOME) overwrites only the ids listed;
 *  - in the next run (a new client), VELOC_Recover_size tells a region's
 *    stored size before anything is protected, as VeloC's Python binding
 *    restores a pickled state; a larger region takes it, a smaller one fails;
 *  - VELOC_Region_protect groups: a checkpoint named after a group saves that
 *    group instead of the VELOC_Mem_protect regions;
 *  - VELOC_Route_file: one file per checkpoint, rank and version, whatever
 *    name the program routes (and a version of an older Cairn found under
 *    its encoded path);
 *  - VELOC_Cleanup keeps the persistent copies; VELOC_Checkpoint_finished.
 * Prints "veloc semantics: ok" and exits 0, or names the first check that failed.
 *
 *   veloc_semantics CONFIG
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <veloc.h>

#include <cairn/cairn.h>

#include "semantics_check.h"

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return -1;
  int failed = fputs(text, f) < 0;
  return fclose(f) != 0 || failed ? -1 : 0;
}

static int read_text_is(const char *path, const char *text) {
  char buf[64] = {0};
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  return n == strlen(text) && memcmp(buf, text, n) == 0;
}

int main(int argc, char *argv[]) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  EXPECT(argc == 2);
  EXPECT(VELOC_Init(MPI_COMM_WORLD, argv[1]) == VELOC_SUCCESS);
  int x = 0, y = 0;
  EXPECT(VELOC_Mem_protect(0, &x, 1, sizeof x) == VELOC_SUCCESS);
  EXPECT(VELOC_Mem_protect(1, &y, 1, sizeof y) == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_test("sem", 0) == VELOC_FAILURE);

  x = 1, y = 10;
  EXPECT(VELOC_Checkpoint("sem", 1) == VELOC_SUCCESS);
  /* rank 1 fails to write version 2: nobody commits it */
  x = 2, y = 20;
  EXPECT(VELOC_Checkpoint_begin("sem", 2) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_mem() == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_end(g_rank != 1) == VELOC_FAILURE);
  EXPECT(VELOC_Restart_test("sem", 0) == 1);
  x = 3, y = 30;
  EXPECT(VELOC_Checkpoint("sem", 3) == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_test("sem", 0) == 3);
  EXPECT(VELOC_Restart_test("sem", 2) == 1);
  EXPECT(VELOC_Restart_test("sem", 3) == 3);

  x = -1, y = -1;
  EXPECT(VELOC_Restart("sem", 1) == VELOC_SUCCESS);
  EXPECT(x == 1 && y == 10);

  /* selective: version 4 holds region 0 only */
  int only_x[1] = {0};
  x = 4, y = 40;
  EXPECT(VELOC_Checkpoint_begin("sel", 4) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_selective(VELOC_CKPT_SOME, only_x, 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_end(1) == VELOC_SUCCESS);
  /* version 5 holds both; recover only y */
  x = 5, y = 50;
  EXPECT(VELOC_Checkpoint("sel", 5) == VELOC_SUCCESS);
  int only_y[1] = {1};
  x = -1, y = -1;
  EXPECT(VELOC_Restart_begin("sel", 5) == VELOC_SUCCESS);
  EXPECT(VELOC_Recover_selective(VELOC_RECOVER_SOME, only_y, 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_end(1) == VELOC_SUCCESS);
  EXPECT(x == -1 && y == 50);
  /* an unknown id is an error, not a silent skip */
  int unknown[1] = {7};
  EXPECT(VELOC_Checkpoint_begin("sel", 6) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_selective(VELOC_CKPT_SOME, unknown, 1) == VELOC_FAILURE);
  EXPECT(VELOC_Checkpoint_end(0) == VELOC_FAILURE);

  /* stored sizes: version 7 of "blob" holds 100 bytes (plus the rank) */
  enum { kBlob = 100 };
  char blob[kBlob];
  for (int i = 0; i < kBlob; ++i) blob[i] = (char)(i * 7 + g_rank);
  EXPECT(VELOC_Mem_clear() == VELOC_SUCCESS);
  EXPECT(VELOC_Mem_protect(0, blob, kBlob, 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint("blob", 7) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_finished() == VELOC_SUCCESS);
  EXPECT(VELOC_Finalize(1) == VELOC_SUCCESS);

  /* the next run: a new client with nothing protected */
  EXPECT(VELOC_Init(MPI_COMM_WORLD, argv[1]) == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_test("blob", 0) == 7);
  EXPECT(VELOC_Restart_begin("blob", 7) == VELOC_SUCCESS);
  int size = VELOC_Recover_size(0);
  EXPECT(size == kBlob);
  EXPECT(VELOC_Recover_size(5) == VELOC_FAILURE);
  char small[kBlob / 2];
  EXPECT(VELOC_Mem_protect(0, small, sizeof small, 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Recover_mem() == VELOC_FAILURE);
  char *back = calloc((size_t)size + 8, 1); /* larger than stored: fine */
  EXPECT(back != NULL);
  EXPECT(VELOC_Mem_protect(0, back, (size_t)size + 8, 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Recover_mem() == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_end(1) == VELOC_SUCCESS);
  EXPECT(memcmp(back, blob, kBlob) == 0 && back[kBlob] == 0);
  EXPECT(VELOC_Recover_size(0) == VELOC_FAILURE); /* outside a restart phase */

  /* region groups: "grp" saves its own group, not region 0 of the default */
  int z = 70 + g_rank;
  EXPECT(VELOC_Region_protect(3, &z, 1, sizeof z, "grp") == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint("grp", 1) == VELOC_SUCCESS);
  z = -1;
  back[0] = 99;
  EXPECT(VELOC_Restart("grp", 1) == VELOC_SUCCESS);
  EXPECT(z == 70 + g_rank && back[0] == 99);
  EXPECT(VELOC_Restart_begin("grp", 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Recover_size(3) == (int)sizeof z && VELOC_Recover_size(0) == VELOC_FAILURE);
  EXPECT(VELOC_Restart_end(1) == VELOC_SUCCESS);
  EXPECT(VELOC_Region_unprotect(3, "grp") == VELOC_SUCCESS);
  EXPECT(VELOC_Region_unprotect(3, "grp") == VELOC_FAILURE);

  /* routed files: one per checkpoint, rank and version, whatever the name
   * given (written as "w.dat", read back as "elsewhere/r.dat") */
  char routed[VELOC_MAX_NAME], again[VELOC_MAX_NAME];
  EXPECT(VELOC_Checkpoint_begin("files", 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Route_file("w.dat", routed) == VELOC_SUCCESS);
  EXPECT(write_text(routed, "one") == 0);
  EXPECT(VELOC_Checkpoint_end(1) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_begin("files", 2) == VELOC_SUCCESS);
  EXPECT(VELOC_Route_file("w.dat", routed) == VELOC_SUCCESS);
  EXPECT(write_text(routed, "two") == 0);
  EXPECT(VELOC_Checkpoint_end(1) == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_begin("files", 1) == VELOC_SUCCESS);
  EXPECT(VELOC_Route_file("elsewhere/r.dat", again) == VELOC_SUCCESS);
  EXPECT(read_text_is(again, "one"));
  EXPECT(VELOC_Restart_end(1) == VELOC_SUCCESS);
  /* a version written by an older Cairn holds the file under the encoded
   * absolute path of the name routed ("/tmp/old.dat"): found there */
  EXPECT(cairn_route_file("_2Ftmp_2Fold.dat", routed, sizeof routed) == CAIRN_SUCCESS);
  EXPECT(write_text(routed, "old") == 0);
  EXPECT(VELOC_Checkpoint_begin("files", 3) == VELOC_SUCCESS);
  EXPECT(VELOC_Checkpoint_end(1) == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_begin("files", 3) == VELOC_SUCCESS);
  EXPECT(VELOC_Route_file("/tmp/old.dat", again) == VELOC_SUCCESS);
  EXPECT(read_text_is(again, "old"));
  EXPECT(VELOC_Restart_end(1) == VELOC_SUCCESS);

  /* the configuration has a persistent directory: its copies stay */
  EXPECT(VELOC_Cleanup("grp") == VELOC_SUCCESS);
  EXPECT(VELOC_Restart_test("grp", 0) == 1);

  EXPECT(VELOC_Finalize(1) == VELOC_SUCCESS);
  free(back);
  if (g_rank == 0) printf("veloc semantics: ok\n");
  MPI_Finalize();
  return 0;
}
