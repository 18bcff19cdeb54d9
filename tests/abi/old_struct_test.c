/* An application built against an older cairn.h (old_cairn.h: a shorter
 * cairn_restart_info and cairn_checkpoint_info) calls today's library:
 * cairn_last_restart and cairn_last_checkpoint must fill the fields the old
 * structs have and write no byte past their ends, nor before them. Each
 * struct sits between canary bytes in a larger buffer. */
#include "old_cairn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kCanary = 0xA5, kGuard = 256 };

static int failures = 0;

#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

/* Index of the first byte of buf[from, to) that is not the canary, or -1. */
static long first_overwritten(const unsigned char *buf, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (buf[i] != kCanary) return (long)i;
  }
  return -1;
}

/* A struct of `size` bytes between kGuard canary bytes on each side; the
 * union keeps it aligned. */
typedef union {
  unsigned char bytes[kGuard + 1024 + kGuard];
  double align;
} probe_buffer;
_Static_assert(sizeof(cairn_restart_info) <= 1024 && sizeof(cairn_checkpoint_info) <= 1024,
               "each old struct fits between the canaries");

static void *start_probe(probe_buffer *probe, const void *init, size_t size) {
  memset(probe->bytes, kCanary, sizeof probe->bytes);
  memcpy(probe->bytes + kGuard, init, size);
  return probe->bytes + kGuard;
}

/* Fails unless every canary around the struct of `size` bytes is intact. */
static void expect_canaries(const probe_buffer *probe, size_t size, const char *what) {
  long before = first_overwritten(probe->bytes, 0, kGuard);
  long after = first_overwritten(probe->bytes, kGuard + size, kGuard + size + kGuard);
  if (before >= 0) fprintf(stderr, "%s: byte %ld before the struct was written\n", what, kGuard - before);
  if (after >= 0) {
    fprintf(stderr, "%s: byte %ld past the end of the old struct (%zu bytes) was written\n", what,
            after - (long)(kGuard + size), size);
  }
  EXPECT(before < 0);
  EXPECT(after < 0);
}

int main(void) {
  char dir[] = "/tmp/cairn-abi-XXXXXX";
  if (mkdtemp(dir) == NULL) return 2;
  char config[512];
  snprintf(config, sizeof config, "%s/c.toml", dir);
  FILE *f = fopen(config, "w");
  if (f == NULL) return 2;
  fprintf(f, "[general]\ndir = \"%s\"\nlog_level = \"off\"\n[tiers.memory]\npath = \"%s/shm/{node}\"\n",
          dir, dir);
  fclose(f);

  double state[512];
  for (int i = 0; i < 512; ++i) state[i] = i * 1.5;
  EXPECT(cairn_init_single(config) == 0);
  EXPECT(cairn_protect(0, state, 512, sizeof(double)) == 0);
  EXPECT(cairn_checkpoint("abi", 4) == 0);
  memset(state, 0, sizeof state);
  EXPECT(cairn_restart("abi", 4) == 4);
  EXPECT(state[511] == 511 * 1.5);

  probe_buffer probe;
  cairn_restart_info restart_init = CAIRN_RESTART_INFO_INIT;
  cairn_restart_info *info = start_probe(&probe, &restart_init, sizeof restart_init);
  int rc = cairn_last_restart(info);
  if (rc != 0) fprintf(stderr, "cairn_last_restart: %s\n", cairn_error_message(rc));
  EXPECT(rc == 0);
  EXPECT(info->size == sizeof(cairn_restart_info));
  EXPECT(info->requested == 4);
  EXPECT(info->version == 4);
  EXPECT(strcmp(info->tier, "memory") == 0);
  EXPECT(info->bytes >= sizeof state);
  expect_canaries(&probe, sizeof(cairn_restart_info), "cairn_last_restart");

  cairn_checkpoint_info checkpoint_init = CAIRN_CHECKPOINT_INFO_INIT;
  cairn_checkpoint_info *checkpoint = start_probe(&probe, &checkpoint_init, sizeof checkpoint_init);
  rc = cairn_last_checkpoint(checkpoint);
  if (rc != 0) fprintf(stderr, "cairn_last_checkpoint: %s\n", cairn_error_message(rc));
  EXPECT(rc == 0);
  EXPECT(checkpoint->size == sizeof(cairn_checkpoint_info));
  EXPECT(checkpoint->version == 4);
  EXPECT(strcmp(checkpoint->tier, "memory") == 0);
  EXPECT(checkpoint->bytes >= sizeof state);
  expect_canaries(&probe, sizeof(cairn_checkpoint_info), "cairn_last_checkpoint");
  EXPECT(cairn_finalize() == 0);

  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) ++failures;
  printf("old structs of %zu and %zu bytes: %s\n", sizeof(cairn_restart_info),
         sizeof(cairn_checkpoint_info), failures == 0 ? "nothing written past them" : "FAILED");
  return failures == 0 ? 0 : 1;
}
