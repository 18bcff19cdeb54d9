#!/usr/bin/env bash
# Runs clang's thread-safety analysis (-Wthread-safety, as errors) over every
# source file of src/ (or those whose path matches the regex $2) with the
# flags the build in $1 (default: build) uses,
# read from its compile_commands.json. Members guarded by a cairn::Mutex say
# so with GUARDED_BY (src/base/thread_annotations.h); touching one without
# the lock, or calling a REQUIRES function without it, fails this check.
# Called by `make test` (CTest test `thread_safety`, label unit).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLANG=${CLANGXX:-clang++}
DB="$BUILD/compile_commands.json"
if [[ ! -f "$DB" ]]; then
  echo "check_thread_safety: $DB not found (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 1
fi
if ! command -v "$CLANG" >/dev/null; then
  echo "check_thread_safety: $CLANG not found (scripts/bootstrap.sh installs clang)" >&2
  exit 1
fi
# One NUL-separated clang command per file of src/ (GCC-only flags dropped),
# run two at a time per core; any diagnostic fails the check.
python3 - "$DB" "$ROOT/src" "$CLANG" "${2:-}" <<'PY' | xargs -0 -P "$(nproc)" -n 1 bash -c || exit 1
import json, re, shlex, sys
db, src, clang, only = sys.argv[1], sys.argv[2] + "/", sys.argv[3], sys.argv[4]
for entry in json.load(open(db)):
    path = entry["file"]
    if not path.startswith(src) or not path.endswith(".cc") or not re.search(only, path):
        continue
    args = shlex.split(entry["command"])[1:]
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a == path:
            continue
        keep.append(a)
    # The build's own warnings are GCC's business: only the analysis speaks.
    cmd = [clang, "-fsyntax-only", *keep, "-Wno-everything", "-Wthread-safety",
           "-Werror=thread-safety", path]
    sys.stdout.write("cd " + shlex.quote(entry["directory"]) + " && " + shlex.join(cmd) + "\0")
PY
echo "thread-safety check: clean"
