/* The persistent-memory C API from C (include/cairn/pmem.h): an array
 * persisted over iterations reopens at its last commit with its bytes; the
 * flush helper's lifecycle; errors name their cause. Needs no cairn_init. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn/pmem.h"

#define N 4096
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #cond,       \
              cairn_error_message(CAIRN_LAST_ERROR));                            \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static void run_iterations(const char *path, int pattern, int async_flush, long long last) {
  cairn_pmem_array_options options = CAIRN_PMEM_ARRAY_OPTIONS_INIT;
  options.update_pattern = pattern;
  options.async_flush = async_flush;
  cairn_pmem_array *a = NULL;
  CHECK(cairn_pmem_array_open(path, N, sizeof(long long), &options, &a) == CAIRN_SUCCESS);
  if (cairn_pmem_array_iteration(a) < 0) {
    long long *w = cairn_pmem_array_working(a);
    for (int i = 0; i < N; ++i) w[i] = i;
    CHECK(cairn_pmem_array_commit(a) == CAIRN_SUCCESS);
  }
  for (long long it = cairn_pmem_array_iteration(a) + 1; it <= last; ++it) {
    const long long *old = cairn_pmem_array_read(a);
    long long *w = cairn_pmem_array_working(a);
    for (int i = 0; i < N; ++i) w[i] = old[i] + it;
    CHECK(cairn_pmem_array_mark_updated(a) == CAIRN_SUCCESS);
    CHECK(cairn_pmem_array_read(a) == (const void *)w);
    if (async_flush) { /* proactively, in two halves as they would finish */
      CHECK(cairn_pmem_array_done_writing(a, 0, N / 2) == CAIRN_SUCCESS);
      CHECK(cairn_pmem_array_done_writing(a, N / 2, N - N / 2) == CAIRN_SUCCESS);
    } else {
      CHECK(cairn_pmem_array_start_flush(a) == CAIRN_SUCCESS);
    }
    CHECK(cairn_pmem_array_commit(a) == CAIRN_SUCCESS);
  }
  cairn_pmem_array_close(&a);
  CHECK(a == NULL);
}

int main(void) {
  char dir[] = "/dev/shm/cairn-pmem-capi-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[128];
  snprintf(path, sizeof path, "%s/u.ipv", dir);

  CHECK(cairn_flush_barrier() == CAIRN_E_NOT_INITIALIZED);
  CHECK(cairn_flush_init() == CAIRN_SUCCESS);
  CHECK(cairn_flush_init() == CAIRN_E_ALREADY_INITIALIZED);
  run_iterations(path, CAIRN_PMEM_UNIFORM, 1, 10);
  run_iterations(path, CAIRN_PMEM_AUTO, 0, 15); /* reopens at 10, goes on */

  cairn_pmem_array *a = NULL;
  CHECK(cairn_pmem_array_open(path, N, sizeof(long long), NULL, &a) == CAIRN_SUCCESS);
  CHECK(cairn_pmem_array_iteration(a) == 15);
  const long long *c = cairn_pmem_array_consistent(a);
  for (int i = 0; i < N; ++i) CHECK(c[i] == i + 15 * 16 / 2);
  cairn_pmem_array_info info = CAIRN_PMEM_ARRAY_INFO_INIT;
  CHECK(cairn_pmem_array_get_info(a, &info) == CAIRN_SUCCESS);
  CHECK(info.mode == CAIRN_PMEM_MODE_PROFILING && info.iteration == 15 && info.is_pmem == 0);
  CHECK(strlen(info.reason) > 0);
  cairn_pmem_array_close(&a);
  cairn_pmem_array_close(&a); /* NULL: nothing to do */

  /* A flush helper still used by an open array cannot stop. */
  cairn_pmem_array_options async = CAIRN_PMEM_ARRAY_OPTIONS_INIT;
  async.async_flush = 1;
  CHECK(cairn_pmem_array_open(path, N, sizeof(long long), &async, &a) == CAIRN_SUCCESS);
  CHECK(cairn_flush_finalize() == CAIRN_E_INVALID_ARGUMENT);
  cairn_pmem_array_close(&a);
  static char data[1 << 16];
  CHECK(cairn_flush_async(data, sizeof data) == CAIRN_SUCCESS);
  CHECK(cairn_flush_barrier() == CAIRN_SUCCESS);
  CHECK(cairn_flush_finalize() == CAIRN_SUCCESS);

  /* Errors name their cause. */
  CHECK(cairn_pmem_array_open(path, N + 1, sizeof(long long), NULL, &a) == CAIRN_E_MISMATCH);
  CHECK(a == NULL);
  CHECK(strstr(cairn_error_message(CAIRN_LAST_ERROR), path) != NULL);
  CHECK(cairn_pmem_array_open(path, N, sizeof(long long), &async, &a) == CAIRN_E_NOT_INITIALIZED);
  cairn_pmem_array_options bad = CAIRN_PMEM_ARRAY_OPTIONS_INIT;
  bad.update_pattern = 7;
  CHECK(cairn_pmem_array_open(path, N, sizeof(long long), &bad, &a) == CAIRN_E_INVALID_ARGUMENT);
  CHECK(strstr(cairn_error_message(CAIRN_LAST_ERROR), "update_pattern 7") != NULL);
  CHECK(cairn_pmem_array_open(path, N, sizeof(long long), NULL, &a) == CAIRN_SUCCESS);
  CHECK(cairn_pmem_array_done_writing(a, N - 1, 2) == CAIRN_E_INVALID_ARGUMENT);
  CHECK(strstr(cairn_error_message(CAIRN_LAST_ERROR), path) != NULL);
  cairn_pmem_array_close(&a);
  CHECK(cairn_pmem_array_commit(NULL) == CAIRN_E_INVALID_ARGUMENT);
  CHECK(cairn_pmem_array_working(NULL) == NULL);

  unlink(path);
  rmdir(dir);
  printf("pmem C API: ok\n");
  return 0;
}
