#!/usr/bin/env bash
# A versioned array in an ordinary checkpoint across a job restart: one job
# saves (varray_restart_test save), a second job resumes and checks every
# kept version. Usage: run_restart.sh TEST_BINARY NP KIND
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 TEST_BINARY NP KIND" >&2; exit 2; }
BIN=$1 NP=$2 KIND=$3
TMP=$(mktemp -d /tmp/cairn-varray-XXXXXX)
SHM=$(mktemp -d /dev/shm/cairn-varray-XXXXXX)
trap 'rm -rf "$TMP" "$SHM"' EXIT
export CAIRN_DIR=$TMP CAIRN_TIERS_MEMORY_PATH=$SHM/{node}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$NP" -x CAIRN_DIR -x CAIRN_TIERS_MEMORY_PATH)
"${MPIRUN[@]}" "$BIN" save "$KIND"
"${MPIRUN[@]}" "$BIN" resume "$KIND"
