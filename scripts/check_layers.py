#!/usr/bin/env python3
"""Architecture check run by `make test` (DESIGN.md "Layers"). Rejects
  - #include edges that go upward in the layer order (or between format/
    and storage/),
  - <mpi.h> outside comm/, api/ and compat/, and calls of MPI_* outside
    comm/ and compat/,
  - compat/ including anything but the public API (cairn/...) and itself,
  - file-system headers, file-system calls (open, read, write, fsync,
    rename, mkdir, mmap, stat, fopen, ...), std::filesystem and thread
    starts (std::thread, std::jthread, std::async, pthread_create) outside
    env/ (and compat/, which has no Env),
except where ALLOWED names the file and says why. Comments and string
literals are ignored, so a comment that mentions write(2) is no violation.
Unit tests (*_test.cc) are not checked. Prints each violation; exits 1 if any."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "src"
# Bottom up; modules on one line share a level and may not use each other.
# pmem/ (flush primitives, persistent arrays) needs only env/, codec/ and
# format/ (its array file's layout) and sits below storage/, whose pmem tier
# copies and persists with it.
LAYERS = [["base"], ["env"], ["codec"], ["format"], ["pmem"], ["comm"], ["storage"], ["model"],
          ["policy"], ["dedup", "redundancy", "varray"], ["runtime"], ["api"],
          ["compat"], ["transparent"], ["cli"]]
LEVEL = {m: i for i, line in enumerate(LAYERS) for m in line}
# format/ (bytes) and storage/ (places) know nothing of each other.
FORBIDDEN_PAIRS = {("format", "storage"), ("storage", "format")}
MPI_INCLUDE_ALLOWED = {"comm", "api", "compat", "transparent"}  # api/ only for MPI_Comm in cairn_init
# compat/ serves MPI applications through the peers' APIs, whose collective
# flags (VeloC's Checkpoint_end(success), SCR's Complete_*(valid)) it agrees
# over the application's communicator: the public API has no such call.
# transparent/ is libcairn_intercept.so: it wraps MPI calls (PMPI) in the
# program it is preloaded into.
MPI_CALLS_ALLOWED = {"comm", "compat", "transparent"}
# compat/ sits on the public API only (libcairn's exported headers) and has
# no Env: it reads the peers' configuration files, hands Cairn a translated
# one and moves the peers' output files itself.
PUBLIC_API_ONLY = {"compat"}
FS_HEADERS = {"fcntl.h", "dirent.h", "sys/mman.h", "sys/stat.h", "sys/statvfs.h", "fstream",
              "filesystem", "pthread.h"}
# transparent/ is the preloaded process's allocator and loader hook: it maps
# its arena and stack, reads /proc/self/pagemap and re-executes the program
# before any Env could exist (and Env allocates, which its malloc serves).
OS_ALLOWED = {"env", "compat", "transparent"}

# (file relative to src/, rule) -> why it may.
ALLOWED = {
    ("base/log.cc", "os-call"): "log lines go to stderr with one write(2) each; base/ is "
                                "below env/ and the logger must work before any Env exists",
}

OS_FUNCTIONS = ("open", "openat", "creat", "pread", "pwrite", "read", "write", "fsync",
                "fdatasync", "rename", "unlink", "mkdir", "rmdir", "opendir", "mmap", "munmap",
                "ftruncate", "fallocate", "stat", "fstat", "lstat", "fopen", "remove")
# A call of the C function: `write(`, `::write(` or `std::rename(`, but not a
# method (`file.write(`, `f->read(`) or another namespace's (`Tier::Remove`).
OS_CALL = re.compile(r"(?:(?<![\w.>:])|(?<=[^\w]::)|(?<=^::)|(?<=std::))"
                     r"(" + "|".join(OS_FUNCTIONS) + r")\s*\(", re.M)
OS_TYPES = re.compile(r"\bstd::filesystem\b|\bstd::(?:i|o)?fstream\b")
# std::thread::hardware_concurrency() asks how many cores there are; it
# starts nothing.
THREAD_START = re.compile(r"\bstd::(?:j?thread)\b(?!::hardware_concurrency)|\bstd::async\b|"
                          r"\bpthread_create\s*\(")
MPI_CALL = re.compile(r"\bMPI_\w+\s*\(")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def strip_code(text, keep_strings):
    """Blanks out comments, and string and character literals unless
    keep_strings; keeps line breaks so that line numbers stay right."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'" or (c == "R" and text.startswith('R"', i) and
                            (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            if c == "R":  # raw string R"delim( ... )delim"
                open_paren = text.find("(", i)
                delim = text[i + 2:open_paren]
                end = text.find(")" + delim + '"', open_paren)
                j = n if end < 0 else end + len(delim) + 2
            else:
                j = i + 1
                while j < n and text[j] != c and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j = min(j + 1, n)
            literal = text[i:j]
            out.append(literal if keep_strings else re.sub(r"[^\n]", " ", literal))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def check_includes(rel, module, code, errors):
    for m in INCLUDE.finditer(code):
        kind, target = m.group(1), m.group(2)
        where = f"src/{rel}:{line_of(code, m.start())}"
        if kind == '"' and "/" in target:
            dep = target.split("/")[0]
            if module in PUBLIC_API_ONLY and dep not in {"cairn", module}:
                errors.append(f"{where}: includes {target}: {module}/ uses only the public API "
                              "(cairn/...)")
                continue
            if dep in LEVEL and dep != module:
                if LEVEL[dep] >= LEVEL[module] or (module, dep) in FORBIDDEN_PAIRS:
                    errors.append(f"{where}: includes {target}: {module}/ may not use {dep}/")
        if target == "mpi.h" and module not in MPI_INCLUDE_ALLOWED:
            errors.append(f"{where}: includes <mpi.h>: only comm/ and api/ may")
        if kind == "<" and target in FS_HEADERS and module not in OS_ALLOWED and \
                (rel, "os-header") not in ALLOWED:
            errors.append(f"{where}: includes <{target}>: only env/ touches the file system "
                          "and starts threads")


def check_calls(rel, module, code, errors):
    def report(rule, pattern, what):
        if (rel, rule) in ALLOWED:
            return
        for m in pattern.finditer(code):
            errors.append(f"src/{rel}:{line_of(code, m.start())}: {m.group(0).strip()}: {what}")

    if module not in MPI_CALLS_ALLOWED:
        report("mpi-call", MPI_CALL, "only comm/ calls MPI")
    if module not in OS_ALLOWED:
        report("os-call", OS_CALL, "only env/ calls the file system (go through Env)")
        report("os-call", OS_TYPES, "only env/ touches the file system (go through Env)")
        report("thread", THREAD_START, "only env/ starts threads (Env::StartThread)")


def main():
    errors = []
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in {".h", ".cc"} or path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(ROOT).as_posix()
        module = rel.split("/")[0]
        if module not in LEVEL:
            errors.append(f"src/{rel}: module '{module}' is not in the layer list")
            continue
        text = path.read_text()
        check_includes(rel, module, strip_code(text, keep_strings=True), errors)
        check_calls(rel, module, strip_code(text, keep_strings=False), errors)
    for e in errors:
        print(e)
    print(f"layer check: {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
