#!/usr/bin/env bash
# run_bench.sh BUILD_DIR — runs Cairn's benchmarks (`make bench`).
#
# Runs every executable found in BUILD_DIR/bench and writes what it prints on
# stdout (JSON, one object per line) to BUILD_DIR/bench-results/<name>.json;
# its stderr goes to BUILD_DIR/bench-results/<name>.log. How each benchmark is
# run (number of MPI ranks, arguments) comes from the table BENCHMARKS below;
# a binary that is not in the table is run as a single process with --json.
# Benchmarks run one at a time (they measure bandwidth; running two at once
# would measure each other). Exits 1 if any benchmark failed, 2 on a usage
# error, 0 otherwise.
#
# Knobs (environment): BENCH_ONLY="a b" runs only the named benchmarks;
# BENCH_DATA=DIR puts on-disk benchmark data there (default
# BUILD_DIR/bench-data; it must be on the disk you want to measure).
set -euo pipefail

die() { echo "run_bench: $*" >&2; exit 2; }

[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[[ -d $1 ]] || die "build directory '$1' does not exist (run 'make build' first)"
BUILD=$(cd "$1" && pwd)
BENCH_DIR=$BUILD/bench
OUT=$BUILD/bench-results
DATA=${BENCH_DATA:-$BUILD/bench-data}

# name | MPI ranks (0: run without mpirun) | arguments.
# @DATA@ is replaced by $DATA. Add a line here for a new benchmark.
BENCHMARKS=(
  "ckpt_bandwidth | 2 | --mib 256 --reps 5 --json --dir @DATA@"
  "ecc | 0 | --mib 64 --ckpt-mib 64 --reps 5 --json"
  # The CLC microbenchmark on this machine's tiers, short (2 sizes, 10
  # iterations: about 2 minutes); docs/results.md has the full run.
  "clc_micro | 4 | --real --json --mb 16,64 --iterations 10 --dir @DATA@"
)

[[ -d $BENCH_DIR ]] || die "$BENCH_DIR does not exist (built with CAIRN_BUILD_BENCH=OFF?)"
mkdir -p "$OUT" "$DATA"

MPIRUN=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && MPIRUN+=(--allow-run-as-root)

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }

# Looks NAME up in BENCHMARKS; sets RANKS and ARGS (defaults when absent).
lookup() {
  RANKS=0
  ARGS="--json"
  local entry name
  for entry in "${BENCHMARKS[@]}"; do
    name=$(trim "${entry%%|*}")
    if [[ $name == "$1" ]]; then
      local rest=${entry#*|}
      RANKS=$(trim "${rest%%|*}")
      ARGS=$(trim "${rest#*|}")
      return
    fi
  done
}

failed=()
ran=0
shopt -s nullglob
for bin in "$BENCH_DIR"/*; do
  [[ -f $bin && -x $bin ]] || continue
  name=$(basename "$bin")
  if [[ -n ${BENCH_ONLY:-} && " $BENCH_ONLY " != *" $name "* ]]; then
    continue
  fi
  lookup "$name"
  # Arguments are plain words; @DATA@ is the only substitution.
  read -r -a argv <<<"${ARGS//@DATA@/$DATA}"
  if [[ $RANKS -gt 0 ]]; then
    cmd=("${MPIRUN[@]}" -np "$RANKS" "$bin" "${argv[@]}")
  else
    cmd=("$bin" "${argv[@]}")
  fi
  echo "run_bench: ${cmd[*]}"
  ran=$((ran + 1))
  if "${cmd[@]}" >"$OUT/$name.json.tmp" 2>"$OUT/$name.log"; then
    mv "$OUT/$name.json.tmp" "$OUT/$name.json"
    cat "$OUT/$name.json"
  else
    rc=$?
    mv "$OUT/$name.json.tmp" "$OUT/$name.json"
    echo "run_bench: $name failed (exit $rc); see $OUT/$name.log" >&2
    tail -n 20 "$OUT/$name.log" >&2 || true
    failed+=("$name")
  fi
done

[[ $ran -gt 0 ]] || die "no benchmark binaries in $BENCH_DIR"
if ((${#failed[@]})); then
  echo "run_bench: failed: ${failed[*]}" >&2
  exit 1
fi
echo "run_bench: $ran benchmark(s); results in $OUT"
