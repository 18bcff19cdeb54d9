/* An application built against an older cairn.h (old_cairn.h: a shorter
 * cairn_restart_info) calls today's library: cairn_last_restart must fill
 * the fields the old struct has and write no byte past its end, nor before
 * it. The struct sits between canary bytes in a larger buffer. */
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

  /* A union keeps the struct aligned inside the canary buffer. */
  union {
    unsigned char bytes[kGuard + sizeof(cairn_restart_info) + kGuard];
    double align;
  } probe;
  memset(probe.bytes, kCanary, sizeof probe.bytes);
  cairn_restart_info *info = (cairn_restart_info *)(probe.bytes + kGuard);
  cairn_restart_info init = CAIRN_RESTART_INFO_INIT;
  memcpy(info, &init, sizeof init);
  int rc = cairn_last_restart(info);
  if (rc != 0) fprintf(stderr, "cairn_last_restart: %s\n", cairn_error_message(rc));
  EXPECT(rc == 0);
  EXPECT(info->size == sizeof(cairn_restart_info));
  EXPECT(info->requested == 4);
  EXPECT(info->version == 4);
  EXPECT(strcmp(info->tier, "memory") == 0);
  EXPECT(info->bytes >= sizeof state);
  long before = first_overwritten(probe.bytes, 0, kGuard);
  long after = first_overwritten(probe.bytes, kGuard + sizeof(cairn_restart_info), sizeof probe.bytes);
  if (before >= 0) fprintf(stderr, "byte %ld before the struct was written\n", kGuard - before);
  if (after >= 0) {
    fprintf(stderr, "byte %ld past the end of the old struct (%zu bytes) was written\n",
            after - (long)(kGuard + sizeof(cairn_restart_info)), sizeof(cairn_restart_info));
  }
  EXPECT(before < 0);
  EXPECT(after < 0);
  EXPECT(cairn_finalize() == 0);

  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) ++failures;
  printf("old struct of %zu bytes: %s\n", sizeof(cairn_restart_info),
         failures == 0 ? "nothing written past it" : "FAILED");
  return failures == 0 ? 0 : 1;
}
