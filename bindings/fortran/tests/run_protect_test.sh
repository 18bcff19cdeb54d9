#!/usr/bin/env bash
# Runs protect_test (PROGRAM) with its tiers in a fresh directory of its own.
# Usage: run_protect_test.sh PROGRAM
set -euo pipefail
dir=$(mktemp -d /tmp/cairn-fortran-XXXXXX)
trap 'rm -rf "$dir"' EXIT
printf '[general]\ndir = "%s/data"\nlog_level = "error"\n[tiers.memory]\npath = "%s/shm/{node}"\n' \
  "$dir" "$dir" >"$dir/cairn.toml"
"$1" "$dir/cairn.toml"
