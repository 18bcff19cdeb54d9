/*
 * veloc.h — the VeloC C API, served by Cairn (libcairn_veloc). A program
 * written for VeloC includes this header as <veloc.h> (compile with
 * -I<prefix>/include/cairn/compat/veloc) and links -lcairn_veloc -lcairn
 * instead of -lveloc-client; nothing else changes. docs/compat.md maps every
 * call and configuration key to Cairn and lists the differences.
 *
 * Return codes are VeloC's: VELOC_SUCCESS, or VELOC_FAILURE with the cause
 * printed to stderr ("VeloC (Cairn): error: ..."). Like VeloC, the API keeps
 * one client per process and is not meant to be called from several threads
 * at once.
 */
#ifndef CAIRN_COMPAT_VELOC_H_
#define CAIRN_COMPAT_VELOC_H_

#include <stddef.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VELOC_SUCCESS (0)
#define VELOC_FAILURE (-1)

#define VELOC_MAX_NAME (1024)

#define VELOC_RECOVER_ALL (0)
#define VELOC_RECOVER_SOME (1)
#define VELOC_RECOVER_REST (2)

#define VELOC_CKPT_ALL (0)
#define VELOC_CKPT_SOME (1)
#define VELOC_CKPT_REST (2)

#define VELOC_OBSERVE_CKPT_END (0)

/* Collective over comm: reads the VeloC configuration file cfg_file
 * (scratch, persistent, mode, ...) and starts Cairn with its translation. */
int VELOC_Init(MPI_Comm comm, const char *cfg_file);
/* One process without collective checkpoints; id keeps the tier paths of
 * processes sharing a configuration apart. */
int VELOC_Init_single(unsigned int id, const char *cfg_file);
/* Waits for background transfers if drain is nonzero (Cairn always waits
 * before it releases the tiers), then finalizes. Collective. */
int VELOC_Finalize(int drain);

/* Registers count * base_size bytes at ptr as region id; again for the same
 * id replaces it. The memory stays the caller's. */
int VELOC_Mem_protect(int id, void *ptr, size_t count, size_t base_size);
int VELOC_Mem_unprotect(int id);
/* Forgets every region. */
int VELOC_Mem_clear(void);
/* The same for the region group `name`: a checkpoint or restart named
 * `name` uses that group instead of the VELOC_Mem_protect regions when the
 * group is not empty. */
int VELOC_Region_protect(int id, void *ptr, size_t count, size_t base_size, const char *name);
int VELOC_Region_unprotect(int id, const char *name);
int VELOC_Region_clear(const char *name);

/* Collective in Cairn. With a persistent directory: waits until the
 * persistent copies of `name` exist (the node-local ones are released by
 * Cairn once a lower tier holds them); without one: deletes every version
 * of `name`, as VeloC deletes its scratch files. */
int VELOC_Cleanup(const char *name);

/* Writes into routed (VELOC_MAX_NAME bytes) the path where this rank writes
 * the file `original` during a checkpoint, or reads it after
 * VELOC_Restart_begin. */
int VELOC_Route_file(const char *original, char *routed);

/* Checkpoint phase: begin, then optionally the registered memory
 * (VELOC_Checkpoint_mem / _selective) and routed files, then end.
 * VELOC_Checkpoint_end is collective: the version is committed when every
 * rank passes success != 0, otherwise on no rank (VELOC_FAILURE). */
int VELOC_Checkpoint_begin(const char *name, int version);
int VELOC_Checkpoint_selective(int mode, int *ids, int id_count);
int VELOC_Checkpoint_mem(void);
int VELOC_Checkpoint_end(int success);
/* Waits until background transfers to the persistent tier are done. */
int VELOC_Checkpoint_wait(void);
/* VELOC_SUCCESS once background transfers are done. Cairn cannot test them
 * without waiting, so this waits (as VELOC_Checkpoint_wait). */
int VELOC_Checkpoint_finished(void);
/* Collective: VELOC_Checkpoint_wait, begin, mem, end(1). */
int VELOC_Checkpoint(const char *name, int version);

/* Collective. The newest version <= needed_version (0: any) that every
 * rank can recover, or VELOC_FAILURE when there is none. */
int VELOC_Restart_test(const char *name, int needed_version);
/* Restart phase: begin (collective: fetches the version's memory and files),
 * recover memory (all, some or the rest of the version's ids; each must be
 * protected by then, at least as large as it was saved), end. */
int VELOC_Restart_begin(const char *name, int version);
int VELOC_Recover_selective(int mode, int *ids, int id_count);
int VELOC_Recover_mem(void);
/* Inside a restart phase: the bytes region id holds in the version being
 * restored, or VELOC_FAILURE when it holds no such region. A region may be
 * protected (with at least that size) after VELOC_Restart_begin. */
int VELOC_Recover_size(int id);
int VELOC_Restart_end(int success);
/* Collective: begin, recover all registered memory (in place), end. */
int VELOC_Restart(const char *name, int version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAIRN_COMPAT_VELOC_H_ */
