/*
 * kill_app.c — the job of the MPI kill campaign (kill_campaign.py).
 *
 * Each rank owns --mib MiB of 64-bit words and a step counter, both protected
 * with Cairn. Every step updates each word with integer arithmetic that
 * depends on the rank, the step and a value all ranks agree on through
 * MPI_Allreduce (so the ranks are coupled as in a real solver, and one lost
 * rank stops the job), and every --every steps the job checkpoints version =
 * step. The final state is a pure function of --steps, --mib and the rank
 * count, however often the job was killed and restarted.
 *
 * A third protected region, a 1 MiB table, gives [dedup] something to find:
 * its first half is the same on every rank and changes every third step
 * (pages another rank stores, pages unchanged since the last version), its
 * second half repeats every 8 KiB within a rank and changes every second
 * step (pages equal to another page of the rank). Each change depends on
 * the table's bytes before it, so a page restored wrongly stays wrong and
 * reaches the final digest.
 *
 * Side files, written so that the campaign can tell what happened:
 *   --pids DIR      each rank writes DIR/<rank>.pid at start (atomically)
 *   --ack FILE      rank 0 appends "V\n" (fsync'd) after cairn_checkpoint(V)
 *                   returned success: V was acknowledged to the application
 *   --restored FILE rank 0 writes the version it restarted from ("-1": none)
 *   --out FILE      rank 0 writes the final digest (hex) at the end
 * Exit status: 0 on success, 1 on an error (printed with Cairn's message).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "cairn/cairn.h"

static int g_rank = 0;

static void Die(const char *what, const char *why) {
  fprintf(stderr, "kill_app: rank %d: %s: %s\n", g_rank, what, why);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static int Check(int rc, const char *what) {
  if (rc < 0) Die(what, cairn_error_message(rc));
  return rc;
}

/* Writes text to path through a temporary name (atomic for the reader). */
static void WriteFileAtomically(const char *path, const char *text) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) Die(tmp, strerror(errno));
  size_t n = strlen(text);
  if (write(fd, text, n) != (ssize_t)n || fsync(fd) != 0) Die(tmp, strerror(errno));
  close(fd);
  if (rename(tmp, path) != 0) Die(path, strerror(errno));
}

static void AppendLine(const char *path, long value) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) Die(path, strerror(errno));
  char line[32];
  int n = snprintf(line, sizeof line, "%ld\n", value);
  if (write(fd, line, (size_t)n) != n || fsync(fd) != 0) Die(path, strerror(errno));
  close(fd);
}

static uint64_t Mix(uint64_t x) { /* splitmix64 finalizer */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t Digest(const uint64_t *words, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = Mix(h ^ words[i]);
  return h;
}

enum { kTableWords = 1 << 17, kRepeatWords = 1024 };

static void InitTable(uint64_t *table) {
  for (size_t i = 0; i < kTableWords / 2; ++i) table[i] = Mix(i);
  for (size_t i = kTableWords / 2; i < kTableWords; ++i) {
    table[i] = Mix(((uint64_t)g_rank << 40) ^ (i % kRepeatWords));
  }
}

/* The table's change at `step` (the step just completed). */
static void UpdateTable(uint64_t *table, int step) {
  if (step % 3 == 0) {
    for (size_t i = 0; i < kTableWords / 2; ++i) table[i] = Mix(table[i] + (uint64_t)step);
  }
  if (step % 2 == 0) {
    for (size_t i = kTableWords / 2; i < kTableWords; ++i) table[i] = Mix(table[i] ^ (uint64_t)step);
  }
}

typedef struct Options {
  int steps, every, mib;
  const char *config, *pids, *ack, *restored, *out;
} Options;

static void ParseOptions(int argc, char **argv, Options *o) {
  memset(o, 0, sizeof *o);
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (strcmp(a, "--steps") == 0) o->steps = atoi(v);
    else if (strcmp(a, "--every") == 0) o->every = atoi(v);
    else if (strcmp(a, "--mib") == 0) o->mib = atoi(v);
    else if (strcmp(a, "--config") == 0) o->config = v;
    else if (strcmp(a, "--pids") == 0) o->pids = v;
    else if (strcmp(a, "--ack") == 0) o->ack = v;
    else if (strcmp(a, "--restored") == 0) o->restored = v;
    else if (strcmp(a, "--out") == 0) o->out = v;
    else Die("command line", a);
  }
  if (o->steps < 1 || o->every < 1 || o->mib < 1 || !o->pids || !o->ack || !o->restored ||
      !o->out) {
    Die("command line", "need --steps --every --mib --pids --ack --restored --out");
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  Options opt;
  ParseOptions(argc, argv, &opt);

  char path[4096], text[64];
  snprintf(path, sizeof path, "%s/%d.pid", opt.pids, g_rank);
  snprintf(text, sizeof text, "%ld\n", (long)getpid());
  WriteFileAtomically(path, text);

  const size_t n = (size_t)opt.mib << 17; /* 64-bit words */
  uint64_t *state = malloc(n * sizeof *state);
  if (state == NULL) Die("malloc", strerror(errno));
  for (size_t i = 0; i < n; ++i) state[i] = Mix(((uint64_t)g_rank << 40) ^ i);
  uint64_t *table = malloc(kTableWords * sizeof *table);
  if (table == NULL) Die("malloc", strerror(errno));
  InitTable(table);
  int step = 0;

  Check(cairn_init(MPI_COMM_WORLD, opt.config), "cairn_init");
  Check(cairn_protect(0, state, n, sizeof *state), "cairn_protect(state)");
  Check(cairn_protect(1, &step, 1, sizeof step), "cairn_protect(step)");
  Check(cairn_protect(2, table, kTableWords, sizeof *table), "cairn_protect(table)");
  int latest = cairn_restart_test("kill", -1);
  if (latest < -1) Die("cairn_restart_test", cairn_error_message(latest));
  if (latest >= 0) {
    int restored = Check(cairn_restart("kill", latest), "cairn_restart");
    if (restored != step) Die("cairn_restart", "the restored step counter is not the version");
  }
  if (g_rank == 0) {
    snprintf(text, sizeof text, "%d\n", latest >= 0 ? step : -1);
    WriteFileAtomically(opt.restored, text);
  }

  while (step < opt.steps) {
    uint64_t local = Digest(state, n), global = 0;
    if (MPI_Allreduce(&local, &global, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD) != MPI_SUCCESS) {
      Die("MPI_Allreduce", "failed");
    }
    const uint64_t salt = Mix(global ^ ((uint64_t)step << 20) ^ (uint64_t)g_rank);
    for (size_t i = 0; i < n; ++i) state[i] = Mix(state[i] + salt + i);
    ++step;
    UpdateTable(table, step);
    if (step % opt.every == 0) {
      Check(cairn_checkpoint("kill", step), "cairn_checkpoint");
      if (g_rank == 0) AppendLine(opt.ack, step);
    }
  }

  uint64_t mine = Digest(state, n) ^ Mix(Digest(table, kTableWords));
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  uint64_t *all = malloc((size_t)nranks * sizeof *all);
  if (all == NULL) Die("malloc", strerror(errno));
  MPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  Check(cairn_checkpoint_wait(), "cairn_checkpoint_wait");
  Check(cairn_finalize(), "cairn_finalize");
  if (g_rank == 0) {
    snprintf(text, sizeof text, "%016llx\n", (unsigned long long)Digest(all, (size_t)nranks));
    WriteFileAtomically(opt.out, text);
  }
  free(all);
  free(table);
  free(state);
  MPI_Finalize();
  return 0;
}
