/*
 * cairn.h — the C API of Cairn, a multi-level checkpoint/restart runtime for
 * MPI applications. docs/api.md states the rules below at more length.
 *
 * Errors:
 *  - Every call returns CAIRN_SUCCESS (0) or a negative CAIRN_E_* code (the
 *    exceptions, cairn_restart_test and cairn_should_checkpoint, say what they
 *    return). The values of the codes are pinned and never change meaning.
 *  - Every call first clears this thread's last error, then records the one
 *    it fails with: cairn_last_error() is its code (CAIRN_SUCCESS if the last
 *    call succeeded) and cairn_error_message(CAIRN_LAST_ERROR) its message, a
 *    readable sentence naming the cause (file, key, rank). Use them where a
 *    call's return value cannot carry the code (cairn_restart_test's -1).
 *  - The pointer cairn_error_message returns is never NULL and stays valid
 *    until the next Cairn call on the same thread, other than
 *    cairn_error_message, cairn_last_error and cairn_version; copy the text
 *    to keep it longer.
 *  - The library never calls exit, abort or MPI_Abort, and no C++ exception
 *    leaves it: a failure inside Cairn returns CAIRN_E_INTERNAL (or
 *    CAIRN_E_NO_SPACE when memory ran out) with a message.
 *
 * ABI (an application built against this header keeps working with every
 * later libcairn.so of the same major version, CAIRN_VERSION_MAJOR):
 *  - Functions and codes are only added, never changed or removed.
 *  - Every struct the library fills starts with `size_t size`, which the
 *    caller sets to sizeof the struct as its header declares it, with the
 *    struct's *_INIT macro:
 *        cairn_restart_info info = CAIRN_RESTART_INFO_INIT;
 *    New fields are only appended. The library writes only the fields that
 *    lie whole within `size` bytes and leaves the rest of the caller's
 *    struct as it was (the _INIT macro zeroes it), so an older caller never
 *    sees a byte written past its struct, and a newer caller on an older
 *    library finds zeros in the fields that library does not know. A `size`
 *    of 0, or one too small for the first field after it, is
 *    CAIRN_E_INVALID_ARGUMENT.
 *
 * Threads:
 *  - One Cairn instance per process. Calls take a process-wide lock, so
 *    calls from several threads do not corrupt it, but a collective call
 *    blocks the others until every rank has made it. The error state of
 *    the rules above is per thread. The background drain runs on a thread
 *    of Cairn's own.
 *  - Calls marked "collective" must be made by every rank of the
 *    communicator given to cairn_init, in the same order, with the same
 *    name and version arguments, from a thread MPI allows to communicate
 *    (the main thread under MPI_THREAD_FUNNELED).
 *
 * Define CAIRN_NO_MPI before including this header to use Cairn without
 * <mpi.h> (cairn_init is then not declared; use cairn_init_single).
 */
#ifndef CAIRN_CAIRN_H_
#define CAIRN_CAIRN_H_

#include <limits.h>
#include <stddef.h>

#ifndef CAIRN_NO_MPI
#include <mpi.h>
#endif

#include "cairn/version.h"

#if defined(CAIRN_BUILDING_LIBRARY)
#define CAIRN_EXPORT __attribute__((visibility("default")))
#else
#define CAIRN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. Values are pinned: new codes are appended, none is reused. */
typedef enum cairn_status {
  CAIRN_SUCCESS = 0,
  CAIRN_E_INVALID_ARGUMENT = -1, /* NULL pointer, zero size, bad name */
  CAIRN_E_NOT_INITIALIZED = -2,  /* call before cairn_init or after finalize */
  CAIRN_E_ALREADY_INITIALIZED = -3,
  CAIRN_E_CONFIG = -4,           /* unknown key or bad value in configuration */
  CAIRN_E_IO = -5,               /* the operating system reported an error */
  CAIRN_E_NO_SPACE = -6,         /* a tier is full */
  CAIRN_E_CORRUPT = -7,          /* stored data failed verification */
  CAIRN_E_NOT_FOUND = -8,        /* no such checkpoint, version or region */
  CAIRN_E_MISMATCH = -9,         /* regions differ from the checkpoint's */
  CAIRN_E_COMM = -10,            /* MPI reported an error */
  CAIRN_E_INTERNAL = -11,        /* a bug in Cairn: please report it */
  CAIRN_E_UNSUPPORTED = -12      /* feature not available on this system */
} cairn_status;

/* Not a status: the code to pass to cairn_error_message for this thread's
 * last error, whatever its code. */
#define CAIRN_LAST_ERROR INT_MIN

/* An initializer for a struct the library fills: its size set, the rest
 * zero (ABI rule, top of this file). C++ gets a value-initialized copy,
 * since a partial brace initializer draws -Wmissing-field-initializers. */
#ifdef __cplusplus
#define CAIRN_SIZED_INIT_(type) \
  ([] { type sized_{}; sized_.size = sizeof(type); return sized_; }())
#else
#define CAIRN_SIZED_INIT_(type) {.size = sizeof(type)}
#endif

/* Version of the library actually linked (compare with CAIRN_VERSION_NUMBER). */
CAIRN_EXPORT int cairn_version(void);

#ifndef CAIRN_NO_MPI
/* Collective over comm. Reads config_path (NULL: $CAIRN_CONFIG if set, else
 * built-in defaults), applies CAIRN_<SECTION>_<KEY> environment overrides,
 * opens the tiers. comm is duplicated; the caller may free its own. */
CAIRN_EXPORT int cairn_init(MPI_Comm comm, const char *config_path);
#endif

/* As cairn_init for a process that does not use MPI (one rank, one node). */
CAIRN_EXPORT int cairn_init_single(const char *config_path);

/* Registers count * elem_size bytes at ptr as region id (id >= 0). The memory
 * stays owned by the caller and must stay valid until unprotect/finalize.
 * Protecting an id again replaces its previous registration;
 * CAIRN_E_INVALID_ARGUMENT for the id of a live cairn_malloc_protected block
 * (CAIRN_PROTECTED_ID_BASE and up), whose registration only
 * cairn_free_protected ends. */
CAIRN_EXPORT int cairn_protect(int id, void *ptr, size_t count, size_t elem_size);

/* Forgets region id. CAIRN_E_NOT_FOUND if id was not protected;
 * CAIRN_E_INVALID_ARGUMENT for a live cairn_malloc_protected block's id. */
CAIRN_EXPORT int cairn_unprotect(int id);

/* Collective. Saves every protected region and every file routed since the
 * last checkpoint as version `version` (>= 0) of checkpoint `name`. Returns
 * when the version is committed on its first tier; draining to lower tiers
 * continues in the background. */
CAIRN_EXPORT int cairn_checkpoint(const char *name, int version);

/* Flags of cairn_checkpoint_flags. */
#define CAIRN_CHECKPOINT_DURABLE 1u /* write this version to the SSD tier (or, if it is
                                      disabled, the first enabled tier below memory),
                                      whatever [placement] policy says */

/* Collective. cairn_checkpoint with flags (0 or CAIRN_CHECKPOINT_DURABLE);
 * the flags should be the same on every rank (if some rank asks for a
 * durable copy, every rank makes one). Unknown flag bits are
 * CAIRN_E_INVALID_ARGUMENT. */
CAIRN_EXPORT int cairn_checkpoint_flags(const char *name, int version, unsigned flags);

/* What the last successful cairn_checkpoint / cairn_checkpoint_flags did.
 * Initialize with CAIRN_CHECKPOINT_INFO_INIT (ABI rule, top of this file). */
typedef struct cairn_checkpoint_info {
  size_t size;              /* set by the caller: sizeof(cairn_checkpoint_info) */
  int version;              /* the version argument */
  int number;               /* checkpoint call number since cairn_init, from 1 */
  int skipped;              /* 1: the placement controller skipped this version:
                               nothing was written, restart finds the previous one */
  int forced;               /* 1: forced to the SSD (force_ssd_every or the flag) */
  char tier[16];            /* "memory", "pmem", "ssd" or "pfs"; "" when skipped */
  char rule[32];            /* the rule that decided: "within-limits", "lifetime",
                               "slowdown", "ratio", "policy-memory", "forced-every", ... */
  double seconds;           /* time spent inside the call on this rank */
  unsigned long long bytes; /* bytes this rank wrote */
  char reason[512];         /* one readable line: placement and why (truncated) */
  char tracking[16];        /* transparent mode: how the written pages of the preloaded
                               heap were found: "uffd-wp", "soft-dirty", "mprotect" or
                               "none" (every page); "" for other checkpoints */
  unsigned long long pages_written; /* transparent mode: heap pages written since the
                                       previous version */
  unsigned long long pages_total;   /* transparent mode: heap pages this version holds */
  /* [dedup] (docs/dedup.md): this rank's pages of this version by where their
     bytes are; all 0 with dedup.mode = "off". */
  unsigned long long pages_unique;     /* stored by this rank in this version */
  unsigned long long pages_local_dup;  /* equal to a page this rank stores */
  unsigned long long pages_remote_ref; /* stored once for the job by another rank */
  unsigned long long pages_unchanged;  /* unchanged since the previous version */
  double dedup_hash_seconds;           /* hashing the pages (passes of their own; see
                                          pages_hashed_in_copy) */
  double dedup_reduce_seconds;         /* the collective top-K reduction */
  unsigned long long pages_hashed;     /* pages whose digest was computed: with
                                          transparent mode's tracking, only those written
                                          since the previous version (and the pages of
                                          untracked regions); all 0 with dedup off */
  /* tiers.memory.ecc (docs/ecc.md): seconds from the commit until this rank's
     copy was protected by its ECC sidecar, which is encoded in the background
     after the commit; 0 when encoded inside the call (tiers.memory.ecc_sync);
     -1 while not protected: the encode has not finished (cairn_checkpoint_wait
     covers it), was skipped for a newer version or failed, or the copy has no
     sidecar (ecc = none, another tier). */
  double ecc_protected_after;
  /* [dedup]: of pages_hashed, those hashed in the pass that copied them to the
     memory tier (xxh3-128 with AVX2): they add nothing to dedup_hash_seconds,
     which counts hashing passes of their own. */
  unsigned long long pages_hashed_in_copy;
  /* [dedup]: 1 when this version was written whole, as with dedup.mode = "off"
     (nothing hashed; pages_unique counts every page): the last deduplicated
     version saved at most dedup.min_saving of every rank's pages, and the
     versions up to the next dedup.probe_every-th are written whole. */
  int dedup_whole;
} cairn_checkpoint_info;

#define CAIRN_CHECKPOINT_INFO_INIT CAIRN_SIZED_INIT_(cairn_checkpoint_info)

/* Fills the fields of *info that lie within info->size bytes.
 * CAIRN_E_NOT_FOUND before the first successful checkpoint;
 * CAIRN_E_INVALID_ARGUMENT if info is NULL or info->size too small. */
CAIRN_EXPORT int cairn_last_checkpoint(cairn_checkpoint_info *info);

/* Collective. 1 when a checkpoint is due by [placement] interval, else 0
 * (the same answer on every rank), or a negative error code. With interval =
 * "auto" the interval is the failure model's optimum (docs/model.md) for
 * [model] mtbf and the checkpoint and restart times measured in this run;
 * the first call says 1 (the first checkpoint is the measurement). With
 * interval = "off" (the default) the call is CAIRN_E_INVALID_ARGUMENT. */
CAIRN_EXPORT int cairn_should_checkpoint(void);

/* Blocks until background work (drains to lower tiers, redundancy and ECC
 * encodes) is done. A drain or encode that failed is logged as a warning and
 * does not fail the wait: the version it carried is committed on a faster
 * tier, or stays committed without that protection. */
CAIRN_EXPORT int cairn_checkpoint_wait(void);

/* What the background work did up to the last wait for it: between the
 * previous wait and the last one (cairn_checkpoint_wait, or the wait inside
 * cairn_delete), every drain and background ECC encode that ended. A failed
 * drain leaves its version committed on a faster tier, and a failed or skipped
 * encode leaves its memory copy committed without ECC; each is counted (and
 * a failure described) here, so that a caller can tell that a version has
 * no copy on a lower tier (a full or unwritable ssd or pfs tier), or no
 * sidecar, without the wait failing. Initialize with CAIRN_WAIT_INFO_INIT
 * (ABI rule, top of this file). */
typedef struct cairn_wait_info {
  size_t size;             /* set by the caller: sizeof(cairn_wait_info) */
  int drains_done;         /* copies committed on a lower tier */
  int drains_failed;       /* copies that could not be made (each logged as a warning) */
  int drains_superseded;   /* queued drains dropped, unstarted: the target keeps newer */
  char last_failure[512];  /* the last failure's message (a drain's, naming the tier
                              and file, or an encode's); "" when none failed (truncated) */
  /* tiers.memory.ecc (docs/ecc.md), this rank's memory copies: */
  int ecc_encoded;         /* sidecars committed: the copy is ECC-protected */
  int ecc_failed;          /* encodes that failed (each logged as a warning) */
  int ecc_skipped;         /* queued encodes dropped, unstarted, for a newer version's */
} cairn_wait_info;

#define CAIRN_WAIT_INFO_INIT CAIRN_SIZED_INIT_(cairn_wait_info)

/* Fills the fields of *info that lie within info->size bytes with what the
 * last wait saw (all zero before the first wait).
 * CAIRN_E_INVALID_ARGUMENT if info is NULL or info->size too small. */
CAIRN_EXPORT int cairn_last_wait(cairn_wait_info *info);

/* Collective. The newest version <= max_version (max_version < 0: any) of
 * checkpoint `name` that every rank can recover from some tier, or -1 when
 * there is none. A negative error code (< -1) is never returned here: errors
 * are reported as "none"; then cairn_last_error() is the error's code and
 * cairn_error_message(CAIRN_LAST_ERROR) its cause, while a plain "none"
 * leaves cairn_last_error() == CAIRN_SUCCESS. A "none" while some ranks hold
 * versions of the name (a node lost without redundancy or a copy on a shared
 * tier) is logged by rank 0 as a warning naming how many ranks hold them;
 * `cairn verify` reports such versions too. */
CAIRN_EXPORT int cairn_restart_test(const char *name, int max_version);

/* Collective. Restores every protected region (and routed file) from version
 * `version` of `name`, reading each part from the fastest valid copy and
 * falling back to slower tiers, then to older versions, when a copy is
 * missing or damaged. Returns the version actually restored (>= 0), or an
 * error. Region ids, counts and sizes must match the checkpoint's; if no
 * version's do, CAIRN_E_MISMATCH is returned. Every byte is checked against
 * its CRC32C on every rank before any rank writes protected memory (or a
 * routed file): when the call fails because data is missing, damaged or does
 * not fit, the protected memory of every rank is left untouched. (Only a
 * copy that changes, or a device that fails, between that check and the copy
 * can leave a region partly written; the call then restores an older
 * version or fails.) */
CAIRN_EXPORT int cairn_restart(const char *name, int version);

/* What the last successful cairn_restart of this process did. The
 * rollback distance (paper §3.4: the memory copy first, then an older SSD
 * copy) is the same on every rank. Initialize with CAIRN_RESTART_INFO_INIT
 * (ABI rule, top of this file). */
typedef struct cairn_restart_info {
  size_t size;              /* set by the caller: sizeof(cairn_restart_info) */
  int requested;            /* the version argument */
  int version;              /* the version restored */
  int newest;               /* newest version any rank has any copy of, complete or not */
  int rollback_versions;    /* newest - version */
  double rollback_seconds;  /* creation time of newest minus that of version (0: unknown) */
  int versions_failed;      /* agreed versions that failed verification on some rank */
  char tier[16];            /* where this rank read from: "memory", "pmem", "ssd", "pfs" */
  unsigned long long bytes; /* bytes this rank read (part file with its header, routed files) */
  double seconds;           /* time inside the call on this rank */
  unsigned long long ecc_shards_corrected; /* shards of this rank's memory copy corrected
                                              from its ECC sidecar (tiers.memory.ecc) */
  int parts_rebuilt;        /* parts of the restored version rebuilt from redundancy groups
                               (lost nodes), in the whole job */
  char redundancy[16];      /* their scheme: "partner", "xor", "rs"; "" if none was rebuilt */
} cairn_restart_info;

#define CAIRN_RESTART_INFO_INIT CAIRN_SIZED_INIT_(cairn_restart_info)

/* Fills the fields of *info that lie within info->size bytes.
 * CAIRN_E_NOT_FOUND before the first successful restart;
 * CAIRN_E_INVALID_ARGUMENT if info is NULL or info->size too small. */
CAIRN_EXPORT int cairn_last_restart(cairn_restart_info *info);

/* File mode: writes into path_out (capacity len) the path where this rank
 * should write (or, after cairn_restart, read) the file named `logical`.
 * Files written there become part of the next checkpoint. */
CAIRN_EXPORT int cairn_route_file(const char *logical, char *path_out, size_t len);

/* Collective. Removes every version of checkpoint `name` from every tier of
 * this job (memory, pmem, ssd, pfs), after waiting for the background drains:
 * afterwards cairn_restart_test(name, -1) returns -1 and the tiers' storage
 * holds nothing of `name`. Other checkpoints are untouched. A name with no
 * stored version is not an error (CAIRN_SUCCESS: deleting is idempotent). */
CAIRN_EXPORT int cairn_delete(const char *name);

/* Collective. Removes version `version` of checkpoint `name` from every tier
 * of this job, after waiting for the background drains; the other versions
 * stay. A version no tier holds is not an error (CAIRN_SUCCESS). With
 * [dedup] a version whose pages a kept version refers to is refused
 * (CAIRN_E_INVALID_ARGUMENT, naming the referring version): delete that one
 * first. Added after 0.2.0 (docs/api.md). */
CAIRN_EXPORT int cairn_delete_version(const char *name, int version);

/* Waits for background work, releases every resource. Collective. */
CAIRN_EXPORT int cairn_finalize(void);

/* Readable text for code. For CAIRN_LAST_ERROR, or for the code of this
 * thread's last error, the detailed message of that error (for
 * CAIRN_LAST_ERROR after a successful call: the text of CAIRN_SUCCESS).
 * Never NULL; valid until the next Cairn call on this thread (see top). */
CAIRN_EXPORT const char *cairn_error_message(int code);

/* The code of this thread's last error: CAIRN_SUCCESS if the last Cairn call
 * on this thread succeeded. */
CAIRN_EXPORT int cairn_last_error(void);

/* Multi-version distributed arrays (docs/varray.md): a global array spread
 * uniformly over the ranks of a communicator, with put, get and acc from
 * any rank, a collective version_inc that freezes the current contents as
 * a version readable later (get_version), and restore to roll back. They
 * need no cairn_init; cairn_varray_protect makes one part of the ordinary
 * checkpoints. Errors follow the rules at the top of this file; the
 * collective calls (create, version_inc, restore, reload, drain_wait,
 * destroy) fail on every rank alike, naming the rank that failed.
 * Thread-safety: one thread at a time per array; collective calls from a
 * thread MPI allows to communicate. */
typedef struct cairn_varray_s *cairn_varray; /* opaque handle */

/* Implementations (values pinned). */
typedef enum cairn_varray_kind {
  CAIRN_VARRAY_LOG_RMA = 0, /* log-structured, one-sided MPI-3 RMA (the default) */
  CAIRN_VARRAY_LOG_MSG = 1, /* log-structured, a server thread per rank
                               (needs MPI_THREAD_MULTIPLE) */
  CAIRN_VARRAY_FLAT = 2     /* a copy of the whole array per version (baseline) */
} cairn_varray_kind;

/* How the RMA log publishes a block's first put in a version (values pinned). */
typedef enum cairn_varray_atomics {
  CAIRN_VARRAY_ATOMICS_AUTO = 0,      /* compare-and-swap where it is safe, else
                                         fetch-and-add claim words */
  CAIRN_VARRAY_ATOMICS_CAS = 1,       /* compare-and-swap; where it would crash (Open MPI
                                         4.x without --mca osc sm) the array uses
                                         CAIRN_VARRAY_LOG_MSG and logs a warning */
  CAIRN_VARRAY_ATOMICS_FETCH_ADD = 2  /* claim words only */
} cairn_varray_atomics;

/* Element types of cairn_varray_acc (values pinned). */
typedef enum cairn_varray_type {
  CAIRN_VARRAY_INT32 = 0,
  CAIRN_VARRAY_INT64 = 1,
  CAIRN_VARRAY_UINT64 = 2,
  CAIRN_VARRAY_FLOAT = 3,
  CAIRN_VARRAY_DOUBLE = 4
} cairn_varray_type;

/* Settings of cairn_varray_create. The library reads only the fields that
 * lie whole within `size`; zero (as CAIRN_VARRAY_OPTIONS_INIT leaves every
 * field) means the default. NULL options: all defaults. */
typedef struct cairn_varray_options {
  size_t size;                     /* set by the caller: sizeof(cairn_varray_options) */
  int kind;                        /* cairn_varray_kind (default CAIRN_VARRAY_LOG_RMA) */
  int atomics;                     /* cairn_varray_atomics (default AUTO) */
  size_t block_size;               /* bytes per log block, a multiple of elem_size and
                                      of 8 (default 4096) */
  int keep;                        /* frozen versions kept in memory (default 8) */
  unsigned long long log_capacity; /* bytes of log per rank (default: room for keep + 2
                                      full versions; only bytes used take memory) */
  const char *drain_dir;           /* directory (on a tier all ranks see, e.g. the pfs
                                      tier's) where versions beyond keep are drained
                                      and read back from; NULL: they are dropped */
} cairn_varray_options;

#define CAIRN_VARRAY_OPTIONS_INIT CAIRN_SIZED_INIT_(cairn_varray_options)

#ifndef CAIRN_NO_MPI
/* Collective over comm (duplicated; the caller may free its own). Creates
 * array `name` (1-128 characters, no '/') of `length` elements of
 * elem_size bytes; version 0 is open and reads as zeros. *out is the
 * handle, NULL on failure. CAIRN_E_INVALID_ARGUMENT naming a bad argument;
 * CAIRN_E_UNSUPPORTED when the implementation cannot run here. */
CAIRN_EXPORT int cairn_varray_create(MPI_Comm comm, const char *name, unsigned long long length,
                                     size_t elem_size, const cairn_varray_options *options,
                                     cairn_varray *out);
#endif

/* As cairn_varray_create for a process without MPI (one rank). */
CAIRN_EXPORT int cairn_varray_create_single(const char *name, unsigned long long length,
                                            size_t elem_size,
                                            const cairn_varray_options *options,
                                            cairn_varray *out);

/* Writes elements [index, index + count) of the open version from data
 * (count * elem_size bytes). Complete on return. CAIRN_E_INVALID_ARGUMENT
 * for a range beyond the array; CAIRN_E_NO_SPACE when the owner's log is
 * full (raise log_capacity or lower keep). */
CAIRN_EXPORT int cairn_varray_put(cairn_varray va, unsigned long long index,
                                  unsigned long long count, const void *data);

/* Starts reading elements [index, index + count) of the open version into
 * out; out is filled at cairn_varray_wait and must stay valid until then. */
CAIRN_EXPORT int cairn_varray_get(cairn_varray va, unsigned long long index,
                                  unsigned long long count, void *out);

/* Completes every cairn_varray_get of this rank. */
CAIRN_EXPORT int cairn_varray_wait(cairn_varray va);

/* Adds count values of `type` (whose size must be elem_size) to elements
 * [index, index + count), atomically per element. Complete on return. */
CAIRN_EXPORT int cairn_varray_acc(cairn_varray va, unsigned long long index,
                                  unsigned long long count, const void *values,
                                  cairn_varray_type type);

/* Reads elements of `version` (a frozen version, or the open one) into out;
 * blocking. CAIRN_E_NOT_FOUND when the version is neither kept in memory
 * nor drained (the message says which versions are). */
CAIRN_EXPORT int cairn_varray_get_version(cairn_varray va, long long version,
                                          unsigned long long index, unsigned long long count,
                                          void *out);

/* Collective. Freezes the open version (every put and acc of every rank
 * before the call is in it) and opens the next, a copy of it. Versions
 * beyond keep leave memory (drained first when drain_dir is set).
 * CAIRN_E_INVALID_ARGUMENT while gets are outstanding on some rank. */
CAIRN_EXPORT int cairn_varray_version_inc(cairn_varray va);

/* The open version's number in *version (0 after create). */
CAIRN_EXPORT int cairn_varray_version(cairn_varray va, long long *version);

/* Collective. The open version's contents become those of frozen `version`
 * (kept in memory); its number stays. CAIRN_E_NOT_FOUND otherwise. */
CAIRN_EXPORT int cairn_varray_restore(cairn_varray va, long long version);

/* Registers this rank's memory of the array (every version it holds) as
 * region `id` of cairn_protect, so that cairn_checkpoint saves it. Call
 * cairn_checkpoint right after cairn_varray_version_inc (no access in
 * flight), and cairn_varray_reload after cairn_restart. Needs cairn_init. */
CAIRN_EXPORT int cairn_varray_protect(cairn_varray va, int id);

/* Collective. Takes the memory cairn_restart refilled as the array's: the
 * versions of the restored checkpoint become the array's.
 * CAIRN_E_CORRUPT when it does not hold an array of this shape, or the
 * ranks' versions differ. */
CAIRN_EXPORT int cairn_varray_reload(cairn_varray va);

/* Collective. Waits until every rank's drained versions are on storage
 * (drain failures are reported here, naming the file). */
CAIRN_EXPORT int cairn_varray_drain_wait(cairn_varray va);

/* What the array is and did on this rank. Initialize with
 * CAIRN_VARRAY_INFO_INIT (ABI rule, top of this file). */
typedef struct cairn_varray_info {
  size_t size;                      /* set by the caller: sizeof(cairn_varray_info) */
  int kind;                         /* cairn_varray_kind in use (after any fallback) */
  int compare_and_swap;             /* 1: the RMA log publishes with compare-and-swap */
  long long version;                /* the open version */
  long long oldest_in_memory;       /* the oldest version kept in memory */
  unsigned long long memory_bytes;  /* this rank's bytes holding the versions */
  unsigned long long cleanings;     /* log cleanings on this rank */
  unsigned long long versions_drained; /* versions this rank drained to drain_dir */
  unsigned long long get_hit;       /* blocks read with a valid cached location */
  unsigned long long get_miss;      /* blocks read with a maybe-invalid or no location */
  unsigned long long put_first;     /* blocks first written in their version */
  unsigned long long put_ow_miss;   /* blocks overwritten, location fetched */
  unsigned long long put_ow_hit;    /* blocks overwritten, location cached */
} cairn_varray_info;

#define CAIRN_VARRAY_INFO_INIT CAIRN_SIZED_INIT_(cairn_varray_info)

/* Fills the fields of *info that lie within info->size bytes. */
CAIRN_EXPORT int cairn_varray_info_get(cairn_varray va, cairn_varray_info *info);

/* Collective. Waits for drains, frees the array and sets *va to NULL
 * (NULL or *va NULL: nothing to do). */
CAIRN_EXPORT int cairn_varray_destroy(cairn_varray *va);

/* Transparent mode (docs/transparent.md). A program preloaded with
 * libcairn_intercept.so needs none of these; they serve programs that link
 * Cairn and want part of the paper's transparent mode. */

/* Region ids from this value up are the blocks of cairn_malloc_protected:
 * cairn_protect should not use them. */
#define CAIRN_PROTECTED_ID_BASE 0x40000000

/* Allocates size bytes (zeroed, page-aligned) that every later checkpoint
 * captures: the block is protected as region CAIRN_PROTECTED_ID_BASE + n,
 * n counting this process's calls from 0, so a restarted run that
 * allocates its blocks in the same order before cairn_restart gets their
 * contents back. NULL on failure (CAIRN_E_NOT_INITIALIZED before cairn_init,
 * CAIRN_E_INVALID_ARGUMENT for 0, CAIRN_E_NO_SPACE); the code and message
 * are this thread's last error. */
CAIRN_EXPORT void *cairn_malloc_protected(size_t size);

/* Unprotects and frees a block of cairn_malloc_protected (NULL: nothing).
 * CAIRN_E_NOT_FOUND for any other pointer. */
CAIRN_EXPORT int cairn_free_protected(void *ptr);

/* Collective. 1 when [transparent] signal (default SIGUSR1) reached any rank
 * since the last committed checkpoint, else 0 (the same on every rank). The
 * request stays pending until a checkpoint commits. */
CAIRN_EXPORT int cairn_checkpoint_requested(void);

/* Collective safe point. When the signal reached any rank, checkpoints every
 * protected region as checkpoint [transparent] name, version one above its
 * newest stored version, and returns 1; else returns 0. */
CAIRN_EXPORT int cairn_checkpoint_point(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAIRN_CAIRN_H_ */
