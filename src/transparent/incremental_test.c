/* Incremental versions of a preloaded heap (label transparent; run by
 * incremental_test.sh under libcairn_intercept.so, once per tracking
 * method). The program allocates with malloc, writes a few known pages
 * between signal-requested checkpoints, and reads cairn_last_checkpoint
 * (it links libcairn for that alone) to check that each version hashed
 * only the heap pages written since the previous one, plus the untracked
 * stack and data. With TEST_CRASH set, it kills itself after version 2;
 * the same command without it restarts from version 2 in MPI_Init, checks
 * every byte of the restored heap, and goes on to versions 3 (the first
 * after a restart: every page hashed) and 4 (incremental again, with a
 * page received by MPI_Sendrecv).
 *
 * Between two checkpoints the program does nothing but the writes it
 * counts: no stdio (its buffers live in the heap), no allocation. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn/cairn.h"

enum { kPage = 4096, kGrownPages = 300 };

static int rank;
static int kPages = 512;  /* argv[1]: more for a figure (docs/results.md) */
static uint8_t *heap;   /* kPages pages */
static uint8_t *grown;  /* kGrownPages pages, allocated before version 2 */
static int stamps;      /* writes made so far: the content is a function of them */

static void fail(const char *what, long long got, long long want) {
  fprintf(stderr, "FAIL rank %d: %s: %lld, expected %lld\n", rank, what, got, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The stamp that wrote page `page` last (stamp s writes page (s * 37) %
 * kPages with s + 1 in its first 8 bytes), or -1. */
static int LastStamp(int page) {
  int last = -1;
  for (int s = 0; s < stamps; ++s) {
    if ((s * 37) % kPages == page) last = s;
  }
  return last;
}

static void Fill(uint8_t *p, int pages, int salt) {
  for (int page = 0; page < pages; ++page) {
    for (int at = 0; at < kPage; ++at) p[(size_t)page * kPage + at] = (uint8_t)(page * 7 + rank * 13 + at + salt);
  }
}

/* Writes `count` more stamps: each dirties exactly one page of heap. */
static void Stamp(int count) {
  for (int i = 0; i < count; ++i, ++stamps) {
    uint8_t *p = heap + (size_t)((stamps * 37) % kPages) * kPage;
    for (int at = 0; at < 8; ++at) p[at] = (uint8_t)(stamps + 1 + at);
  }
}

static void CheckContents(void) {
  for (int page = 0; page < kPages; ++page) {
    int last = LastStamp(page);
    for (int at = 0; at < kPage; ++at) {
      uint8_t want = last >= 0 && at < 8 ? (uint8_t)(last + 1 + at) : (uint8_t)(page * 7 + rank * 13 + at);
      if (heap[(size_t)page * kPage + at] != want) fail("heap byte differs at page", page, -1);
    }
  }
  if (grown == NULL) return;
  for (int page = 0; page < kGrownPages; ++page) {
    for (int at = 0; at < kPage; ++at) {
      if (grown[(size_t)page * kPage + at] != (uint8_t)(page * 7 + rank * 13 + at + 5)) {
        fail("grown byte differs at page", page, -1);
      }
    }
  }
}

/* Receives one page of `grown` from the previous rank, holding the bytes
 * it holds already: a page MPI writes (the wrapper notes receive buffers
 * as written, for transports whose writes a tracker cannot see). */
static void ReceivePage(void) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int to = (rank + 1) % size;
  int from = (rank + size - 1) % size;
  /* One whole memory page near the end of the block (which need not start
   * on a page boundary). */
  uintptr_t near_end = (uintptr_t)(grown + (size_t)(kGrownPages - 2) * kPage);
  size_t offset = ((near_end + kPage - 1) & ~(uintptr_t)(kPage - 1)) - (uintptr_t)grown;
  uint8_t out[kPage];
  for (int i = 0; i < kPage; ++i) {
    size_t o = offset + i;
    out[i] = (uint8_t)((int)(o / kPage) * 7 + to * 13 + (int)(o % kPage) + 5);
  }
  MPI_Sendrecv(out, kPage, MPI_BYTE, to, 0, grown + offset, kPage, MPI_BYTE, from, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Asks for a checkpoint and reaches the safe point that takes it. */
static void Checkpoint(void) {
  raise(SIGUSR1);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* What version `version` did, checked. written: the heap pages the
 * program wrote since the previous version (-1: every heap page, the
 * first version of a run). grew: the heap grew since, by at least the
 * pages written beyond the old end (counted in written then). */
static void CheckVersion(int version, long long written, int grew) {
  cairn_checkpoint_info info = CAIRN_CHECKPOINT_INFO_INIT;
  int rc = cairn_last_checkpoint(&info);
  if (rc != CAIRN_SUCCESS) fail("cairn_last_checkpoint", rc, 0);
  if (info.version != version) fail("version", info.version, version);
  const char *want_method = getenv("TEST_TRACKING");
  if (strcmp(want_method, "auto") != 0 && strcmp(info.tracking, want_method) != 0) {
    fail("tracking method differs", 0, 1);
  }
  unsigned long long view = info.pages_unique + info.pages_local_dup + info.pages_remote_ref +
                            info.pages_unchanged;
  unsigned long long untracked = view - info.pages_total;  /* main's stack, the program's data */
  int tracked = strcmp(info.tracking, "none") != 0;
  if (written < 0 || !tracked) {
    if (info.pages_hashed != view) fail("pages hashed (all)", (long long)info.pages_hashed, (long long)view);
  } else {
    /* The allocator's bookkeeping pages count too when the heap grew. */
    if (grew ? (long long)info.pages_written < written || (long long)info.pages_written > written + 2
             : (long long)info.pages_written != written) {
      fail("heap pages written", (long long)info.pages_written, written);
    }
    if (info.pages_hashed != info.pages_written + untracked) {
      fail("pages hashed", (long long)info.pages_hashed, (long long)(info.pages_written + untracked));
    }
    /* Clean heap pages are references to the previous version, never stored. */
    if (info.pages_unchanged < info.pages_total - info.pages_written) {
      fail("pages unchanged", (long long)info.pages_unchanged,
           (long long)(info.pages_total - info.pages_written));
    }
  }
  if (info.pages_unique > info.pages_hashed) {
    fail("pages stored beyond those hashed", (long long)info.pages_unique, (long long)info.pages_hashed);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc > 1) kPages = atoi(argv[1]);
  if (kPages < 64) fail("pages (argv[1])", kPages, 64);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  heap = malloc((size_t)kPages * kPage);
  if (heap == NULL) fail("malloc", 0, 1);
  Fill(heap, kPages, 0);
  Checkpoint();  /* version 0: the first, every page hashed */
  CheckVersion(0, -1, 0);

  Stamp(3);
  Checkpoint();  /* version 1: three pages */
  CheckVersion(1, 3, 0);
  CheckContents();

  grown = malloc((size_t)kGrownPages * kPage);  /* the heap grows */
  if (grown == NULL) fail("malloc", 0, 1);
  Fill(grown, kGrownPages, 5);
  Stamp(1);
  Checkpoint();  /* version 2: the new pages and one more */
  /* A restarted run resumes here, from version 2: its own run has made no
   * checkpoint yet. */
  if (getenv("TEST_RESUMED") == NULL) CheckVersion(2, kGrownPages + 1, 1);
  CheckContents();
  if (getenv("TEST_CRASH") != NULL) raise(SIGKILL);

  Stamp(2);
  Checkpoint();  /* version 3: after a restart every page is hashed again */
  CheckVersion(3, getenv("TEST_RESUMED") != NULL ? -1 : 2, 0);
  CheckContents();

  Stamp(4);
  ReceivePage();
  Checkpoint();  /* version 4: incremental again, four pages and one received */
  CheckVersion(4, 5, 0);
  CheckContents();

  printf("PASS rank %d: %d stamps\n", rank, stamps);
  MPI_Finalize();
  return 0;
}
