#!/usr/bin/env bash
# The `cairn` command against real checkpoints written by the heat example
# on 2 ranks (2 virtual nodes): list and inspect show what is there, verify
# passes on intact storage and fails, naming the file, on a flipped bit, a
# truncated file and a deleted file.
set -uo pipefail
BUILD=$(cd "$1" && pwd)
CAIRN=$BUILD/cairn
HEAT=$BUILD/examples/heat/heat
WORK=$(mktemp -d /tmp/cairn-cli-test-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND... : the command must succeed
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}

cat > "$WORK/cairn.toml" <<TOML
[general]
dir = "$WORK/data"
log_level = "error"
[tiers.memory]
path = "$WORK/shm/{node}"
[tiers.pfs]
flush = "sync"
[topology]
ranks_per_node = 1
TOML
mpirun --allow-run-as-root --oversubscribe -np 2 "$HEAT" --steps 40 --every 10 --rows 64 --cols 64 \
  --config "$WORK/cairn.toml" --out "$WORK/grid.bin" > "$WORK/heat.log" 2>&1 \
  || { cat "$WORK/heat.log"; echo "FAIL heat run"; exit 1; }

list=$("$CAIRN" list --config "$WORK/cairn.toml")
echo "$list"
check "list shows version 40 complete on every tier" \
  test "$(echo "$list" | grep -cE '^(memory|ssd|pfs) +heat +40 +2/2 .* complete')" -eq 3
check "list keeps 2 versions per tier" test "$(echo "$list" | grep -c ' heat ')" -eq 6
json=$("$CAIRN" list --json --config "$WORK/cairn.toml")
check "list --json has one object per tier and version" test "$(echo "$json" | grep -c '"complete": true')" -eq 6

inspect=$("$CAIRN" inspect heat 40 --config "$WORK/cairn.toml")
echo "$inspect"
check "inspect shows both ranks' parts with CRC ok on every tier" \
  test "$(echo "$inspect" | grep -c 'r00000[01].part .* ok$')" -eq 6
check "inspect of a missing version fails" bash -c "! '$CAIRN' inspect heat 7 --config '$WORK/cairn.toml' 2>/dev/null"

check "verify passes on intact storage" "$CAIRN" verify --config "$WORK/cairn.toml"

part="$WORK/data/ssd/1/heat/v0000000040/r000001.part"
python3 - "$part" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(20000); b = f.read(1); f.seek(20000); f.write(bytes([b[0] ^ 0x10]))
PY
out=$("$CAIRN" verify --config "$WORK/cairn.toml"); rc=$?
echo "$out"
check "verify fails on a flipped bit" test $rc -eq 1
check "verify names the damaged file" grep -q "DAMAGED $part" <<< "$out"

truncate -s 1000 "$WORK/data/pfs/heat/v0000000030/r000000.part"
out=$("$CAIRN" verify --json --config "$WORK/cairn.toml"); rc=$?
check "verify --json reports the truncated file" grep -q 'pfs/heat/v0000000030' <<< "$out"
check "verify --json counts 2 damaged" grep -q '"damaged": 2' <<< "$out"

rm "$WORK/shm/0/heat/v0000000040/r000000.manifest"
list=$("$CAIRN" list --config "$WORK/cairn.toml")
check "a missing manifest makes the version incomplete" \
  grep -qE '^memory +heat +40 +1/2 .* incomplete' <<< "$list"

echo "$((12 - failures)) passed, $failures failed"
exit $((failures > 0))
