#!/usr/bin/env bash
# demo.sh BUILD_DIR — Cairn's main demonstration (`make demo`).
#
# Runs examples/heat on 6 MPI ranks laid out as 3 virtual nodes of 2 ranks,
# with `xor` redundancy across the nodes and the pfs tier disabled, so that
# node-local tiers (memory and ssd) are all there is:
#   1. uninterrupted, into a reference grid;
#   2. again from scratch, SIGKILLing every rank right after a randomly
#      chosen checkpoint has been reported (the kill is synchronised on the
#      program's output, not on a timer);
#   3. shows what Cairn has on storage (`cairn list`, with each version's
#      redundancy);
#   4. loses virtual node 1 whole: deletes its memory AND its ssd tier;
#   5. restarts the job with the same command: Cairn rebuilds the lost
#      node's parts from their xor groups and the job finishes;
#   6. compares the final grid with the reference, bit for bit.
#
# A second variant, not run by `make demo`, shows Reed-Solomon surviving two
# lost nodes of four (docs/redundancy.md):
#   DEMO_SCHEME=rs DEMO_NODES=4 DEMO_LOSE=2 bash scripts/demo.sh build
# Prints PASS and exits 0 when the grids are identical and the job really
# did resume from a checkpoint; prints FAIL and exits 1 otherwise (2 on a
# usage or setup error). Needs no input, so CTest can run it.
#
# Every run gets a fresh CAIRN_DIR under a private temporary directory and a
# memory tier under /dev/shm/cairn-demo-<pid>/; both are removed on exit
# (set DEMO_KEEP=1 to keep them for inspection).
#
# Optional knobs (environment): DEMO_SEED (picks the kill point; printed so a
# run can be repeated), DEMO_ROWS, DEMO_COLS, DEMO_STEPS, DEMO_EVERY;
# DEMO_SCHEME (partner, xor, rs), DEMO_NODES (virtual nodes, 2 ranks each),
# DEMO_LOSE (nodes lost: 1..DEMO_LOSE), DEMO_PARITY (rs parities).
set -euo pipefail
export LC_ALL=C  # a '.' in $EPOCHREALTIME and in awk's numbers

die() { echo "demo: $*" >&2; exit 2; }

[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[[ -d $1 ]] || die "build directory '$1' does not exist (run 'make build' first)"
BUILD=$(cd "$1" && pwd)

HEAT=$BUILD/examples/heat/heat
CLI=$BUILD/cairn
[[ -x $CLI ]] || CLI=$BUILD/src/cli/cairn
[[ -x $HEAT ]] || die "$HEAT not found (run 'make build' first)"
[[ -x $CLI ]] || die "the cairn command is neither $BUILD/cairn nor $BUILD/src/cli/cairn"
command -v mpirun >/dev/null || die "mpirun not found (apt-get install openmpi-bin)"
[[ -d /dev/shm && -w /dev/shm ]] || die "/dev/shm is missing or not writable"

SCHEME=${DEMO_SCHEME:-xor}
NODES=${DEMO_NODES:-3}
LOSE=${DEMO_LOSE:-1}
PARITY=${DEMO_PARITY:-2}
RANKS_PER_NODE=2
[[ $SCHEME =~ ^(partner|xor|rs)$ ]] || die "DEMO_SCHEME must be partner, xor or rs, not '$SCHEME'"
for v in NODES LOSE PARITY; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "DEMO_$v must be a non-negative integer, not '${!v}'"
done
(( LOSE >= 1 && LOSE < NODES )) || die "DEMO_LOSE must be at least 1 and less than DEMO_NODES"
NP=$(( NODES * RANKS_PER_NODE ))
ROWS=${DEMO_ROWS:-1024}
COLS=${DEMO_COLS:-1024}
STEPS=${DEMO_STEPS:-800}
EVERY=${DEMO_EVERY:-20}
SEED=${DEMO_SEED:-$(( $(od -An -N2 -tu2 /dev/urandom) ))}
for v in ROWS COLS STEPS EVERY SEED; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "DEMO_$v must be a non-negative integer, not '${!v}'"
done
(( EVERY >= 1 )) || die "DEMO_EVERY must be at least 1"
NCKPT=$(( STEPS / EVERY ))
(( NCKPT >= 4 )) || die "DEMO_STEPS / DEMO_EVERY must allow at least 4 checkpoints"

# The kill point: after checkpoint k, with 2 <= k <= NCKPT/2, so that at least
# two checkpoints exist and at least half of the run is still ahead (the job
# cannot finish between the report and the kill).
RANDOM=$SEED
K_LO=2
K_HI=$(( NCKPT / 2 ))
KILL_STEP=$(( (K_LO + RANDOM % (K_HI - K_LO + 1)) * EVERY ))

# The demo sets Cairn up itself; a CAIRN_* variable from the caller's
# environment would silently change (or, if unknown, break) every run.
while IFS= read -r name; do
  echo "demo: ignoring $name from the environment"
  unset "$name"
done < <(compgen -e | grep '^CAIRN_' || true)

TMP=$(mktemp -d "${TMPDIR:-/tmp}/cairn-demo.XXXXXX")
SHM=/dev/shm/cairn-demo-$$
MPIRUN_PID=
cleanup() {
  local rc=$?
  if [[ -n $MPIRUN_PID ]] && kill -0 "$MPIRUN_PID" 2>/dev/null; then
    kill -TERM "$MPIRUN_PID" 2>/dev/null || true  # mpirun takes its ranks down
    wait "$MPIRUN_PID" 2>/dev/null || true
  fi
  if [[ ${DEMO_KEEP:-0} == 1 ]]; then
    echo "demo: kept $TMP and $SHM"
  else
    rm -rf "$TMP" "$SHM"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -m 0700 "$SHM"

MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$NP")
HEAT_ARGS=(--steps "$STEPS" --every "$EVERY" --rows "$ROWS" --cols "$COLS")

now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
indent() { sed 's/^/    | /'; }
banner() { printf '\n== %s\n' "$*"; }

# write_config NAME: a config for one run, with its own memory tier.
write_config() {
  cat >"$TMP/$1.toml" <<EOF
# Written by scripts/demo.sh for the "$1" run.
[tiers.memory]
path = "$SHM/$1/{node}"

[tiers.pfs]
enabled = false

[redundancy]
scheme = "$SCHEME"
parity = $PARITY

[topology]
ranks_per_node = $RANKS_PER_NODE
EOF
}

# rank_pids PARENT: pids of the heat processes whose parent is PARENT (mpirun
# forks the local ranks itself). Only shell builtins, so it is quick.
rank_pids() {
  local f stat rest comm state ppid
  for f in /proc/[0-9]*/stat; do
    { read -r stat <"$f"; } 2>/dev/null || continue
    comm=${stat#*\(}; comm=${comm%)*}
    rest=${stat##*) }
    read -r state ppid _ <<<"$rest"
    if [[ $ppid == "$1" && $comm == heat ]]; then
      f=${f#/proc/}; echo "${f%/stat}"
    fi
  done
}

echo "Cairn demo: heat ${ROWS}x${COLS}, $STEPS steps, checkpoint every $EVERY steps,"
echo "            $NP ranks as $NODES virtual nodes of $RANKS_PER_NODE, $SCHEME redundancy, no pfs tier"
echo "            seed $SEED -> SIGKILL right after step $KILL_STEP is checkpointed"
echo "            work dir $TMP, memory tiers under $SHM"

# ---------------------------------------------------------------- reference
banner "1/6 reference run (uninterrupted)"
write_config ref
t=$(now)
if ! CAIRN_DIR=$TMP/ref "${MPIRUN[@]}" -x CAIRN_DIR "$HEAT" "${HEAT_ARGS[@]}" \
       --config "$TMP/ref.toml" --out "$TMP/ref.grid" >"$TMP/ref.log" 2>&1; then
  indent <"$TMP/ref.log"
  echo "demo: the reference run failed"; echo FAIL; exit 1
fi
T_REF=$(secs "$t" "$(now)")
grep -v '^step ' "$TMP/ref.log" | indent
echo "    ($(grep -c '^step ' "$TMP/ref.log") checkpoints; ${T_REF} s)"
CKPT_BYTES=$(sed -n 's/.* \([0-9]*\) bytes protected per version.*/\1/p' "$TMP/ref.log" | head -1)
# Its checkpoints are not needed any more; free the memory they hold.
rm -rf "$SHM/ref" "$TMP/ref"

# ---------------------------------------------------------------- crash
banner "2/6 the same job, SIGKILLed after step $KILL_STEP (seed $SEED)"
write_config run
export CAIRN_DIR=$TMP/run
mkfifo "$TMP/out.fifo"
t=$(now)
"${MPIRUN[@]}" -x CAIRN_DIR "$HEAT" "${HEAT_ARGS[@]}" --config "$TMP/run.toml" \
  --out "$TMP/crash.grid" >"$TMP/out.fifo" 2>"$TMP/crash.err" &
MPIRUN_PID=$!
KILLED=()
LAST_REPORTED=none
while IFS= read -r line; do
  echo "$line" >>"$TMP/crash.log"
  echo "$line" | indent
  # Lines after the kill were written before the ranks died, and still in the pipe.
  if [[ $line =~ ^step\ ([0-9]+)\ checkpointed$ ]]; then
    LAST_REPORTED=${BASH_REMATCH[1]}
  fi
  if (( ${#KILLED[@]} == 0 )) && [[ $line == "step $KILL_STEP checkpointed" ]]; then
    mapfile -t KILLED < <(rank_pids "$MPIRUN_PID")
    if (( ${#KILLED[@]} > 0 )); then
      kill -KILL "${KILLED[@]}" 2>/dev/null || true
    fi
    T_KILL=$(secs "$t" "$(now)")
    echo "    >>> SIGKILL to ${#KILLED[@]} rank processes (pids ${KILLED[*]:-none}) at ${T_KILL} s"
  fi
done <"$TMP/out.fifo"
CRASH_RC=0
wait "$MPIRUN_PID" || CRASH_RC=$?
MPIRUN_PID=
T_CRASH=$(secs "$t" "$(now)")
echo "    mpirun exited with status $CRASH_RC after ${T_CRASH} s"
if (( ${#KILLED[@]} == 0 )); then
  sed -n '1,20p' "$TMP/crash.err" | indent
  echo "demo: the job ended before rank 0 reported step $KILL_STEP"; echo FAIL; exit 1
fi
if (( ${#KILLED[@]} != NP )); then
  echo "demo: expected to SIGKILL $NP rank processes, found ${#KILLED[@]}"; echo FAIL; exit 1
fi
if grep -q '^heat: done' "$TMP/crash.log" || (( CRASH_RC == 0 )); then
  echo "demo: the job was not killed (it finished on its own)"; echo FAIL; exit 1
fi
# alive PID: the process exists, is still heat, and is neither a zombie nor dead.
alive() {
  local stat rest state
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  [[ $stat == *"(heat)"* ]] || return 1
  rest=${stat##*) }
  state=${rest%% *}
  [[ $state != [ZX] ]]
}
for pid in "${KILLED[@]}"; do
  # A killed process may need a moment to leave the kernel; this only checks.
  for (( i = 0; i < 100; i++ )); do alive "$pid" || break; sleep 0.05; done
  if alive "$pid"; then
    echo "demo: rank process $pid survived SIGKILL"; echo FAIL; exit 1
  fi
done

# ---------------------------------------------------------------- list
banner "3/6 what Cairn has on storage: cairn list"
t=$(now)
if ! "$CLI" list --config "$TMP/run.toml" >"$TMP/list.out" 2>&1; then
  indent <"$TMP/list.out"
  echo "demo: 'cairn list' failed"; echo FAIL; exit 1
fi
T_LIST=$(secs "$t" "$(now)")
indent <"$TMP/list.out"
"$CLI" list --json --config "$TMP/run.toml" >"$TMP/list.json" 2>/dev/null || true
tier_usage() {
  local d
  for d in "$SHM/run"/* "$CAIRN_DIR"/ssd/* "$CAIRN_DIR"/pfs; do
    if [[ -e $d ]]; then printf '%12s bytes  %s\n' "$(du -sb "$d" | cut -f1)" "$d"; fi
  done
}
tier_usage >"$TMP/usage.out"
echo "    bytes on each tier directory:"
indent <"$TMP/usage.out"

# ---------------------------------------------------------------- node loss
LOST_NODES=$(seq -s ' ' 1 "$LOSE")
banner "4/6 losing virtual node(s) $LOST_NODES whole: deleting their memory and ssd tiers"
mapfile -t NODE_DIRS < <(find "$SHM/run" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort -V)
if (( ${#NODE_DIRS[@]} != NODES )); then
  echo "demo: expected $NODES node directories in $SHM/run, found: ${NODE_DIRS[*]:-none}"
  echo FAIL; exit 1
fi
LOST_BYTES=0
for node in $LOST_NODES; do
  for dir in "$SHM/run/$node" "$CAIRN_DIR/ssd/$node"; do
    [[ -e $dir ]] || continue
    bytes=$(du -sb "$dir" | cut -f1)
    LOST_BYTES=$(( LOST_BYTES + bytes ))
    rm -rf "$dir"
    echo "    rm -rf $dir   ($bytes bytes gone)"
  done
done
echo "    (the other nodes keep their tiers; there is no pfs copy to fall back on)"

# ---------------------------------------------------------------- restart
banner "5/6 restart: the same command again (CAIRN_GENERAL_LOG_LEVEL=info)"
t=$(now)
RESTART_RC=0
CAIRN_GENERAL_LOG_LEVEL=info "${MPIRUN[@]}" -x CAIRN_DIR -x CAIRN_GENERAL_LOG_LEVEL "$HEAT" \
  "${HEAT_ARGS[@]}" --config "$TMP/run.toml" --out "$TMP/restart.grid" \
  >"$TMP/restart.log" 2>"$TMP/restart.err" || RESTART_RC=$?
T_RESTART=$(secs "$t" "$(now)")
grep -v '^step ' "$TMP/restart.log" | indent || true
echo "    ($(grep -c '^step ' "$TMP/restart.log" || true) checkpoints in this run; status $RESTART_RC; ${T_RESTART} s)"
# Cairn's own account of the restart: its info lines that say where it read.
grep -E 'cairn\[[0-9]+\] info: .*(restor|restart|recover|read|fall|redundancy)' "$TMP/restart.err" \
  >"$TMP/restart.cairn" || true
if [[ -s $TMP/restart.cairn ]]; then
  echo "    Cairn's log (info level) about the restart:"
  indent <"$TMP/restart.cairn"
fi
if (( RESTART_RC != 0 )); then
  sed -n '1,40p' "$TMP/restart.err" | indent
  echo "demo: the restarted job failed"; echo FAIL; exit 1
fi
RESUMED=$(sed -n 's/^heat: resumed from version \([0-9]*\) (step [0-9]*);.*/\1/p' "$TMP/restart.log")

# ---------------------------------------------------------------- compare
banner "6/6 compare the final grid with the reference"
t=$(now)
SAME=0
cmp "$TMP/ref.grid" "$TMP/restart.grid" && SAME=1
T_CMP=$(secs "$t" "$(now)")
GRID_BYTES=$(stat -c %s "$TMP/restart.grid")

banner "summary"
echo "  job               heat ${ROWS}x${COLS}, $STEPS steps, checkpoint every $EVERY, $NP ranks on $(( NP / RANKS_PER_NODE )) virtual nodes"
echo "  checkpoint size   ${CKPT_BYTES:-?} bytes per version"
echo "  failure           seed $SEED: SIGKILL to all $NP ranks after step $KILL_STEP was reported"
echo "                    (rank 0 had reported checkpoints up to step $LAST_REPORTED when it died)"
# Versions per tier from `cairn list --json`; a version some rank's copy is
# missing from is starred, and one whose parity is not complete is marked.
VERSIONS=$(python3 -c '
import json, sys
rows = {}
for line in sys.stdin:
    r = json.loads(line)
    mark = "" if r["complete"] else "*"
    mark += "" if r["parity_complete"] else "(no parity)"
    rows.setdefault(r["tier"], []).append(str(r["version"]) + mark)
for tier in sorted(rows):
    print("    " + tier + ": " + " ".join(rows[tier]))' <"$TMP/list.json" || true)
echo "  before restart    versions per tier (cairn list; * = incomplete; all with $SCHEME parity unless marked):"
if [[ -n $VERSIONS ]]; then echo "$VERSIONS" | sed 's/^/                /'; else indent <"$TMP/list.out"; fi
echo "                    then lost node(s) $LOST_NODES: memory and ssd tiers deleted ($LOST_BYTES bytes)"
REBUILT=$(sed -n "s/^cairn\[0\] info: restart: rebuilt \(.*\)/\1/p" "$TMP/restart.err" | head -1)
echo "  rebuild           ${REBUILT:-nothing rebuilt}"
if [[ -n $RESUMED ]]; then
  echo "  restart           resumed from version $RESUMED (step $RESUMED), as cairn_restart returned"
  if [[ $LAST_REPORTED =~ ^[0-9]+$ ]] && (( RESUMED < LAST_REPORTED )); then
    echo "                    (newer versions were not complete on every node after the loss)"
  fi
  # Cairn's info line per rank: "restart: 'heat' version V from tier T (B bytes, S s); newest
  # version N, rolled back K version(s), X s (F failed to restore)".
  READS=$(sed -n "s/^cairn\[\([0-9]*\)\] info: restart: 'heat' version \([0-9]*\) from tier \([a-z]*\) (\([0-9]*\) bytes, \([0-9.]*\) s);.* (\([0-9]*\) failed to restore).*/\1 \2 \3 \4 \5 \6/p" \
            "$TMP/restart.err" | sort -n)
  if [[ -n $READS ]]; then
    echo "$READS" | awk '
      { ranks[$3] = ranks[$3] (ranks[$3] == "" ? "" : ",") $1; bytes += $4
        if ($5 > t) t = $5; if ($6 > older) older = $6 }
      END { line = ""
            for (k in ranks) line = line (line == "" ? "" : "; ") "ranks " ranks[k] " from " k
            printf "                    read %s\n", line
            printf "                    %d bytes read in at most %.3f s per rank; versions that failed to restore: %d\n",
                   bytes, t, older }'
  else
    echo "                    (no 'restart:' info line from Cairn found on stderr)"
  fi
else
  echo "  restart           did NOT resume from a checkpoint (started again at step 0)"
fi
echo "  result            final grid $GRID_BYTES bytes, $( ((SAME)) && echo identical to || echo DIFFERENT from ) the reference"
echo "  wall time         reference ${T_REF} s | until kill ${T_KILL:-?} s (mpirun gone at ${T_CRASH} s)"
echo "                    cairn list ${T_LIST} s | restart to the end ${T_RESTART} s | cmp ${T_CMP} s"
# Without a pfs tier, the lost node's parts can only have come back from
# their redundancy groups.
if (( SAME )) && [[ -n $RESUMED && -n $REBUILT ]]; then
  echo PASS
  exit 0
fi
echo FAIL
exit 1
