#!/usr/bin/env bash
# The transparent-mode test (label transparent; docs/transparent.md): the
# unmodified cg example runs under libcairn_intercept.so, one rank gets
# SIGUSR1 (version 0), later another one (version 1, incremental: its
# clean pages refer to version 0), the job is SIGKILLed after that
# committed, the same command restarts it from version 1, and every rank's
# result is bit-identical to an uninterrupted run without the library. No sleeps: the test acts on the
# program's own output lines (read from a pipe) and holds it at known
# iterations through its standard input.
#
# usage: restart_test.sh MPIEXEC CG INTERCEPT_LIB WORKDIR TRACKING [SAFE_POINT]
# SAFE_POINT: the call expected to take the checkpoint, MPI_Allreduce (the
# default) or MPI_Waitall (then [transparent] wait_safe_points is on).
set -euo pipefail
mpiexec=$1 cg=$2 lib=$3 work=$4 tracking=$5 safe_point=${6:-MPI_Allreduce}
np=4 rows=5000 iterations=120 hold1=30 hold2=60 hold3=90

rm -rf "$work"
mkdir -p "$work/reference" "$work/run"
shm=/dev/shm/cairn-transparent-test-$$
trap 'rm -rf "$shm"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CAIRN_DIR=$work/cairn CAIRN_TIERS_MEMORY_PATH=$shm CAIRN_GENERAL_LOG_LEVEL=info
export CAIRN_TRANSPARENT_TRACKING=$tracking CAIRN_TOPOLOGY_RANKS_PER_NODE=2
[[ $safe_point == MPI_Waitall ]] && export CAIRN_TRANSPARENT_WAIT_SAFE_POINTS=true
# mprotect tracking: a kernel write into a tracked page fails (EFAULT)
# instead of faulting, so Open MPI must not copy messages with the kernel.
mca=(--mca btl_vader_single_copy_mechanism none)
job() { "$mpiexec" --allow-run-as-root --oversubscribe -np $np "${mca[@]}" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== uninterrupted run without Cairn"
job "$cg" $rows $iterations "$work/reference" </dev/null >"$work/reference.log" 2>&1
grep -q "^done" "$work/reference.log" || fail "reference run: $(cat "$work/reference.log")"

echo "== preloaded run (tracking $tracking): SIGUSR1 to rank 2, then SIGKILL"
mkfifo "$work/stdin" "$work/stdout"
job env LD_PRELOAD="$lib" "$cg" $rows $iterations "$work/run" $hold1 $hold2 $hold3 \
  <"$work/stdin" >"$work/stdout" 2>&1 &
launcher=$!
exec 3>"$work/stdin" 4<"$work/stdout"
declare -A pid
line=
# Reads one line of the job into $line, noting rank pids; keeps a copy in
# run1.log. The ranks' lines reach mpirun in any order.
next_line() {
  if ! IFS= read -r line <&4; then
    # A tracking method this kernel lacks is a skip (CTest SKIP_RETURN_CODE).
    if grep -q "transparent.tracking: .*tracking" "$work/run1.log"; then
      grep -m1 "transparent.tracking" "$work/run1.log"
      exit 77
    fi
    fail "the job ended early: $(cat "$work/run1.log")"
  fi
  echo "$line" >>"$work/run1.log"
  if [[ $line =~ ^rank\ ([0-9]+)\ pid\ ([0-9]+) ]]; then
    pid[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
  fi
}
until_line() {
  next_line
  until [[ $line == *"$1"* ]]; do next_line; done
}
until_line "hold $hold1"
while ((${#pid[@]} < np)); do next_line; done
kill -USR1 "${pid[2]}"          # one rank asks; all take it at the next MPI_Allreduce
echo go >&3                     # rank 0 goes on
until_line "hold $hold2"        # the checkpoint came before this point
# With the waits as safe points, whether a wait or an allreduce comes first
# after the signal depends on where rank 2 was when it arrived: either is
# right; the restart must be bit-identical from both.
expected=$safe_point
[[ $safe_point == MPI_Waitall ]] && expected="MPI_Waitall\|MPI_Allreduce"
grep -q "transparent mode: version 0 in \($expected\)" "$work/run1.log" ||
  fail "no checkpoint was taken in $safe_point"
grep -m1 "transparent mode: version 0 in" "$work/run1.log"
grep -q "tracking $tracking" "$work/run1.log" || [[ $tracking == auto ]] ||
  fail "the log does not name tracking $tracking"
kill -USR1 "${pid[1]}"          # a second version, incremental over the first
echo go >&3
until_line "hold $hold3"
grep -q "transparent mode: version 1 in \($expected\)" "$work/run1.log" ||
  fail "no second checkpoint was taken in $safe_point"
grep -m1 "transparent mode: version 1 in" "$work/run1.log"
kill -KILL "${pid[@]}"
cat <&4 >>"$work/run1.log" || true
exec 3>&- 4<&-
if wait $launcher; then fail "the killed job exited 0"; fi

echo "== a restart whose heap would sit elsewhere is refused, naming both addresses"
if CAIRN_TRANSPARENT_ARENA_ADDRESS=0x300000000000 job env LD_PRELOAD="$lib" "$cg" $rows \
    $iterations "$work/run" </dev/null >"$work/refused.log" 2>&1; then
  fail "a restart with another arena address ran: $(cat "$work/refused.log")"
fi
grep -q "heap was at 0x200000000000.*0x300000000000" "$work/refused.log" ||
  fail "the refusal does not name the addresses: $(cat "$work/refused.log")"

echo "== the same command again: restart from the newest checkpoint"
printf 'go\ngo\ngo\n' | job env LD_PRELOAD="$lib" "$cg" $rows $iterations "$work/run" $hold1 \
  $hold2 $hold3 >"$work/run2.log" 2>&1 || fail "restarted job failed: $(cat "$work/run2.log")"
grep -q "restored version 1" "$work/run2.log" || fail "no restore: $(cat "$work/run2.log")"
# It resumed after iteration $hold2: it never held there or before again.
if grep -q "^hold \($hold1\|$hold2\)\$" "$work/run2.log"; then
  fail "the restarted job ran from an earlier point"
fi
grep -q "^hold $hold3\$" "$work/run2.log" || fail "the restarted job did not pass iteration $hold3"

echo "== results"
diff <(grep "^done" "$work/reference.log") <(grep "^done" "$work/run2.log") ||
  fail "the final residual differs"
for ((r = 0; r < np; r++)); do
  cmp "$work/reference/x.$r" "$work/run/x.$r" || fail "rank $r's solution differs"
done
echo "PASS: bit-identical after SIGUSR1, SIGKILL and restart (tracking $tracking, $safe_point)"
