/* The protected-allocation path of transparent mode, from C, without the
 * preloaded library: cairn_malloc_protected blocks are checkpointed when
 * the signal asks (cairn_checkpoint_point), and a new process that
 * allocates them in the same order gets their bytes back.
 * usage: malloc_protected_test DIR          (writes, then execs the reader)
 *        malloc_protected_test DIR read     (the restarted process) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAIRN_NO_MPI
#include "cairn/cairn.h"

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: %s failed (%s)\n", __FILE__, __LINE__, #cond,             \
              cairn_error_message(CAIRN_LAST_ERROR));                                   \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

static const size_t kSizes[2] = {100000, 5000};
static const unsigned kSeed = 20261124;

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (unsigned char)(seed >> 16);
  }
}

static int write_phase(const char *self, const char *dir) {
  printf("seed %u\n", kSeed);
  CHECK(cairn_malloc_protected(16) == NULL && cairn_last_error() == CAIRN_E_NOT_INITIALIZED);
  CHECK(cairn_init_single(NULL) == CAIRN_SUCCESS);
  unsigned char *block[2];
  for (int i = 0; i < 2; ++i) {
    block[i] = cairn_malloc_protected(kSizes[i]);
    CHECK(block[i] != NULL && ((size_t)block[i] % 4096) == 0 && block[i][kSizes[i] - 1] == 0);
    fill(block[i], kSizes[i], kSeed + i);
  }
  int stray = 0;
  CHECK(cairn_free_protected(&stray) == CAIRN_E_NOT_FOUND);
  CHECK(strstr(cairn_error_message(CAIRN_LAST_ERROR), "not a block") != NULL);
  /* A live block's region is not the caller's to replace or forget: it
   * stays in the checkpoint (the reader checks its bytes). An id of the
   * range that no block holds is the caller's. */
  CHECK(cairn_protect(CAIRN_PROTECTED_ID_BASE, &stray, 1, sizeof stray) ==
        CAIRN_E_INVALID_ARGUMENT);
  CHECK(strstr(cairn_error_message(CAIRN_LAST_ERROR), "cairn_malloc_protected") != NULL);
  CHECK(cairn_unprotect(CAIRN_PROTECTED_ID_BASE + 1) == CAIRN_E_INVALID_ARGUMENT);
  CHECK(cairn_protect(CAIRN_PROTECTED_ID_BASE + 100, &stray, 1, sizeof stray) == CAIRN_SUCCESS);
  CHECK(cairn_unprotect(CAIRN_PROTECTED_ID_BASE + 100) == CAIRN_SUCCESS);

  /* No request yet: a safe point does nothing. */
  CHECK(cairn_checkpoint_point() == 0);
  CHECK(raise(SIGUSR1) == 0);
  CHECK(cairn_checkpoint_requested() == 1);
  CHECK(cairn_checkpoint_requested() == 1); /* pending until a checkpoint commits */
  CHECK(cairn_checkpoint_point() == 1);
  CHECK(cairn_checkpoint_point() == 0);
  cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
  CHECK(cairn_last_checkpoint(&info) == CAIRN_SUCCESS && info.version == 0);
  CHECK(strcmp(info.tracking, "") == 0); /* no preloaded heap in this process */
  /* The bytes after the checkpoint must not come back. */
  memset(block[0], 0xee, kSizes[0]);
  CHECK(cairn_free_protected(block[1]) == CAIRN_SUCCESS);
  CHECK(cairn_finalize() == CAIRN_SUCCESS);
  fflush(stdout);
  execl(self, self, dir, "read", (char *)NULL);
  perror("execl");
  return 1;
}

static int read_phase(void) {
  CHECK(cairn_init_single(NULL) == CAIRN_SUCCESS);
  unsigned char *block[2], *expected[2];
  for (int i = 0; i < 2; ++i) {
    block[i] = cairn_malloc_protected(kSizes[i]);
    CHECK(block[i] != NULL);
    expected[i] = malloc(kSizes[i]);
    fill(expected[i], kSizes[i], kSeed + i);
  }
  CHECK(cairn_restart_test("transparent", -1) == 0);
  CHECK(cairn_restart("transparent", 0) == 0);
  for (int i = 0; i < 2; ++i) {
    if (memcmp(block[i], expected[i], kSizes[i]) != 0) {
      fprintf(stderr, "block %d differs after the restart (seed %u)\n", i, kSeed);
      return 1;
    }
  }
  CHECK(cairn_finalize() == CAIRN_SUCCESS);
  printf("PASS: protected blocks restored bit for bit\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [read]\n", argv[0]);
    return 2;
  }
  setenv("CAIRN_DIR", argv[1], 1);
  char memory[4096];
  snprintf(memory, sizeof memory, "%s/memory", argv[1]);
  setenv("CAIRN_TIERS_MEMORY_PATH", memory, 1);
  if (argc > 2 && strcmp(argv[2], "read") == 0) return read_phase();
  return write_phase(argv[0], argv[1]);
}
