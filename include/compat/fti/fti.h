/*
 * fti.h — the FTI (Fault Tolerance Interface) C API, served by Cairn
 * (libcairn_fti). A program written for FTI includes this header as <fti.h>
 * (compile with -I<prefix>/include/cairn/compat/fti) and links -lcairn_fti
 * -lcairn instead of -lfti. FTI's configuration file (INI) is translated to
 * Cairn settings; docs/compat.md maps each key, level and call.
 *
 * Unlike FTI, Cairn dedicates no head ranks: FTI_COMM_WORLD holds every rank
 * of the communicator given to FTI_Init (background drains run on a thread
 * of each rank). Errors return FTI_NSCS with the cause printed to stderr
 * ("FTI (Cairn): error: ..."). One instance per process.
 */
#ifndef CAIRN_COMPAT_FTI_H_
#define CAIRN_COMPAT_FTI_H_

/* The standard headers FTI's fti.h pulls in (through fti-intern.h): FTI
 * programs use malloc, printf, memcpy, sleep and bool without including
 * them. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTI_BUFS 256
#define FTI_WORD 16
#define FTI_DONE 1  /* a checkpoint was taken */
#define FTI_SCES 0  /* success */
#define FTI_NSCS -1 /* failure */
#define FTI_NREC -2 /* nothing could be recovered */
#define FTI_HEAD 2
/* FTI's "end of work" message to its head ranks, which programs send
 * themselves before exiting without FTI_Finalize when head > 0. Cairn has no
 * heads (head > 0 warns), so nothing receives it; the value is FTI's. */
#define FTI_ENDW 995

/* Checkpoint levels (FTI_Checkpoint). The differential (dCP) levels and
 * FTI_L4_H5_SINGLE are written as their base level: FTI_L1_DCP..FTI_L4_DCP
 * as 1..4, FTI_L4_H5_SINGLE as 4 (docs/compat.md). */
typedef enum {
  FTI_L1 = 1,
  FTI_L2,
  FTI_L3,
  FTI_L4,
  FTI_L1_DCP,
  FTI_L2_DCP,
  FTI_L3_DCP,
  FTI_L4_DCP,
  FTI_L4_H5_SINGLE,
  FTI_MIN_LEVEL_ID = FTI_L1,
  FTI_MAX_LEVEL_ID = FTI_L4_H5_SINGLE
} FTIT_level;

typedef int fti_id_t;
#define FTIT_type fti_id_t

/* An HDF5 group of FTI's HDF5 output (ckpt_io = 5). Cairn writes no HDF5
 * files; groups are named and checked as in FTI and do not change what is
 * stored. */
typedef struct FTIT_H5Group {
  int id;
  char name[FTI_BUFS];
  char fullName[FTI_BUFS];
  int childrenNo;
  int childrenID[FTI_BUFS];
} FTIT_H5Group;

/* The application's communicator after FTI_Init (all ranks: no heads). */
extern MPI_Comm FTI_COMM_WORLD;

/* Predefined types (their sizes are the C types'). */
extern fti_id_t FTI_CHAR, FTI_SHRT, FTI_INTG, FTI_LONG, FTI_UCHR, FTI_USHT, FTI_UINT, FTI_ULNG,
    FTI_SFLT, FTI_DBLE, FTI_LDBE;

/* Collective over globalComm: reads the FTI configuration file. */
int FTI_Init(const char *configFile, MPI_Comm globalComm);
/* 0: fresh start; 1: a checkpoint of an interrupted run can be recovered. */
int FTI_Status(void);
/* A new opaque type of `size` bytes. */
int FTI_InitType(fti_id_t *type, int size);
/* Registers count elements of type tid at ptr as variable id (again: update). */
int FTI_Protect(int id, void *ptr, int64_t count, fti_id_t tid);
/* Collective. Checkpoint `id` at level 1 (local), 2 (partner), 3 (Reed-
 * Solomon) or 4 (global file system), or a dCP / HDF5 level of FTIT_level
 * (written as its base level); FTI_DONE on success. */
int FTI_Checkpoint(int id, int level);
/* Collective. Restores every protected variable from the newest checkpoint:
 * FTI_SCES, or FTI_NREC when none can be recovered. */
int FTI_Recover(void);
/* Collective, once per iteration: recovers on the first call of a restarted
 * run, otherwise checkpoints when a ckpt_l1..l4 interval (minutes) has
 * passed (FTI_DONE) or does nothing (FTI_SCES). */
int FTI_Snapshot(void);
/* Collective. Waits for transfers; removes the checkpoints unless
 * keep_last_ckpt = 1 (a clean end needs no restart). */
int FTI_Finalize(void);

/* While a checkpoint is being recovered (FTI_Status() == 1): the bytes
 * variable id (protected) holds in it, or 0 when unknown; and FTI_Realloc,
 * which reallocates ptr to that size and protects it again, returning the
 * new pointer (ptr itself on failure). */
int64_t FTI_GetStoredSize(int id);
void *FTI_Realloc(int id, void *ptr);
/* Variable-by-variable recovery of the newest checkpoint: Init fetches it,
 * FTI_RecoverVar copies one protected variable back (FTI_RecoverVar alone
 * starts the recovery too), Finalize ends it (FTI_Status() becomes 0). */
int FTI_RecoverVarInit(void);
int FTI_RecoverVar(int id);
int FTI_RecoverVarFinalize(void);

/* HDF5 layout metadata: checked as FTI checks it (a dataset's dimensions
 * must multiply to the variable's count, fields must fit their type), then
 * without effect; a warning says once that no HDF5 files are written. A
 * composite type is a type of its size for FTI_Protect. */
int FTI_InitGroup(FTIT_H5Group *h5group, const char *name, FTIT_H5Group *parent);
int FTI_RenameGroup(FTIT_H5Group *h5group, const char *name);
int FTI_DefineDataset(int id, int rank, int64_t *dimLength, const char *name,
                      FTIT_H5Group *h5group);
fti_id_t FTI_InitCompositeType(const char *name, size_t size, FTIT_H5Group *h5g);
int FTI_AddScalarField(fti_id_t id, const char *name, fti_id_t fid, int64_t offset);
int FTI_AddVectorField(fti_id_t id, const char *name, fti_id_t tid, int64_t offset, int ndims,
                       int64_t *dim_sizes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAIRN_COMPAT_FTI_H_ */
