#!/usr/bin/env bash
# kill_restart.sh — the compat tests' checkpoint / SIGKILL / restart / compare.
#
#   kill_restart.sh WORKDIR NP KILL_AT RESUME_PATTERN CONFIG -- MPIRUN... PROGRAM ARGS...
#
# Runs PROGRAM ARGS... three times, each in a fresh copy of CONFIG's
# directory layout under WORKDIR:
#   1. reference/: uninterrupted, to completion;
#   2. crashed/  : with HEATDIS_KILL_AT=KILL_AT, where every rank SIGKILLs
#                  itself (the run must fail);
#   3. crashed/  : again without it: it must restart (its output matches
#                  RESUME_PATTERN, a grep -E pattern) and finish.
# With LOSE_NODE=N, virtual node N is lost between 2 and 3: its memory
# tier and every "*/cairn/N" node-local directory are deleted, and with
# LOSE_PFS=DIR the persistent directory DIR too, so that only the
# cross-node redundancy groups can bring node N's copies back.
# The programs write their final state to ./result; the two results must be
# equal byte for byte. CAIRN_TOPOLOGY_RANKS_PER_NODE=2 makes two virtual
# nodes of four ranks (the peer's configuration file still applies).
set -euo pipefail
workdir=$1 np=$2 kill_at=$3 resume=$4 config=$5
shift 5
[[ $1 == -- ]] && shift
export CAIRN_TOPOLOGY_RANKS_PER_NODE=${CAIRN_TOPOLOGY_RANKS_PER_NODE:-2}
# Each run's memory tier is its own, under /dev/shm (which rm -rf $workdir
# does not reach), so that no copy of an earlier invocation is found.
shm=/dev/shm/cairn-compat-$$
trap 'rm -rf "$shm"' EXIT
rm -rf "$workdir"
mkdir -p "$workdir/reference" "$workdir/crashed"
for d in reference crashed; do cp "$config" "$workdir/$d/"; done

fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== uninterrupted run"
(cd "$workdir/reference" && CAIRN_TIERS_MEMORY_PATH="$shm/reference/{node}" "$@") > "$workdir/reference.log" 2>&1 ||
  { cat "$workdir/reference.log"; fail "the uninterrupted run failed"; }

echo "== run killed at step $kill_at"
if (cd "$workdir/crashed" && CAIRN_TIERS_MEMORY_PATH="$shm/crashed/{node}" HEATDIS_KILL_AT=$kill_at "$@") > "$workdir/killed.log" 2>&1; then
  cat "$workdir/killed.log"; fail "the run meant to be killed at step $kill_at finished"
fi

if [[ -n ${LOSE_NODE:-} ]]; then
  echo "== losing virtual node $LOSE_NODE${LOSE_PFS:+ and the persistent directory $LOSE_PFS}"
  rm -rf "$shm/crashed/$LOSE_NODE" "$workdir"/crashed/*/cairn/"$LOSE_NODE"
  [[ -n ${LOSE_PFS:-} ]] && rm -rf "$workdir/crashed/$LOSE_PFS"
fi

echo "== restarted run"
(cd "$workdir/crashed" && CAIRN_TIERS_MEMORY_PATH="$shm/crashed/{node}" "$@") > "$workdir/restarted.log" 2>&1 ||
  { cat "$workdir/restarted.log"; fail "the restarted run failed"; }
grep -Eq "$resume" "$workdir/restarted.log" ||
  { cat "$workdir/restarted.log"; fail "the restarted run did not print /$resume/"; }
grep -E "$resume" "$workdir/restarted.log" | head -1

cmp "$workdir/reference/result" "$workdir/crashed/result" ||
  fail "the restarted run's result differs from the uninterrupted run's"
# Warnings for peer keys without a Cairn meaning are part of the contract.
cat "$workdir/reference.log" | grep -i "warning" | head -5 || true
echo "PASS: restarted result equals the uninterrupted one ($(stat -c %s "$workdir/reference/result") bytes)"
