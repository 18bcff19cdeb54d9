/*
 * security_app.c — the victim job of security_test.py (CTest label
 * reliability): a cairn_init_single process that protects 4 MiB and
 * checkpoints or restarts "heat".
 *
 *   security_app CONFIG checkpoint V   init, checkpoint version V, finalize
 *   security_app CONFIG restart        init, restart the newest version and
 *                                      print "restored V" (or "none")
 *   security_app CONFIG hold           init, print "ready", then wait until
 *                                      stdin closes (or the process is killed)
 *
 * Exit status 0 on success; 1 with "security_app: <step>: <Cairn's message>"
 * on stderr when a call fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn/cairn.h"

enum { kWords = 512 * 1024 }; /* 4 MiB: large enough for a memory-tier slot */

static uint64_t g_data[kWords];

static int Fail(const char *step, int code) {
  fprintf(stderr, "security_app: %s: %s\n", step, cairn_error_message(code));
  return 1;
}

static void Fill(int version) {
  for (size_t i = 0; i < kWords; ++i) g_data[i] = (uint64_t)version * 1000003u + i;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: security_app CONFIG checkpoint V | restart | hold\n");
    return 2;
  }
  int rc = cairn_init_single(argv[1]);
  if (rc != CAIRN_SUCCESS) return Fail("init", rc);
  rc = cairn_protect(0, g_data, kWords, sizeof(uint64_t));
  if (rc != CAIRN_SUCCESS) return Fail("protect", rc);
  if (strcmp(argv[2], "checkpoint") == 0 && argc == 4) {
    int version = atoi(argv[3]);
    Fill(version);
    rc = cairn_checkpoint("heat", version);
    if (rc != CAIRN_SUCCESS) return Fail("checkpoint", rc);
  } else if (strcmp(argv[2], "restart") == 0) {
    int version = cairn_restart_test("heat", -1);
    if (version < 0) {
      if (cairn_last_error() != CAIRN_SUCCESS) return Fail("restart_test", CAIRN_LAST_ERROR);
      printf("none\n");
    } else {
      rc = cairn_restart("heat", version);
      if (rc < 0) return Fail("restart", rc);
      for (size_t i = 0; i < kWords; ++i) {
        if (g_data[i] != (uint64_t)rc * 1000003u + i) {
          fprintf(stderr, "security_app: word %zu differs from version %d's\n", i, rc);
          return 1;
        }
      }
      printf("restored %d\n", rc);
    }
  } else if (strcmp(argv[2], "hold") == 0) {
    printf("ready\n");
    fflush(stdout);
    while (getchar() != EOF) {
    }
  } else {
    fprintf(stderr, "security_app: unknown command '%s'\n", argv[2]);
    return 2;
  }
  rc = cairn_finalize();
  if (rc != CAIRN_SUCCESS) return Fail("finalize", rc);
  return 0;
}
