#!/usr/bin/env bash
# Runs clang's thread-safety analysis (-Wthread-safety, as errors) over the
# source files of src/ that can hold a violation (or those of them whose
# path matches the regex $2) with the flags the build in $1 (default: build)
# uses, read from its compile_commands.json. Members guarded by a
# cairn::Mutex say so with GUARDED_BY (src/base/thread_annotations.h);
# touching one without the lock, or calling a REQUIRES function without it,
# fails this check.
#
# Which files: only a file that includes base/mutex.h or
# base/thread_annotations.h, directly or through the project's own headers,
# can meet an annotation, so only those are parsed (the analysis needs the
# annotated declarations in view). Unit tests (*_test.cc) are skipped: the
# analysis protects the library's locking, and tests would triple the time.
# Each file is only parsed (-fsyntax-only), two at a time per core.
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
# One NUL-separated clang command per chosen file (GCC-only flags dropped);
# any diagnostic fails the check.
python3 - "$DB" "$ROOT" "$CLANG" "${2:-}" <<'PY' | xargs -0 -r -P "$(nproc)" -n 1 bash -c || exit 1
import functools, json, os, re, shlex, sys

db, root, clang, only = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
src = os.path.join(root, "src") + "/"
# Where the project's quoted includes resolve (module-qualified paths).
INCLUDE_DIRS = [os.path.join(root, "src"), os.path.join(root, "include")]
ANNOTATION_HEADERS = {os.path.join(root, "src", "base", h)
                      for h in ("mutex.h", "thread_annotations.h")}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


@functools.lru_cache(maxsize=None)
def local_includes(path):
    """The project files path includes with quotes (system headers hold no
    Cairn annotations)."""
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return ()
    found = []
    for name in INCLUDE.findall(text):
        for d in [os.path.dirname(path), *INCLUDE_DIRS]:
            candidate = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(candidate):
                found.append(candidate)
                break
    return tuple(found)


def sees_annotations(path):
    """Whether path includes an annotation header, directly or through the
    project's headers."""
    seen, todo = {path}, [path]
    while todo:
        for h in local_includes(todo.pop()):
            if h in ANNOTATION_HEADERS:
                return True
            if h not in seen:
                seen.add(h)
                todo.append(h)
    return False


def clang_command(entry, path):
    args = shlex.split(entry["command"])[1:]
    keep, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        # -include names the build's precompiled header (cmake_pch.hxx),
        # which GCC made and clang cannot read; each file includes what it
        # uses without it.
        if a in ("-o", "-MF", "-MT", "-MQ", "-include"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD", "-Winvalid-pch") or a == path:
            continue
        keep.append(a)
    # The build's own warnings are GCC's business: only the analysis speaks.
    return [clang, "-fsyntax-only", *keep, "-Wno-everything", "-Wthread-safety",
            "-Werror=thread-safety", path]


done = set()  # a file built into several targets (static and shared) is checked once
for entry in json.load(open(db)):
    path = entry["file"]
    if path in done:
        continue
    done.add(path)
    if not path.startswith(src) or not path.endswith(".cc") or path.endswith("_test.cc"):
        continue
    if not re.search(only, path) or not sees_annotations(path):
        continue
    cmd = clang_command(entry, path)
    sys.stdout.write("cd " + shlex.quote(entry["directory"]) + " && " + shlex.join(cmd) + "\0")
PY
echo "thread-safety check: clean"
