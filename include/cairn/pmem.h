/* pmem.h — persistent memory in the C API of Cairn (docs/pmem.md).
 *
 * In-place versioned arrays: an array in a file on persistent memory (or
 * any file: /dev/shm stands in where there is none) that is persisted every
 * iteration without copying. The file holds two versions; each iteration
 * writes the working version and reads the consistent one (the last
 * committed iteration); cairn_pmem_array_commit flushes the working
 * version from the CPU caches and persists an epoch record that makes it
 * the consistent one. After a crash the array reopens at exactly the last
 * committed iteration.
 *
 * Asynchronous proactive flushing: cairn_flush_init starts a helper thread
 * with a FIFO; cairn_flush_async queues a range as soon as the application
 * is done writing it; cairn_flush_barrier waits until everything queued is
 * persistent, so that flushing overlaps computation.
 *
 * These calls are local to the calling process (none is collective) and
 * keep the rules of cairn.h: 0 or a negative CAIRN_E_* code with a message
 * naming the file; structs start with size and have an _INIT macro; no call
 * aborts or lets an exception escape. Thread-safety: an array is used by one
 * thread at a time; the flush calls may come from any thread. */
#ifndef CAIRN_PMEM_H_
#define CAIRN_PMEM_H_

#include "cairn/cairn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cairn_pmem_array cairn_pmem_array;

/* How the application updates an array in an iteration. */
enum {
  CAIRN_PMEM_AUTO = 0,       /* profile the first iteration after opening, then choose */
  CAIRN_PMEM_UNIFORM = 1,    /* every element is written every iteration: in place */
  CAIRN_PMEM_NONUNIFORM = 2  /* some elements are skipped: copy at each commit */
};

/* How an array is persisted (cairn_pmem_array_info.mode). */
enum {
  CAIRN_PMEM_MODE_PROFILING = 0, /* CAIRN_PMEM_AUTO before its choice (copy-based) */
  CAIRN_PMEM_MODE_IN_PLACE = 1,  /* two versions alternate; nothing is copied */
  CAIRN_PMEM_MODE_COPY = 2       /* one array in DRAM, streamed into the file at commit */
};

typedef struct cairn_pmem_array_options {
  size_t size;          /* sizeof(cairn_pmem_array_options): use the _INIT macro */
  int update_pattern;   /* CAIRN_PMEM_AUTO (default), _UNIFORM or _NONUNIFORM */
  int async_flush;      /* 1: flush through cairn_flush_init's helper thread between
                           cairn_pmem_array_start_flush and commit */
} cairn_pmem_array_options;
#define CAIRN_PMEM_ARRAY_OPTIONS_INIT CAIRN_SIZED_INIT_(cairn_pmem_array_options)

/* Opens the array at path, or creates it (0600) when there is no file. An
 * existing file must hold count elements of elem_size bytes
 * (CAIRN_E_MISMATCH) and be intact (CAIRN_E_CORRUPT); it reopens at its last
 * committed iteration. options may be NULL (defaults). *out is set on
 * success and NULL otherwise. */
CAIRN_EXPORT int cairn_pmem_array_open(const char *path, size_t count, size_t elem_size,
                                       const cairn_pmem_array_options *options,
                                       cairn_pmem_array **out);
/* Closes and NULLs *array (NULL or *array NULL: nothing to do). What was not
 * committed is lost, as it would be in a crash. */
CAIRN_EXPORT void cairn_pmem_array_close(cairn_pmem_array **array);

/* The accessors return NULL for a NULL array. Their pointers are valid until
 * the next commit: the versions swap roles there. */
/* Where this iteration's writes go. */
CAIRN_EXPORT void *cairn_pmem_array_working(cairn_pmem_array *array);
/* The last committed iteration (read-only). */
CAIRN_EXPORT const void *cairn_pmem_array_consistent(const cairn_pmem_array *array);
/* The post-update version switch: the consistent version until
 * cairn_pmem_array_mark_updated in this iteration, the working one after. */
CAIRN_EXPORT const void *cairn_pmem_array_read(const cairn_pmem_array *array);
CAIRN_EXPORT int cairn_pmem_array_mark_updated(cairn_pmem_array *array);
/* The iteration's last write to elements [first, first + count) of the
 * working version is done: with async_flush, the helper thread flushes them
 * (in place) or streams them into the persistent copy (copy mode) from now
 * on, overlapping what the application computes next; commit then does
 * only the rest. Report each row, plane or block as its update finishes
 * (adjacent ranges are gathered into 1 MiB batches). Without async_flush,
 * commit does the work and this call does nothing. REQUIRES: no write to
 * the range before commit.
 * CAIRN_E_INVALID_ARGUMENT if the range passes the array's end. */
CAIRN_EXPORT int cairn_pmem_array_done_writing(cairn_pmem_array *array, size_t first,
                                               size_t count);
/* The whole working version is done: with async_flush, everything not yet
 * handed to the helper thread is queued now (no batching). */
CAIRN_EXPORT int cairn_pmem_array_start_flush(cairn_pmem_array *array);
/* Persists the working version as the next iteration and swaps versions. */
CAIRN_EXPORT int cairn_pmem_array_commit(cairn_pmem_array *array);
/* The last committed iteration: 0 after the first commit, -1 before. */
CAIRN_EXPORT long long cairn_pmem_array_iteration(const cairn_pmem_array *array);

typedef struct cairn_pmem_array_info {
  size_t size;          /* sizeof(cairn_pmem_array_info): use the _INIT macro */
  int mode;             /* CAIRN_PMEM_MODE_* */
  int is_pmem;          /* 1: the file is persistent memory (DAX); 0: an ordinary file */
  long long iteration;  /* the last committed iteration, -1 if none */
  char reason[256];     /* why this mode: declared, or what profiling saw */
} cairn_pmem_array_info;
#define CAIRN_PMEM_ARRAY_INFO_INIT CAIRN_SIZED_INIT_(cairn_pmem_array_info)
CAIRN_EXPORT int cairn_pmem_array_get_info(const cairn_pmem_array *array,
                                           cairn_pmem_array_info *info);

/* Starts the process's flush helper thread (CAIRN_E_ALREADY_INITIALIZED if
 * running). Ranges larger than the last-level cache are flushed by two
 * threads at once (docs/pmem.md, "The size rule"). */
CAIRN_EXPORT int cairn_flush_init(void);
/* Queues [ptr, ptr + len) for flushing (FIFO). REQUIRES: the range stays
 * mapped until the next barrier. CAIRN_E_NOT_INITIALIZED before init. */
CAIRN_EXPORT int cairn_flush_async(const void *ptr, size_t len);
/* Blocks until every range queued before it is persistent. */
CAIRN_EXPORT int cairn_flush_barrier(void);
/* Flushes what is queued and stops the helper; CAIRN_E_INVALID_ARGUMENT while
 * an array opened with async_flush is still open. */
CAIRN_EXPORT int cairn_flush_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* CAIRN_PMEM_H_ */
