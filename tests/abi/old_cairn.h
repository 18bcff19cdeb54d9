/*
 * old_cairn.h — what an application built against an older cairn.h saw: the
 * declarations abi_old_struct_test.c uses, with cairn_restart_info as it
 * was before ecc_shards_corrected was appended and cairn_checkpoint_info as
 * it was before pages_hashed_in_copy was. Frozen on purpose: never update
 * it to match cairn.h (the test is that the library honours it).
 */
#ifndef CAIRN_TESTS_ABI_OLD_CAIRN_H_
#define CAIRN_TESTS_ABI_OLD_CAIRN_H_

#include <stddef.h>

typedef struct cairn_restart_info {
  size_t size;
  int requested;
  int version;
  int newest;
  int rollback_versions;
  double rollback_seconds;
  int versions_failed;
  char tier[16];
  unsigned long long bytes;
  double seconds;
} cairn_restart_info;

#define CAIRN_RESTART_INFO_INIT {.size = sizeof(cairn_restart_info)}

typedef struct cairn_checkpoint_info {
  size_t size;
  int version;
  int number;
  int skipped;
  int forced;
  char tier[16];
  char rule[32];
  double seconds;
  unsigned long long bytes;
  char reason[512];
  char tracking[16];
  unsigned long long pages_written;
  unsigned long long pages_total;
  unsigned long long pages_unique;
  unsigned long long pages_local_dup;
  unsigned long long pages_remote_ref;
  unsigned long long pages_unchanged;
  double dedup_hash_seconds;
  double dedup_reduce_seconds;
  unsigned long long pages_hashed;
  double ecc_protected_after;
} cairn_checkpoint_info;

#define CAIRN_CHECKPOINT_INFO_INIT {.size = sizeof(cairn_checkpoint_info)}

int cairn_init_single(const char *config_path);
int cairn_protect(int id, void *ptr, size_t count, size_t elem_size);
int cairn_checkpoint(const char *name, int version);
int cairn_restart(const char *name, int version);
int cairn_last_restart(cairn_restart_info *info);
int cairn_last_checkpoint(cairn_checkpoint_info *info);
int cairn_finalize(void);
const char *cairn_error_message(int code);

#endif /* CAIRN_TESTS_ABI_OLD_CAIRN_H_ */
