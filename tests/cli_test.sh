#!/usr/bin/env bash
# The `cairn` command against real checkpoints written by the heat example
# on 2 ranks (2 virtual nodes): list and inspect show what is there, verify
# passes on intact storage and fails, naming the file, on a flipped bit, a
# truncated file and a deleted file; on the memory tier (ecc = "normal",
# RS(36,32)) it counts the shards the ECC sidecar corrects and those it
# cannot, and fails on correctable damage too. `cairn model --plot` draws a
# PNG or fails clearly (no python3, no matplotlib, unwritable file); `cairn
# status` reads two nodes' wear ledgers and placement histories (written by
# tests/cli_status_fixture.cc, then torn and damaged) and the heat run's own.
# `cairn profile` under `mpirun -np 2` measures process parallelism 1..2 and
# only rank 0 prints; launched plainly or on one rank it measures threads.
set -uo pipefail
BUILD=$(cd "$1" && pwd)
CAIRN=$BUILD/cairn
HEAT=$BUILD/examples/heat/heat
WORK=$(mktemp -d /tmp/cairn-cli-test-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
passes=0
failures=0
check() {  # check DESCRIPTION COMMAND... : the command must succeed
  local what=$1; shift
  if "$@"; then
    echo "ok   $what"; passes=$((passes + 1))
  else
    echo "FAIL $what"; failures=$((failures + 1))
  fi
}
garble() {  # garble FILE FIRST COUNT: inverts COUNT 4 KiB shards from shard FIRST
  python3 - "$@" <<'PY'
import sys
path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    f.seek(first * 4096); b = f.read(count * 4096)
    f.seek(first * 4096); f.write(bytes(x ^ 0xFF for x in b))
PY
}
json_ok() {  # json_ok EXPR: the Python EXPR holds over stdin's JSON lines (lines, last)
  python3 -c 'import json, sys
lines = [json.loads(line) for line in sys.stdin if line.strip()]
last = lines[-1] if lines else None
sys.exit(0 if eval("(" + sys.argv[1] + ")") else 1)' "$1"
}

cat > "$WORK/cairn.toml" <<TOML
[general]
dir = "$WORK/data"
log_level = "error"
[tiers.memory]
path = "$WORK/shm/{node}"
ecc = "normal"
ecc_sync = true  # every version gets its sidecar: a background encode may be superseded
keep_at_finalize = true
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
check "list --json has one complete object per tier and version" \
  json_ok 'len(lines) == 6 and all(l["complete"] and l["ranks_complete"] == 2 for l in lines)' <<< "$json"

inspect=$("$CAIRN" inspect heat 40 --config "$WORK/cairn.toml")
echo "$inspect"
check "inspect shows both ranks' parts with CRC ok on every tier" \
  test "$(echo "$inspect" | grep -c 'r00000[01].part .* ok$')" -eq 6
check "inspect of a missing version fails" bash -c "! '$CAIRN' inspect heat 7 --config '$WORK/cairn.toml' 2>/dev/null"

# --- two jobs in one version directory (issue 10 item 3) ---------------------
# A 4-rank job writes versions 10 and 20; a 2-rank job in the same
# directories starts afresh and writes them again. Nodes 0-1 then hold the
# 2-rank run's ranks 0-1, nodes 2-3 the 4-rank run's ranks 2-3: list and
# inspect show each run apart, never one "4/4 complete" version.
sed -e "s|$WORK/data|$WORK/jobs|" -e "s|$WORK/shm|$WORK/jobshm|" "$WORK/cairn.toml" > "$WORK/jobs.toml"
for np in 4 2; do
  mpirun --allow-run-as-root --oversubscribe -np $np "$HEAT" --steps 20 --every 10 --rows 32 \
    --cols 32 --config "$WORK/jobs.toml" --out "$WORK/jobs-$np.bin" > "$WORK/jobs-$np.log" 2>&1 \
    || { cat "$WORK/jobs-$np.log"; echo "FAIL heat run on $np ranks"; failures=$((failures + 1)); }
done
list=$("$CAIRN" list --config "$WORK/jobs.toml")
echo "$list"
check "list never adds two runs' ranks up to a complete version" \
  test -z "$(grep -E ' 4/4 +' <<< "$list")"
check "list shows the 2-rank run of version 20 complete and the 4-rank run's rest apart" \
  test "$(grep -cE '^memory +heat +20 +2/2 .* complete +none +[0-9a-f]{16} +0,1$' <<< "$list")" -eq 1 \
       -a "$(grep -cE '^memory +heat +20 +2/4 .* incomplete +none +[0-9a-f]{16} +2,3$' <<< "$list")" -eq 1
check "list --json gives each run of version 20 its run_id and nranks" python3 - <(
  "$CAIRN" list --json --config "$WORK/jobs.toml") <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
v20 = {r["nranks"]: r for r in rows if r["tier"] == "memory" and r["version"] == 20}
assert set(v20) == {2, 4}, rows
assert v20[2]["complete"] and v20[2]["ranks_complete"] == 2, v20
assert not v20[4]["complete"] and v20[4]["ranks_complete"] == 2, v20
assert isinstance(v20[2]["run_id"], int) and v20[2]["run_id"] != v20[4]["run_id"], v20
PY
inspect=$("$CAIRN" inspect heat 20 --config "$WORK/jobs.toml")
echo "$inspect"
check "inspect closes each run of version 20 with its own count" \
  test "$(grep -cE '^memory tier, run [0-9a-f]{16}: 2/2 ranks, complete; redundancy none$' <<< "$inspect")" -eq 1 \
       -a "$(grep -cE '^memory tier, run [0-9a-f]{16}: 2/4 ranks, incomplete; redundancy none$' <<< "$inspect")" -eq 1
check "inspect --json names each copy's run and job size" \
  json_ok 'all(l["run_id"] and l["nranks"] in (2, 4) for l in lines)
           and {l["nranks"] for l in lines if l["rank"] >= 2} == {4}' \
  <<< "$("$CAIRN" inspect heat 20 --json --config "$WORK/jobs.toml")"

check "verify passes on intact storage" "$CAIRN" verify --config "$WORK/cairn.toml"

# One garbled shard of a memory part: its sidecar corrects it, yet the copy
# is not clean. A part cut 100 bytes into its last whole shard loses 2
# shards (that one and the partial one after it): correctable.
mem40="$WORK/shm/1/heat/v0000000040/r000001.part"
garble "$mem40" 1 1
out=$("$CAIRN" verify --config "$WORK/cairn.toml"); rc=$?
echo "$out"
check "verify exits 1 on correctable damage" test $rc -eq 1
check "verify names the correctable file with 1 shard corrected" \
  grep -q "CORRECTABLE $mem40: 1 shard(s) in 1 stripe(s) corrected by its ECC sidecar, 0 uncorrectable" <<< "$out"
mem30="$WORK/shm/1/heat/v0000000030/r000001.part"
truncate -s $(( $(stat -c %s "$mem30") / 4096 * 4096 - 100 )) "$mem30"
summary=$("$CAIRN" verify --json --config "$WORK/cairn.toml" | tail -1)
check "verify --json counts 2 correctable files, 3 shards corrected, none damaged" \
  json_ok 'last["damaged"] == 0 and last["correctable"] == 2 and last["ecc_shards_corrected"] == 3
           and last["ecc_shards_uncorrectable"] == 0' <<< "$summary"

part="$WORK/data/ssd/1/heat/v0000000040/r000001.part"
python3 - "$part" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(0, 2); at = f.tell() // 2
    f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ 0x10]))
PY
out=$("$CAIRN" verify --config "$WORK/cairn.toml"); rc=$?
echo "$out"
check "verify fails on a flipped bit" test $rc -eq 1
check "verify names the damaged file" grep -q "DAMAGED $part" <<< "$out"

truncate -s 1000 "$WORK/data/pfs/heat/v0000000030/r000000.part"
out=$("$CAIRN" verify --json --config "$WORK/cairn.toml"); rc=$?
check "verify --json reports the truncated file" grep -q 'pfs/heat/v0000000030' <<< "$out"
check "verify --json counts 2 damaged" json_ok 'last["damaged"] == 2' <<< "$out"

# Five garbled shards in one stripe: beyond RS(36,32), which rebuilds four.
mem30_0="$WORK/shm/0/heat/v0000000030/r000000.part"
garble "$mem30_0" 0 5
out=$("$CAIRN" verify --json --config "$WORK/cairn.toml"); rc=$?
check "verify exits 1 on uncorrectable damage" test $rc -eq 1
check "verify --json counts 5 uncorrectable shards of the memory part" \
  json_ok "any(l.get('file') == '$mem30_0' and l['ecc_shards_uncorrectable'] == 5
               and l['ecc_stripes_uncorrectable'] == 1 and l['correctable'] is False
               for l in lines)" <<< "$out"
check "verify --json counts 3 damaged, 2 correctable" \
  json_ok 'last["damaged"] == 3 and last["correctable"] == 2' <<< "$out"

rm "$WORK/shm/0/heat/v0000000040/r000000.manifest"
list=$("$CAIRN" list --config "$WORK/cairn.toml")
check "a missing manifest makes the version incomplete" \
  grep -qE '^memory +heat +40 +1/2 .* incomplete' <<< "$list"

# A directory name of digits too long for int beside the node directories,
# and a version directory beyond any int version: skipped, never an abort
# (issue 9: std::stoi threw out_of_range).
mkdir -p "$WORK/data/ssd/99999999999999999999" "$WORK/data/ssd/007" \
         "$WORK/data/ssd/1/heat/v9999999999"
out=$("$CAIRN" list --config "$WORK/cairn.toml" 2>&1); rc=$?
check "list skips out-of-range node and version directory names" \
  test $rc -eq 0 -a "$(grep -cE '^ssd +heat +(30|40) ' <<< "$out")" -eq 2 \
       -a -z "$(grep -E '9999999999|007' <<< "$out")"
rm -rf "$WORK/data/ssd/99999999999999999999" "$WORK/data/ssd/007" \
       "$WORK/data/ssd/1/heat/v9999999999"

# --- nothing to verify: its own exit status (issue 9 item 8) ----------------
cat > "$WORK/empty.toml" <<TOML
[general]
dir = "$WORK/nowhere"
[tiers.memory]
path = "$WORK/noshm/{node}"
TOML
err=$("$CAIRN" verify --config "$WORK/empty.toml" 2>&1 >/dev/null); rc=$?
check "verify of an empty directory exits 3" test $rc -eq 3
check "verify of an empty directory names where it looked" \
  grep -qF "no checkpoint found (0 incomplete copies) in memory tier $WORK/noshm/{node}, ssd tier $WORK/nowhere/ssd/{node}, pfs tier $WORK/nowhere/pfs" <<< "$err"
out=$("$CAIRN" verify --json --config "$WORK/empty.toml" 2>/dev/null); rc=$?
check "verify --json of an empty directory exits 3 with a summary of 0 files" \
  json_ok 'last["files_checked"] == 0 and last["damaged"] == 0' <<< "$out"
check "list of an empty directory says where it looked" \
  grep -qF "no checkpoints found in memory tier $WORK/noshm/{node}" \
  <<< "$("$CAIRN" list --config "$WORK/empty.toml")"

# --- a lost node without redundancy or a pfs copy ---------------------------
# Every copy left checks clean, yet no version can be restored: rank 1's
# copies went with its node. verify names each version and the checkpoint
# name that a restart would start over, and exits 1.
cat > "$WORK/lost.toml" <<TOML
[general]
dir = "$WORK/lostdata"
log_level = "error"
[tiers.memory]
path = "$WORK/lostshm/{node}"
keep_at_finalize = true
[tiers.ssd]
enabled = false
[tiers.pfs]
enabled = false
[topology]
ranks_per_node = 1
TOML
mpirun --allow-run-as-root --oversubscribe -np 2 "$HEAT" --steps 20 --every 10 --rows 64 --cols 64 \
  --config "$WORK/lost.toml" --out "$WORK/lost-grid.bin" > "$WORK/lost-heat.log" 2>&1 \
  || { cat "$WORK/lost-heat.log"; echo "FAIL heat run for the lost node"; exit 1; }
check "verify passes before the node is lost" "$CAIRN" verify --config "$WORK/lost.toml"
rm -rf "$WORK/lostshm/1"
out=$("$CAIRN" verify --config "$WORK/lost.toml"); rc=$?
echo "$out"
check "verify exits 1 when a lost node leaves no version restorable" test $rc -eq 1
check "verify names each version that lost rank 1, and the name left with none" \
  test "$(grep -cE "^NOT-RESTORABLE 'heat' version (10|20) \(run [0-9a-f]{16}, 2 ranks\): no usable copy of rank\(s\) 1 on any tier" <<< "$out")" -eq 2 \
       -a -n "$(grep -F "NOTHING-RESTORABLE 'heat'" <<< "$out")"
out=$("$CAIRN" verify --json --config "$WORK/lost.toml")
check "verify --json counts 2 versions not restorable and names heat" \
  json_ok 'last["versions_not_restorable"] == 2 and last["names_without_restorable_version"] == ["heat"]
           and last["damaged"] == 0' <<< "$out"
# The job itself starts over, and says why instead of nothing.
CAIRN_GENERAL_LOG_LEVEL=warn mpirun --allow-run-as-root --oversubscribe -np 2 "$HEAT" --steps 20 \
  --every 10 --rows 64 --cols 64 --config "$WORK/lost.toml" --out "$WORK/lost-grid2.bin" \
  > "$WORK/lost-heat2.log" 2>&1
check "a job restarted after losing the node starts over and warns once why" \
  test "$(grep -c "1 of 2 ranks hold versions of it, but no version has a copy on every rank" "$WORK/lost-heat2.log")" -eq 1 \
       -a -z "$(grep "resumed from" "$WORK/lost-heat2.log")"

# --- cairn prune and cairn delete (issue 9 item 8) --------------------------
# Versions 10..50 kept on every tier (drains are synchronous: an async
# drain that falls behind is superseded by the next version's), parts over
# 1 MiB so that the memory tier parks slots. Then version 40 is left incomplete on every tier (an
# interrupted checkpoint: not recoverable), and rank 1's ssd copy of
# version 50 loses its manifest (50 stays recoverable from the other tiers).
# prune --keep 2 keeps 50 and 30 with every copy, the incomplete ssd one
# included, and removes 10, 20 and the leftover 40.
cat > "$WORK/rm.toml" <<TOML
[general]
dir = "$WORK/rmdata"
log_level = "error"
[tiers.memory]
path = "$WORK/rmshm/{node}"
keep_at_finalize = true
[tiers.ssd]
flush = "sync"
[tiers.pfs]
flush = "sync"
[retention]
keep = 5
[topology]
ranks_per_node = 1
TOML
mpirun --allow-run-as-root --oversubscribe -np 2 "$HEAT" --steps 50 --every 10 --rows 600 \
  --cols 600 --config "$WORK/rm.toml" --out "$WORK/rm-grid.bin" > "$WORK/rm-heat.log" 2>&1 \
  || { cat "$WORK/rm-heat.log"; echo "FAIL heat run for prune and delete"; exit 1; }
versions_on() {  # versions_on TIER: the versions `cairn list --json` shows on TIER
  "$CAIRN" list --json --config "$WORK/rm.toml" |
    python3 -c 'import json, sys; print(" ".join(str(l["version"]) for l in map(json.loads, sys.stdin) if l["tier"] == sys.argv[1]))' "$1"
}
check "heat left versions 10..50 on every tier" \
  test "$(versions_on memory)|$(versions_on ssd)|$(versions_on pfs)" = \
       "10 20 30 40 50|10 20 30 40 50|10 20 30 40 50"
find "$WORK/rmdata" "$WORK/rmshm" -path '*/v0000000040/r000000.manifest' -delete
rm "$WORK/rmdata/ssd/1/heat/v0000000050/r000001.manifest"
tree_before=$(find "$WORK/rmdata" "$WORK/rmshm" | sort)

out=$("$CAIRN" prune --keep 2 --dry-run --config "$WORK/rm.toml"); rc=$?
echo "$out"
check "prune --dry-run exits 0 and removes nothing" \
  test $rc -eq 0 -a "$(find "$WORK/rmdata" "$WORK/rmshm" | sort)" = "$tree_before"
check "prune --dry-run names what it would remove and what it keeps" \
  test "$(grep -cE '^would remove +(memory|ssd|pfs) ' <<< "$out")" -eq 15 \
       -a -n "$(grep -F 'would remove 15 version directories and 0 parked-slot directories' <<< "$out")" \
       -a -n "$(grep -F 'kept heat 50, 30' <<< "$out")"

out=$("$CAIRN" prune --keep 2 --json --config "$WORK/rm.toml"); rc=$?
check "prune --keep 2 --json: 10, 20 and 40 removed from 5 tier directories, 50 and 30 kept" \
  json_ok 'last["versions_removed"] == 15 and last["failed"] == 0 and last["kept"] == {"heat": [50, 30]}
           and last["dry_run"] is False
           and sorted({l["version"] for l in lines[:-1]}) == [10, 20, 40]
           and all(l["action"] == "removed" for l in lines[:-1])' <<< "$out"
check "prune kept versions 30 and 50 on every tier" \
  test "$(versions_on memory)|$(versions_on ssd)|$(versions_on pfs)" = "30 50|30 50|30 50"
check "prune kept the incomplete ssd copy of the kept version 50" \
  test -s "$WORK/rmdata/ssd/1/heat/v0000000050/r000001.part"
check "verify passes after prune" "$CAIRN" verify --config "$WORK/rm.toml"
# The kept version restarts: heat resumes from step 50.
mpirun --allow-run-as-root --oversubscribe -np 2 "$HEAT" --steps 60 --every 10 --rows 600 \
  --cols 600 --config "$WORK/rm.toml" --out "$WORK/rm-grid2.bin" > "$WORK/rm-heat2.log" 2>&1
check "heat restarts from version 50 after prune" grep -q "resumed from version 50 " "$WORK/rm-heat2.log"
check "prune of a name with no checkpoint exits 3" \
  bash -c "'$CAIRN' prune --keep 1 absent --config '$WORK/rm.toml' 2>/dev/null; test \$? -eq 3"
check "prune --keep 0 is a usage error" \
  bash -c "! '$CAIRN' prune --keep 0 --config '$WORK/rm.toml' 2>/dev/null"

slots=$(find "$WORK/rmshm" -path '*/.free/*' -type f | wc -l)
echo "parked slots before delete: $slots"
tree_before=$(find "$WORK/rmdata" "$WORK/rmshm" | sort)
out=$("$CAIRN" delete heat --dry-run --json --config "$WORK/rm.toml"); rc=$?
check "delete --dry-run exits 0, removes nothing, and counts every version and slot" \
  test $rc -eq 0 -a "$(find "$WORK/rmdata" "$WORK/rmshm" | sort)" = "$tree_before" \
       -a -n "$(json_ok "last['dry_run'] is True and last['versions_removed'] == 15
                         and sum(l.get('slots', 0) for l in lines[:-1]) == $slots" <<< "$out" \
                && echo ok)"
err=$("$CAIRN" delete ../heat --config "$WORK/rm.toml" 2>&1); rc=$?
check "delete refuses a name with a path separator" \
  test $rc -eq 2 -a -n "$(grep -F "checkpoint name '../heat'" <<< "$err")"
out=$("$CAIRN" delete heat --config "$WORK/rm.toml"); rc=$?
echo "$out"
check "delete heat exits 0 and says what it removed" \
  test $rc -eq 0 -a -n "$(grep -E "^removed 15 version directories and [0-9]+ parked-slot director(y|ies) .* of 'heat'$" <<< "$out")"
check "delete leaves no version, name directory or parked slot on any tier" \
  test -z "$(find "$WORK/rmdata" "$WORK/rmshm" -name heat -o -name '.free' -o -name 'v00*')"
check "list shows nothing after delete" \
  grep -q "^no checkpoints found in" <<< "$("$CAIRN" list --config "$WORK/rm.toml")"
err=$("$CAIRN" delete heat --config "$WORK/rm.toml" 2>&1); rc=$?
check "delete of a name that is gone exits 3, naming where it looked" \
  test $rc -eq 3 -a -n "$(grep -F "no checkpoint named 'heat' in memory tier $WORK/rmshm/{node}" <<< "$err")"

# --- cairn model --plot and cairn status (issue 5; issue 3 item 8) ---------
is_png() {  # is_png FILE: non-empty and starting with the PNG signature
  test -s "$1" && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
json_lines() {  # json_lines: every line of stdin is one JSON value
  python3 -c 'import json, sys; [json.loads(line) for line in sys.stdin]'
}

out=$("$CAIRN" model --plot "$WORK/model.png"); rc=$?
check "model --plot exits 0 and says what it wrote" \
  test $rc -eq 0 -a "$(tail -1 <<< "$out")" = "wrote $WORK/model.png"
check "model --plot writes a PNG" is_png "$WORK/model.png"
check "model --plot removes its data file" \
  test -z "$(find "$WORK" -maxdepth 1 -name 'model.png.data-*')"
"$CAIRN" model --json --plot "$WORK/model2.png" > "$WORK/model.json"
check "model --json --plot keeps stdout JSON only" json_lines < "$WORK/model.json"
check "model --json --plot writes a PNG" is_png "$WORK/model2.png"
err=$("$CAIRN" model --plot "$WORK/missing/model.png" 2>&1 >/dev/null); rc=$?
check "model --plot into a missing directory fails, naming the file" \
  test $rc -eq 1 -a -n "$(grep -F "cannot write the plot $WORK/missing/model.png" <<< "$err")"
mkdir "$WORK/nompl" "$WORK/empty"
# A python3 that finds no site packages, hence no matplotlib. (The real
# binary: `command -v` may name a pyenv shim, which needs PATH.)
printf '#!/bin/sh\nexec %s -S "$@"\n' "$(python3 -c 'import sys; print(sys.executable)')" \
  > "$WORK/nompl/python3"
chmod +x "$WORK/nompl/python3"
err=$(PATH="$WORK/nompl" "$CAIRN" model --plot "$WORK/nompl.png" 2>&1 >/dev/null); rc=$?
check "model --plot without matplotlib fails and says so" \
  test $rc -eq 1 -a -n "$(grep 'no python3 on PATH has matplotlib' <<< "$err")"
err=$(PATH="$WORK/empty" "$CAIRN" model --plot "$WORK/nopython.png" 2>&1 >/dev/null); rc=$?
check "model --plot without python3 fails and says so" \
  test $rc -eq 1 -a -n "$(grep 'python3 is not on PATH' <<< "$err")"
check "a failed --plot leaves no PNG" test ! -e "$WORK/nompl.png" -a ! -e "$WORK/nopython.png"
PATH="$WORK/nompl" python3 "$(dirname "$0")/../scripts/cairn_plot.py" "$WORK/none.json" \
  "$WORK/x.png" 2> /dev/null; rc=$?
check "cairn_plot.py exits 3 without matplotlib" test $rc -eq 3

# cairn status over two nodes' SSD tiers as two runs left them
# (tests/cli_status_fixture.cc says what they hold).
cat > "$WORK/status.toml" <<TOML
[general]
dir = "$WORK/sdata"
log_level = "error"
[tiers.memory]
path = "$WORK/sshm/{node}"
TOML
for node in 0 1; do
  "$BUILD/tests/cli_status_fixture" "$WORK/sdata/ssd/$node" || echo "FAIL fixture node $node"
done
status=$("$CAIRN" status --config "$WORK/status.toml"); rc=$?
echo "$status"
check "status exits 0" test $rc -eq 0
# 5 SSD checkpoints of 10 GB; run 2 wrote 20 GB in 360 s (55.6 MB/s), so
# the SSD lasts (14.6e15 - 50e9) B / 55.6 MB/s = 8.33 y against 5.00 y.
check "status shows each node's SSD bytes, rate and lifetime against the warranty" \
  test "$(grep -cE '^[01] +46.6 GiB +0.000342 % +55.56 MB/s +8.33 y +5.00 y +ok +ledger$' \
          <<< "$status")" -eq 2
check "status splits the latest run: 3 memory, 2 ssd, 1 skipped of 6" \
  test "$(grep -cE '^[01] +latest, 2026-01-02 00:00:00Z +6 +50.0 % +33.3 % +16.7 % +6.0 % +10 % +lifetime$' \
          <<< "$status")" -eq 2
check "status splits all runs: 8 memory, 5 ssd, 3 skipped of 16" \
  test "$(grep -cE '^[01] +all 2 runs +16 +50.0 % +31.2 % +18.8 %' <<< "$status")" -eq 2
"$CAIRN" status --json --config "$WORK/status.toml" > "$WORK/status.json"
check "status --json has the exact figures" python3 - "$WORK/status.json" <<'PY'
import json, sys
nodes = [json.loads(line) for line in open(sys.argv[1])]
rate = 20e9 / 360
assert [n["node"] for n in nodes] == ["0", "1"], nodes
for n in nodes:
    assert n["ledger_bytes"] == 50e9 and n["ssd_bytes_used"] == 50e9, n
    assert abs(n["rate_bps"] / rate - 1) < 1e-12, n["rate_bps"]
    assert abs(n["estimated_lifetime_s"] / ((14.6e15 - 50e9) / rate) - 1) < 1e-12, n
    assert n["wearing_too_fast"] is False and n["wear_source"] == "ledger", n
    assert n["latest_run"] == {"runs": 1, "checkpoints": 6, "memory": 3, "ssd": 2, "skip": 1}, n
    assert n["overall"] == {"runs": 2, "checkpoints": 16, "memory": 8, "ssd": 5, "skip": 3}, n
    assert n["slowdown"] == 0.06 and n["last_rule"] == "lifetime" and n["problems"] == [], n
PY
"$CAIRN" status --json --plot "$WORK/status.png" --config "$WORK/status.toml" > "$WORK/status2.json"
check "status --plot writes a PNG" is_png "$WORK/status.png"
check "status --json --plot keeps stdout JSON only" json_lines < "$WORK/status2.json"

history="$WORK/sdata/ssd/0/.status/history.jsonl"
printf '{"run_start":1767398400,"time":17673' >> "$history"  # a crash mid-append
out=$("$CAIRN" status --json --config "$WORK/status.toml"); rc=$?
check "status skips a torn last line" \
  test $rc -eq 0 -a "$(grep -c '"overall":{"runs":2,"checkpoints":16,' <<< "$out")" -eq 2
printf '\n{"run_start":1767398400}\n' >> "$history"  # as the next append ends the torn line
out=$("$CAIRN" status --config "$WORK/status.toml" 2>&1); rc=$?
check "status fails on a bad history line, naming the line and member" \
  test $rc -eq 1 -a -n "$(grep -E "history.jsonl' line 18: /: missing member .time." <<< "$out")"
# The heat run's own history: 4 calls (steps 10..40) per node, placement
# policy memory; drains into the SSD are in each node's ledger.
heat_status=$("$CAIRN" status --config "$WORK/cairn.toml"); rc=$?
echo "$heat_status"
check "status over the heat run: 4 calls per node, all to memory by the policy" \
  test $rc -eq 0 -a "$(grep -cE '^[01] +latest, .* +4 +100.0 % +0.0 % +0.0 % .* policy-memory$' \
                       <<< "$heat_status")" -eq 2
check "status over the heat run: each node's ledger counts the drains into the SSD" \
  test "$("$CAIRN" status --json --config "$WORK/cairn.toml" |
          python3 -c 'import json, sys; print(sum(json.loads(l)["ledger_bytes"] > 0 for l in sys.stdin))')" -eq 2

# What status shows is what the controller used (issue 10 item 11): the
# rate, its source and the lifetimes of the last decision, as the history
# records them, not the ledger measured again (here there is no ledger at
# all: measured again, the rate would be 0 and the pace ok); and no bound or
# pace verdict under a policy that did not apply them.
cat > "$WORK/rate.toml" <<TOML
[general]
dir = "$WORK/rdata"
log_level = "error"
[tiers.memory]
path = "$WORK/rshm/{node}"
TOML
python3 - "$WORK/rdata/ssd" <<'PY'
import json, os, sys
def record(policy, checked, bandwidth, source, rule, slowdown):
    return {"run_start": 1767225600, "time": 1767225660, "name": "heat", "version": 10,
            "number": 1, "placement": "memory", "rule": rule, "forced": False,
            "node_bytes": 10**9, "ssd_bytes_used": 0, "ssd_rating_bytes": 14.6e15,
            "warranty_seconds": 157788000, "bandwidth": bandwidth, "wear_source": source,
            "expected_lifetime_seconds": 1.5e8, "estimated_lifetime_seconds": 1.0e8
            if policy == "clc" else 2.0e8, "slowdown": slowdown, "slowdown_bound": 0.1,
            "checkpoint_seconds": 0.05, "policy": policy, "lifetime_checked": checked,
            "slowdown_checked": checked}
for node, r in (("0", record("clc", True, 123e6, "sysfs", "lifetime", 0.07)),
                ("1", record("memory", False, 91e6, "ledger", "policy-memory", 0.05))):
    os.makedirs(os.path.join(sys.argv[1], node, ".status"))
    with open(os.path.join(sys.argv[1], node, ".status", "history.jsonl"), "w") as f:
        f.write(json.dumps(r) + "\n")
PY
rate_status=$("$CAIRN" status --config "$WORK/rate.toml"); rc=$?
echo "$rate_status"
check "status shows the rate, source and pace of the controller's last decision" \
  test $rc -eq 0 -a "$(grep -cE '^0 .* 123.00 MB/s +3.17 y +4.75 y +too fast +sysfs$' \
                       <<< "$rate_status")" -eq 1
check "status under policy memory shows the rate but no pace verdict" \
  test "$(grep -cE '^1 .* 91.00 MB/s +6.34 y +4.75 y +- \(policy memory\) +ledger$' \
          <<< "$rate_status")" -eq 1
check "status shows the slowdown bound under clc and none under policy memory" \
  test "$(grep -cE '^0 +latest, .* +7.0 % +10 % +lifetime$' <<< "$rate_status")" -eq 1 \
       -a "$(grep -cE '^1 +latest, .* +5.0 % +- +policy-memory$' <<< "$rate_status")" -eq 1
check "status --json: the decision's figures, null where the policy applied no test" \
  json_ok 'lines[0]["rate_bps"] == 123e6 and lines[0]["wear_source"] == "sysfs"
           and lines[0]["wearing_too_fast"] is True and lines[0]["slowdown_bound"] == 0.1
           and lines[0]["policy"] == "clc" and lines[1]["policy"] == "memory"
           and lines[1]["rate_bps"] == 91e6 and lines[1]["wearing_too_fast"] is None
           and lines[1]["slowdown_bound"] is None' \
  <<< "$("$CAIRN" status --json --config "$WORK/rate.toml")"

# --- cairn profile under mpirun: process parallelism (issue 5) -------------
cat > "$WORK/profile.toml" <<TOML
[general]
dir = "$WORK/pdata"
log_level = "error"
[tiers.memory]
path = "$WORK/pshm/{node}"
[tiers.pfs]
enabled = false
TOML
echo '{"frequencies_khz": [0], "idle_w": [40], "core_busy_w": [6]}' > "$WORK/power.json"
profile_flags=(--config "$WORK/profile.toml" --power-table "$WORK/power.json" --bytes 256KiB
               --block-sizes 64KiB,128KiB)
profile_kind() {  # profile_kind FILE KIND LEVELS: every device's grid, all throughputs > 0
  python3 - "$@" <<'PY'
import json, sys
path, kind, levels = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
p = json.load(open(path))
assert [d["name"] for d in p["devices"]] == ["memory", "ssd"], p["devices"]
for d in p["devices"]:
    assert d["parallelism_kind"] == kind and d["parallelism"] == levels, (d["name"], kind, levels)
    for b in d["blocks"]:
        for op in ("read", "write"):
            rows = b[op]["throughput_bps"]
            assert len(rows) == 1 and len(rows[0]) == len(levels), rows
            assert all(t > 0 for t in rows[0]), rows
PY
}
out=$(mpirun --allow-run-as-root --oversubscribe -np 2 "$CAIRN" profile "${profile_flags[@]}" \
        --out "$WORK/profile-np2.json" 2> "$WORK/profile-np2.err"); rc=$?
echo "$out"
check "profile under mpirun -np 2 exits 0" test $rc -eq 0
check "profile under mpirun -np 2 measures processes 1..2 with positive throughputs" \
  profile_kind "$WORK/profile-np2.json" processes 1,2
check "profile under mpirun -np 2: rank 0 alone prints, a table of processes" \
  test "$(grep -cE '^device +op +freq_kHz +procs ' <<< "$out")" -eq 1 \
       -a "$(grep -cE '^(memory|ssd) ' <<< "$out")" -eq 16 -a ! -s "$WORK/profile-np2.err"
check "profile under mpirun leaves no scratch directory" \
  test -z "$(find "$WORK/pdata" "$WORK/pshm" -name '.cairn-profile-*')"
"$CAIRN" profile "${profile_flags[@]}" --max-parallelism 2 --out "$WORK/profile-plain.json" \
  > /dev/null; rc=$?
check "profile launched plainly still measures threads 1..2" \
  test $rc -eq 0 -a -n "$(profile_kind "$WORK/profile-plain.json" threads 1,2 && echo ok)"
mpirun --allow-run-as-root --oversubscribe -np 1 "$CAIRN" profile "${profile_flags[@]}" \
  --max-parallelism 2 --out "$WORK/profile-np1.json" > /dev/null; rc=$?
check "profile under mpirun -np 1 measures threads, as launched plainly" \
  test $rc -eq 0 -a -n "$(profile_kind "$WORK/profile-np1.json" threads 1,2 && echo ok)"

echo "$passes passed, $failures failed"
exit $((failures > 0))
