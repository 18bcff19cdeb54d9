#!/usr/bin/env bash
# run_fresh.sh DIR -- COMMAND...: runs COMMAND in an empty DIR with a memory
# tier of its own under /dev/shm (removed afterwards), so that no copy left by
# an earlier run of the same test (in /dev/shm, which rm -rf DIR does not
# reach) is found as a checkpoint.
set -uo pipefail
dir=$1
shift
[[ $1 == -- ]] && shift
shm=/dev/shm/cairn-compat-$$
trap 'rm -rf "$shm"' EXIT
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
CAIRN_TIERS_MEMORY_PATH="$shm/{node}" "$@"
