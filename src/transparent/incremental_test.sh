#!/usr/bin/env bash
# Incremental versions of a preloaded heap (label transparent): runs
# incremental_test.c under libcairn_intercept.so with one tracking method
# and incremental dedup by default (nothing sets [dedup] mode), lets it
# kill itself after version 2, restarts it with the same command and lets
# it check the restored heap and the versions after. The program asserts
# the page counts itself (cairn_last_checkpoint).
#
# usage: incremental_test.sh MPIEXEC PROGRAM INTERCEPT_LIB WORKDIR TRACKING
set -euo pipefail
mpiexec=$1 prog=$2 lib=$3 work=$4 tracking=$5
np=2

rm -rf "$work"
mkdir -p "$work"
shm=/dev/shm/cairn-incremental-test-$$
trap 'rm -rf "$shm"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CAIRN_DIR=$work/cairn CAIRN_TIERS_MEMORY_PATH=$shm CAIRN_GENERAL_LOG_LEVEL=info
export CAIRN_TRANSPARENT_TRACKING=$tracking TEST_TRACKING=$tracking CAIRN_TOPOLOGY_RANKS_PER_NODE=1
unset CAIRN_DEDUP_MODE CAIRN_CONFIG
# mprotect tracking: a kernel write into a tracked page fails (EFAULT)
# instead of faulting, so Open MPI must not copy messages with the kernel.
job() {
  "$mpiexec" --allow-run-as-root --oversubscribe -np $np \
    --mca btl_vader_single_copy_mechanism none "$@"
}
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== run 1 (tracking $tracking): versions 0-2, then SIGKILL"
if job env LD_PRELOAD="$lib" TEST_CRASH=1 "$prog" >"$work/run1.log" 2>&1; then
  fail "run 1 was not killed: $(cat "$work/run1.log")"
fi
if grep -q "transparent.tracking: .*tracking" "$work/run1.log"; then
  grep -m1 "transparent.tracking" "$work/run1.log"
  exit 77  # the kernel does not offer this method (CTest SKIP_RETURN_CODE)
fi
grep -q "FAIL rank" "$work/run1.log" && fail "run 1: $(grep "FAIL rank" "$work/run1.log")"
grep -q "transparent mode: version 2 in MPI_Barrier" "$work/run1.log" ||
  fail "run 1 did not reach version 2: $(cat "$work/run1.log")"
grep "heap pages written since" "$work/run1.log" | head -6

echo "== run 2: the same command restarts from version 2"
job env LD_PRELOAD="$lib" TEST_RESUMED=1 "$prog" >"$work/run2.log" 2>&1 ||
  fail "run 2: $(cat "$work/run2.log")"
grep -q "restored version 2" "$work/run2.log" || fail "no restore: $(cat "$work/run2.log")"
[[ $(grep -c "^PASS" "$work/run2.log") == "$np" ]] || fail "run 2: $(cat "$work/run2.log")"
grep "^PASS" "$work/run2.log"
echo "PASS: incremental versions hash only the written pages, restart bit-exact ($tracking)"
