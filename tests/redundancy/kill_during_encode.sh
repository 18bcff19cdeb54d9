#!/usr/bin/env bash
# kill_during_encode.sh BUILD_DIR [SEED] — a SIGKILL while parity is being
# encoded in the background never leaves a version that claims parity it
# does not have (docs/redundancy.md "In the engine", step 3).
#
# 1. node_loss_test --mode endless checkpoints versions 1, 2, ... of 8 MiB
#    per rank on 4 virtual nodes with xor redundancy (no pfs tier), waiting
#    for the background work after each odd version; right after an even
#    version N is reported (N from the seed) every rank is SIGKILLed, while
#    version N's background encode is queued or running.
# 2. For every version a manifest claims is protected (cairn list --json:
#    parity_ranks > 0), every rank of the job must have committed its parity
#    file there: the claim is made only after all have.
# 3. One virtual node is lost whole (memory and ssd); node_loss_test --mode
#    restore-any restarts from the newest recoverable version, which must
#    be N - 1 or newer (rebuilt from its parity), and compares it bit for
#    bit.
# Prints the seed; exits 0 on PASS.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SEED=${2:-$(( RANDOM % 30000 + 1 ))}  # random unless given
TEST=$BUILD/tests/redundancy/node_loss_test
CLI=$BUILD/cairn
[[ -x $CLI ]] || CLI=$BUILD/src/cli/cairn
NP=4
RANDOM=$SEED
KILL_AFTER=$(( 2 * (1 + RANDOM % 3) ))  # even: its encode is queued or running
LOSE=$(( RANDOM % NP ))
DIR=$(mktemp -d /tmp/cairn-kill-encode.XXXXXX)
MPIRUN_PID=
cleanup() {
  [[ -n $MPIRUN_PID ]] && kill -KILL "$MPIRUN_PID" 2>/dev/null || true
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$DIR"
}
trap cleanup EXIT
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$NP")
ARGS=(--scheme xor --ranks-per-node 1 --kib 8192 --seed "$SEED" --dir "$DIR")
echo "kill_during_encode: seed $SEED, SIGKILL after version $KILL_AFTER, then node $LOSE is lost"

mkfifo "$DIR/out"
"${MPIRUN[@]}" "$TEST" --mode endless "${ARGS[@]}" >"$DIR/out" 2>"$DIR/err" &
MPIRUN_PID=$!
KILLED=0
while IFS= read -r line; do
  if [[ $line == "version $KILL_AFTER committed" ]] && (( KILLED == 0 )); then
    mapfile -t PIDS < <(pgrep -P "$MPIRUN_PID" -x node_loss_test)
    kill -KILL "${PIDS[@]}" 2>/dev/null || true
    KILLED=${#PIDS[@]}
  fi
done <"$DIR/out"
wait "$MPIRUN_PID" 2>/dev/null || true
MPIRUN_PID=
if (( KILLED != NP )); then
  sed -n '1,20p' "$DIR/err"
  echo "FAIL: expected to SIGKILL $NP ranks, killed $KILLED"; exit 1
fi

# Every claim of parity is backed by every rank's committed parity file.
"$CLI" list --json --config "$DIR/cairn.toml" >"$DIR/list.json"
BAD=$(python3 - "$DIR" "$NP" "$DIR/list.json" <<'PY'
import json, os, sys
root, nranks = sys.argv[1], int(sys.argv[2])
bad = claimed = 0
for line in open(sys.argv[3]):
    r = json.loads(line)
    if r["parity_ranks"] == 0:
        continue
    claimed += 1
    tier = "shm" if r["tier"] == "memory" else r["tier"]
    for rank in range(nranks):  # one rank per virtual node
        f = os.path.join(root, tier, str(rank), r["name"], "v%010d" % r["version"],
                         "r%06d.parity" % rank)
        if not os.path.exists(f):
            print("version %d on %s claims parity, but %s is missing" % (r["version"], r["tier"], f),
                  file=sys.stderr)
            bad += 1
print(bad)
if bad == 0:
    print("%d version copies claim parity, every claim backed" % claimed, file=sys.stderr)
PY
)
(( BAD == 0 )) || { echo "FAIL: $BAD parity claim(s) without parity"; exit 1; }

rm -rf "$DIR/shm/$LOSE" "$DIR/ssd/$LOSE"
echo "lost virtual node $LOSE (memory and ssd)"
if ! "${MPIRUN[@]}" "$TEST"  --mode restore-any --min-version $(( KILL_AFTER - 1 )) "${ARGS[@]}" >"$DIR/restore.out" 2>&1; then
  grep -v ' info: ' "$DIR/restore.out" | tail -20
  echo "FAIL: restart after the kill and the node loss"; exit 1
fi
grep -E '^(restored|PASS)' "$DIR/restore.out"
echo "PASS (seed $SEED)"
