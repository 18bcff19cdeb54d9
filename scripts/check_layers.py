#!/usr/bin/env python3
"""Architecture check run by `make test`: rejects #include edges that go
upward in DESIGN.md's layer order, MPI outside comm/ and api/, and direct
file-system headers outside env/. Prints each violation; exits 1 if any."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "src"
# Bottom up; modules on one line share a level and may not use each other.
LAYERS = [["base"], ["env"], ["codec"], ["format"], ["comm"], ["storage"], ["model"],
          ["policy"], ["dedup", "redundancy", "pmem", "varray"], ["runtime"], ["api"],
          ["intercept"], ["cli"]]
LEVEL = {m: i for i, line in enumerate(LAYERS) for m in line}
# format/ (bytes) and storage/ (places) know nothing of each other.
FORBIDDEN_PAIRS = {("format", "storage"), ("storage", "format")}
MPI_ALLOWED = {"comm", "api"}
FS_HEADERS = {"fcntl.h", "dirent.h", "sys/mman.h", "sys/stat.h", "sys/statvfs.h", "fstream"}
FS_ALLOWED = {"env"}

include_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
errors = []
for path in sorted(ROOT.rglob("*")):
    if path.suffix not in {".h", ".cc"} or path.name.endswith("_test.cc"):
        continue
    module = path.relative_to(ROOT).parts[0]
    if module not in LEVEL:
        errors.append(f"{path}: module '{module}' is not in the layer list")
        continue
    for kind, target in include_re.findall(path.read_text()):
        where = f"{path.relative_to(ROOT.parent)}"
        if kind == '"' and "/" in target:
            dep = target.split("/")[0]
            if dep in LEVEL and dep != module:
                if LEVEL[dep] >= LEVEL[module] or (module, dep) in FORBIDDEN_PAIRS:
                    errors.append(f"{where}: includes {target}: {module}/ may not use {dep}/")
        if target == "mpi.h" and module not in MPI_ALLOWED:
            errors.append(f"{where}: includes <mpi.h>: only comm/ and api/ may")
        if kind == "<" and target in FS_HEADERS and module not in FS_ALLOWED:
            errors.append(f"{where}: includes <{target}>: only env/ touches the file system")

for e in errors:
    print(e)
print(f"layer check: {len(errors)} violation(s)")
sys.exit(1 if errors else 0)
