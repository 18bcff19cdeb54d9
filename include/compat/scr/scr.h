/*
 * scr.h — the SCR (Scalable Checkpoint/Restart) C API, served by Cairn
 * (libcairn_scr). A program written for SCR includes this header as <scr.h>
 * (compile with -I<prefix>/include/cairn/compat/scr) and links -lcairn_scr
 * -lcairn instead of -lscr. Configuration comes, as in SCR, from the file
 * named by $SCR_CONF_FILE and from SCR_* environment variables (which win);
 * docs/compat.md maps each to Cairn. Errors return SCR_FAILURE with the
 * cause printed to stderr ("SCR (Cairn): error: ..."). One instance per
 * process; the calls are collective over MPI_COMM_WORLD where SCR's are.
 */
#ifndef CAIRN_COMPAT_SCR_H_
#define CAIRN_COMPAT_SCR_H_

#ifdef __cplusplus
extern "C" {
#endif

#define SCR_SUCCESS (0)
#define SCR_FAILURE (1)

#define SCR_MAX_FILENAME 1024

#define SCR_FLAG_NONE (0 << 0)       /* empty flags */
#define SCR_FLAG_CHECKPOINT (1 << 0) /* the job can be restarted from this dataset */
#define SCR_FLAG_OUTPUT (1 << 1)     /* the dataset must reach the file system (prefix) */

/* Collective over MPI_COMM_WORLD, after MPI_Init. */
int SCR_Init(void);
/* Collective; waits for background flushes. */
int SCR_Finalize(void);

/* Writes into file (SCR_MAX_FILENAME bytes) where this rank writes `name`
 * inside an output/checkpoint phase, or reads it inside a restart phase;
 * outside both, a copy of `name`. */
int SCR_Route_file(const char *name, char *file);

/* Collective. flag = 1 and the dataset's name in `name` (SCR_MAX_FILENAME
 * bytes, may be NULL) when a checkpoint is available to restart from. */
int SCR_Have_restart(int *flag, char *name);
int SCR_Start_restart(char *name);
/* Collective: SCR_SUCCESS when every rank passes valid != 0; otherwise
 * SCR_FAILURE, and SCR_Have_restart offers the next older checkpoint. */
int SCR_Complete_restart(int valid);

/* Collective. flag = 1 when a checkpoint is due (SCR_CHECKPOINT_INTERVAL
 * calls, SCR_CHECKPOINT_SECONDS seconds). */
int SCR_Need_checkpoint(int *flag);
int SCR_Start_checkpoint(void);
int SCR_Complete_checkpoint(int valid);

/* Collective. A named dataset with SCR_FLAG_CHECKPOINT and/or
 * SCR_FLAG_OUTPUT; Complete_output commits it when every rank passes
 * valid != 0 (SCR_SUCCESS), or discards it on every rank (SCR_FAILURE). */
int SCR_Start_output(const char *name, int flags);
int SCR_Complete_output(int valid);

/* flag = 0: Cairn has no halt conditions (SCR_HALT_*). */
int SCR_Should_exit(int *flag);

/* Dataset management, collective. SCR_Current: the next SCR_Have_restart
 * offers checkpoint `name` (later checkpoints are dropped from the index).
 * SCR_Drop: the dataset leaves the index and is never restarted from.
 * SCR_Delete: as SCR_Drop, and its output files under the prefix (and
 * directories left empty) are removed; a checkpoint's Cairn copy leaves the
 * tiers by retention. The index outlives the run (<prefix>/.scr/). */
int SCR_Current(const char *name);
int SCR_Drop(const char *name);
int SCR_Delete(const char *name);

/* "KEY=VALUE [SUB=V ...]" sets a parameter (before SCR_Init; environment
 * and $SCR_CONF_FILE win over it, as in SCR), "KEY=" unsets it, and "KEY"
 * returns the value in effect (malloc'ed: the caller frees it) or NULL.
 * Setting returns NULL. */
const char *SCR_Config(const char *config);
const char *SCR_Configf(const char *format, ...);

/* "3.0 (Cairn X.Y.Z)"; not to be freed. */
char *SCR_Get_version(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAIRN_COMPAT_SCR_H_ */
