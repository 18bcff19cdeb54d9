#!/usr/bin/env bash
# Builds Cairn's libFuzzer targets (tests/fuzz) with clang, ASan and UBSan
# in the instrumented build (scripts/configure_sanitize.sh) and runs each for
# FUZZ_SECONDS (default 60) over its seed corpus (tests/fuzz/corpus/<target>/).
# docs/testing.md explains the targets.
#   scripts/run_fuzz.sh [TARGET...]       every target when none is named
# Environment: FUZZ_SECONDS (0: build only), FUZZ_BUILD (default
# build-sanitize), JOBS (build parallelism and targets run at a time,
# default nproc).
# New inputs a run finds are kept in $FUZZ_BUILD/fuzz-corpus/<target>/, so
# later runs start from them. A crash, leak, UB report, timeout or
# out-of-memory fails the script; the input that caused it is left under
# $FUZZ_BUILD/fuzz-artifacts/<target>/ and printed with the command that
# replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD:-build-sanitize}
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(nproc)}

# Only the library modules the fuzzers link are built, not the whole tree.
bash scripts/configure_sanitize.sh "$BUILD"
cmake --build "$BUILD" -j "$JOBS" --target cairn_fuzzers

targets=("$@")
if ((${#targets[@]} == 0)); then
  for source in tests/fuzz/fuzz_*.cc; do
    name=$(basename "$source" .cc)
    targets+=("${name#fuzz_}")
  done
fi
((SECONDS_EACH > 0)) || exit 0

# Where a target's binary and its run's log are.
binary_of() { echo "$BUILD/tests/fuzz/fuzz_$1"; }
log_of() { echo "$BUILD/fuzz-logs/$1.log"; }

for target in "${targets[@]}"; do
  [[ -x $(binary_of "$target") ]] ||
    { echo "fuzz: no target '$target' ($(binary_of "$target"))" >&2; exit 2; }
  [[ -d tests/fuzz/corpus/$target ]] ||
    { echo "fuzz: no seed corpus tests/fuzz/corpus/$target" >&2; exit 2; }
done

# Runs one target over its corpus; its log is log_of <target> and its
# outcome, "ok" or "failed", <target>.outcome beside it.
fuzz_one() {
  local target=$1
  local found="$BUILD/fuzz-corpus/$target"
  local artifacts="$BUILD/fuzz-artifacts/$target"
  local log
  log=$(log_of "$target")
  mkdir -p "$found" "$artifacts" "$(dirname "$log")"
  local args=(-max_total_time="$SECONDS_EACH" -timeout=25 -rss_limit_mb=2048
              -artifact_prefix="$artifacts/" -print_final_stats=1)
  [[ -f tests/fuzz/$target.dict ]] && args+=(-dict="tests/fuzz/$target.dict")
  # The first directory receives what the run finds; the seeds stay as they are.
  if "$(binary_of "$target")" "${args[@]}" "$found" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
    echo ok >"${log%.log}.outcome"
  else
    echo failed >"${log%.log}.outcome"
  fi
}

# JOBS targets at a time, each a single-threaded process.
running=0
for target in "${targets[@]}"; do
  if ((running >= JOBS)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait

passed=0 failed=()
for target in "${targets[@]}"; do
  log=$(log_of "$target")
  if [[ $(cat "${log%.log}.outcome" 2>/dev/null) == ok ]]; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $target ok (${runs:-?} runs in ${SECONDS_EACH}s)"
    passed=$((passed + 1))
  else
    failed+=("$target")
    echo "fuzz: $target FAILED; the end of its log ($log):"
    tail -n 40 "$log" | sed 's/^/    /'
    # libFuzzer names the input it saved: "Test unit written to <path>".
    input=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
    if [[ -n $input ]]; then
      echo "fuzz: reproducer: $input"
      echo "fuzz: replay with: $(binary_of "$target") $input"
    fi
  fi
done
echo "fuzz: ${passed} passed, ${#failed[@]} failed"
((${#failed[@]} == 0))
