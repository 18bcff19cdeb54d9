/*
 * scr_semantics.c — SCR's documented semantics, on 2+ ranks:
 *  - SCR_Complete_output(0) on one rank discards the dataset everywhere
 *    (SCR_FAILURE on every rank);
 *  - SCR_Have_restart names the newest checkpoint dataset; when a rank
 *    passes valid = 0 to SCR_Complete_restart, every rank gets SCR_FAILURE
 *    and the next SCR_Have_restart offers the next older one;
 *  - SCR_Route_file outside a phase returns the name unchanged; an output-
 *    only dataset lands at its path;
 *  - SCR_Config before SCR_Init sets a parameter (queried back, and used:
 *    SCR_CHECKPOINT_INTERVAL), and fails after it;
 *  - in the next run (SCR_Finalize, SCR_Init) the dataset whose restart
 *    failed is still skipped; SCR_Drop removes a checkpoint from the
 *    restart choices, SCR_Current picks one, SCR_Delete removes an output
 *    dataset's files; unknown names fail;
 *  - SCR_Current of a checkpoint no longer in the cache (nor flushed)
 *    fails and changes nothing;
 *  - a file that every rank writes is refused while files are cached, and
 *    with SCR_CACHE_BYPASS=1 is written at its path and restarted from there;
 *    SCR_Delete of that checkpoint removes its file and its Cairn version.
 * Prints "scr semantics: ok" and exits 0, or names the first failed check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <mpi.h>
#include <scr.h>

#include <cairn/cairn.h>

#include "semantics_check.h"

/* One checkpoint dataset `name` whose file holds `value`; returns the
 * SCR_Complete_output result. */
static int write_dataset(const char *name, int value, int valid) {
  char path[SCR_MAX_FILENAME + 32], file[SCR_MAX_FILENAME];
  EXPECT(SCR_Start_output(name, SCR_FLAG_CHECKPOINT) == SCR_SUCCESS);
  snprintf(path, sizeof path, "%s/rank_%d", name, g_rank);
  EXPECT(SCR_Route_file(path, file) == SCR_SUCCESS);
  FILE *f = fopen(file, "w");
  EXPECT(f != NULL);
  fprintf(f, "%d\n", value);
  fclose(f);
  return SCR_Complete_output(valid);
}

/* Checkpoint dataset `name` whose one file "shared/data.ckpt" every rank
 * writes its own int into, at its rank's offset; the SCR_Complete_output
 * result. */
static int write_shared_dataset(const char *name) {
  char file[SCR_MAX_FILENAME];
  EXPECT(SCR_Start_output(name, SCR_FLAG_CHECKPOINT) == SCR_SUCCESS);
  EXPECT(SCR_Route_file("shared/data.ckpt", file) == SCR_SUCCESS);
  int value = 100 + g_rank;
  int fd = open(file, O_WRONLY | O_CREAT, 0600);
  EXPECT(fd >= 0);
  EXPECT(pwrite(fd, &value, sizeof value, (off_t)(g_rank * sizeof value)) == sizeof value);
  EXPECT(fsync(fd) == 0 && close(fd) == 0);
  return SCR_Complete_output(1);
}

int main(int argc, char *argv[]) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  EXPECT(SCR_Config("SCR_CHECKPOINT_INTERVAL=3") == NULL);
  const char *interval = SCR_Config("SCR_CHECKPOINT_INTERVAL");
  EXPECT(interval != NULL && strcmp(interval, "3") == 0);
  free((void *)interval);
  EXPECT(SCR_Init() == SCR_SUCCESS);
  EXPECT(SCR_Config("SCR_FLUSH=4") == NULL); /* too late: refused */
  EXPECT(SCR_Config("SCR_FLUSH") == NULL);
  int need[3];
  for (int i = 0; i < 3; ++i) EXPECT(SCR_Need_checkpoint(&need[i]) == SCR_SUCCESS);
  EXPECT(need[0] == 0 && need[1] == 0 && need[2] == 1);
  const char *version = SCR_Get_version();
  EXPECT(version != NULL && strncmp(version, "3.0", 3) == 0);
  char file[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME];
  EXPECT(SCR_Route_file("plain.txt", file) == SCR_SUCCESS && strcmp(file, "plain.txt") == 0);

  EXPECT(write_dataset("first", 1, 1) == SCR_SUCCESS);
  EXPECT(write_dataset("second", 2, 1) == SCR_SUCCESS);
  EXPECT(write_dataset("broken", 3, g_rank != 1) == SCR_FAILURE);

  int flag = 0;
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1);
  EXPECT(strcmp(name, "second") == 0);
  EXPECT(SCR_Start_restart(name) == SCR_SUCCESS);
  /* rank 1 cannot read its file: every rank fails, the older one is next */
  EXPECT(SCR_Complete_restart(g_rank != 1) == SCR_FAILURE);
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1);
  EXPECT(strcmp(name, "first") == 0);
  EXPECT(SCR_Start_restart(name) == SCR_SUCCESS);
  char path[SCR_MAX_FILENAME + 32];
  snprintf(path, sizeof path, "%s/rank_%d", name, g_rank);
  EXPECT(SCR_Route_file(path, file) == SCR_SUCCESS);
  int value = 0;
  FILE *f = fopen(file, "r");
  EXPECT(f != NULL && fscanf(f, "%d", &value) == 1 && value == 1);
  fclose(f);
  EXPECT(SCR_Complete_restart(1) == SCR_SUCCESS);
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 0);

  /* output-only: the file is at its own path once complete */
  EXPECT(SCR_Start_output("out", SCR_FLAG_OUTPUT) == SCR_SUCCESS);
  snprintf(path, sizeof path, "out/result_%d.txt", g_rank);
  EXPECT(SCR_Route_file(path, file) == SCR_SUCCESS);
  f = fopen(file, "w");
  EXPECT(f != NULL);
  fprintf(f, "done\n");
  fclose(f);
  EXPECT(SCR_Complete_output(1) == SCR_SUCCESS);
  EXPECT(access(path, R_OK) == 0);
  EXPECT(write_dataset("third", 4, 1) == SCR_SUCCESS);
  EXPECT(SCR_Drop("third") == SCR_SUCCESS);
  EXPECT(SCR_Drop("third") == SCR_FAILURE);
  EXPECT(SCR_Finalize() == SCR_SUCCESS);

  /* the next run: "second" failed and "third" was dropped, so "first" */
  EXPECT(SCR_Init() == SCR_SUCCESS);
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1);
  EXPECT(strcmp(name, "first") == 0);
  EXPECT(SCR_Start_restart(name) == SCR_SUCCESS);
  EXPECT(SCR_Complete_restart(1) == SCR_SUCCESS);
  EXPECT(write_dataset("fourth", 5, 1) == SCR_SUCCESS);
  EXPECT(write_dataset("fifth", 6, 1) == SCR_SUCCESS);
  /* SCR_Current goes back to "fourth" (and drops "fifth") */
  EXPECT(SCR_Current("fourth") == SCR_SUCCESS);
  EXPECT(SCR_Current("no-such-dataset") == SCR_FAILURE);
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1);
  EXPECT(strcmp(name, "fourth") == 0);
  EXPECT(SCR_Start_restart(name) == SCR_SUCCESS);
  snprintf(path, sizeof path, "%s/rank_%d", name, g_rank);
  EXPECT(SCR_Route_file(path, file) == SCR_SUCCESS);
  f = fopen(file, "r");
  EXPECT(f != NULL && fscanf(f, "%d", &value) == 1 && value == 5);
  fclose(f);
  EXPECT(SCR_Complete_restart(1) == SCR_SUCCESS);
  /* SCR_Delete of the output dataset removes its files and directory */
  EXPECT(SCR_Delete("out") == SCR_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(path, sizeof path, "out/result_%d.txt", g_rank);
  EXPECT(access(path, F_OK) != 0 && access("out", F_OK) != 0);
  EXPECT(SCR_Delete("out") == SCR_FAILURE);
  EXPECT(SCR_Finalize() == SCR_SUCCESS);

  /* a run that keeps one checkpoint, in memory only, never flushed:
   * SCR_Current of the evicted one fails and leaves the newest to restart
   * from */
  setenv("CAIRN_TIERS_SSD_ENABLED", "false", 1);
  setenv("CAIRN_TIERS_MEMORY_KEEP", "1", 1);
  EXPECT(SCR_Config("SCR_FLUSH=0") == NULL);
  EXPECT(SCR_Init() == SCR_SUCCESS);
  EXPECT(write_dataset("sixth", 7, 1) == SCR_SUCCESS);
  EXPECT(write_dataset("seventh", 8, 1) == SCR_SUCCESS);
  EXPECT(SCR_Current("sixth") == SCR_FAILURE);
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1);
  EXPECT(strcmp(name, "seventh") == 0);
  /* a file every rank writes is refused while files are cached */
  EXPECT(write_shared_dataset("shared-cached") == SCR_FAILURE);
  EXPECT(SCR_Finalize() == SCR_SUCCESS);

  /* SCR_CACHE_BYPASS: a shared file is written at its path under the
   * prefix, and the next run restarts from it there */
  EXPECT(SCR_Config("SCR_CACHE_BYPASS=1") == NULL);
  EXPECT(SCR_Init() == SCR_SUCCESS);
  EXPECT(write_shared_dataset("shared") == SCR_SUCCESS);
  EXPECT(access("shared/data.ckpt", R_OK) == 0);
  EXPECT(SCR_Finalize() == SCR_SUCCESS);
  EXPECT(SCR_Init() == SCR_SUCCESS);
  EXPECT(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1);
  EXPECT(strcmp(name, "shared") == 0);
  EXPECT(SCR_Start_restart(name) == SCR_SUCCESS);
  EXPECT(SCR_Route_file("shared/data.ckpt", file) == SCR_SUCCESS);
  int fd = open(file, O_RDONLY);
  int stored = -1;
  EXPECT(fd >= 0 && pread(fd, &stored, sizeof stored, (off_t)(g_rank * sizeof stored)) == sizeof stored);
  close(fd);
  EXPECT(stored == 100 + g_rank);
  EXPECT(SCR_Complete_restart(1) == SCR_SUCCESS);
  /* the restart leaves the file where it is */
  EXPECT(access("shared/data.ckpt", R_OK) == 0);
  /* SCR_Delete of a checkpoint: its files and its Cairn version go */
  int newest = cairn_restart_test("scr", -1);
  EXPECT(newest >= 0);
  EXPECT(SCR_Delete("shared") == SCR_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(access("shared/data.ckpt", F_OK) != 0);
  int after = cairn_restart_test("scr", -1);
  EXPECT(after < newest);
  EXPECT(SCR_Finalize() == SCR_SUCCESS);
  if (g_rank == 0) printf("scr semantics: ok\n");
  MPI_Finalize();
  return 0;
}
