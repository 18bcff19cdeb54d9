#!/usr/bin/env bash
# kill_campaign.sh [N] [BUILD_DIR] — the MPI kill campaign for longer than CI
# runs it (CI: 100 trials from a random seed). A soak: scripts/kill_campaign.sh 10000
# (two trials side by side, about 2.1 s per trial on 2 cores; every failure
# prints the seed that repeats it).
set -euo pipefail
N=${1:-1000}
BUILD=${2:-build}
cd "$(dirname "$0")/.."
[[ -x $BUILD/tests/kill_app ]] || { echo "kill_campaign: build first (make build)" >&2; exit 2; }
exec python3 tests/reliability/kill_campaign.py --app "$BUILD/tests/kill_app" --trials "$N"
