#!/usr/bin/env bash
# Installs Cairn into a temporary prefix and uses it as the README says:
# the shared library carries its SONAME, pkg-config gives no private
# defines, a program built with `mpicc $(pkg-config --cflags --libs cairn)`
# runs under mpirun without LD_LIBRARY_PATH (and its cairn_delete leaves
# nothing of the deleted checkpoint on two virtual nodes' tiers), and so
# does the installed `cairn` command; then the quickstarts of docs/ in C,
# C++ (find_package), Fortran (pkg-config) and Python (pip) build against
# the installed copy only and run.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
source=$2
tmp=$(mktemp -d /tmp/cairn-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
unset LD_LIBRARY_PATH

libdir=$(pkg-config --variable=libdir cairn)
major=$(pkg-config --modversion cairn | cut -d. -f1)
soname=$(readelf -d "$libdir/libcairn.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ $soname == "libcairn.so.$major" ]] || fail "SONAME is '$soname', expected libcairn.so.$major"
[[ -e $libdir/libcairn.so.$(pkg-config --modversion cairn) ]] || fail "no libcairn.so.<version> in $libdir"

cflags=$(pkg-config --cflags cairn)
[[ $cflags != *-D* ]] || fail "pkg-config --cflags cairn leaks defines: $cflags"

# The compile-and-run line of README.md ("Linking"), as written there.
cd "$tmp"
mpicc "$source/tests/abi/installed_program.c" $(pkg-config --cflags --libs cairn) -o program
# Two virtual nodes: each has its own memory and ssd tier, the pfs is shared.
printf '[general]\ndir = "%s/data"\nlog_level = "error"\n[tiers.memory]\npath = "%s/shm/{node}"\n[topology]\nranks_per_node = 1\n' \
  "$tmp" "$tmp" >cairn.toml
mpirun --allow-run-as-root --oversubscribe -np 2 ./program cairn.toml | tee run.log
grep -q "round trip ok" run.log || fail "the installed program did not round-trip"
deleted=$(find "$tmp/data" "$tmp/shm" -type d -name installed)
[[ -z $deleted ]] || fail "cairn_delete left: $deleted"
[[ -n $(find "$tmp/data" -type d -name kept) ]] || fail "cairn_delete removed another checkpoint"

"$tmp/prefix/bin/cairn" config --config cairn.toml >/dev/null \
  || fail "the installed cairn command does not run without LD_LIBRARY_PATH"

# The quickstarts of docs/ (C, C++, Fortran, Python), each built as its page
# says against the installed copy only, run twice on 2 ranks: the first run
# finishes, the second resumes from its last checkpoint.
quickstart_block() {  # quickstart_block LANGUAGE FENCE_TAG: the page's first such code block
  awk -v tag="$2" '$0 == "```" tag {on = 1; next} on && /^```/ {exit} on' \
    "$source/docs/quickstart-$1.md"
}
run_quickstart() {  # run_quickstart LANGUAGE COMMAND...
  local lang=$1 dir=$tmp/quickstart-$1
  shift
  printf '[general]\ndir = "%s/data"\nlog_level = "error"\n[tiers.memory]\npath = "%s/shm/{node}"\n' \
    "$dir" "$dir" >"$dir/cairn.toml"
  CAIRN_CONFIG=$dir/cairn.toml mpirun --allow-run-as-root --oversubscribe -np 2 "$@" >"$dir/first.log" 2>&1 \
    || fail "quickstart-$lang: $(cat "$dir/first.log")"
  grep -q "quickstart: done, step 100" "$dir/first.log" || fail "quickstart-$lang: $(cat "$dir/first.log")"
  CAIRN_CONFIG=$dir/cairn.toml mpirun --allow-run-as-root --oversubscribe -np 2 "$@" >"$dir/second.log" 2>&1 \
    || fail "quickstart-$lang (second run): $(cat "$dir/second.log")"
  grep -q "quickstart: resumed at step 100" "$dir/second.log" \
    || fail "quickstart-$lang did not resume: $(cat "$dir/second.log")"
  echo "install_test: quickstart-$lang ok"
}
mkdir -p "$tmp"/quickstart-{c,cpp,fortran,python}

cd "$tmp/quickstart-c"
quickstart_block c c >quickstart.c
mpicc quickstart.c $(pkg-config --cflags --libs cairn) -o quickstart
run_quickstart c ./quickstart

cd "$tmp/quickstart-cpp"
quickstart_block cpp cpp >quickstart.cc
quickstart_block cpp cmake >CMakeLists.txt
cmake -S . -B build -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build build >/dev/null
run_quickstart cpp build/quickstart

if [[ -e $tmp/prefix/lib/pkgconfig/cairn-fortran.pc ]]; then
  cd "$tmp/quickstart-fortran"
  quickstart_block fortran fortran >quickstart.f90
  mpif90 quickstart.f90 $(pkg-config --cflags --libs cairn-fortran) -o quickstart
  run_quickstart fortran ./quickstart
else
  echo "install_test: no Fortran module installed (no Fortran compiler at build time): skipped"
fi

# pip builds the package against the installed Cairn, with the build venv's
# scikit-build-core and pybind11 (no download), into a directory of its own.
venv=$build/venv
if [[ -x $venv/bin/python3 ]] && "$venv/bin/python3" -c 'import scikit_build_core, pybind11, mpi4py' 2>/dev/null; then
  cd "$tmp/quickstart-python"
  quickstart_block python python >quickstart.py
  CMAKE_PREFIX_PATH=$tmp/prefix "$venv/bin/python3" -m pip install -q --disable-pip-version-check \
    --no-build-isolation --no-deps --target site "$source/bindings/python" >pip.log 2>&1 \
    || fail "pip install ./bindings/python: $(cat pip.log)"
  PYTHONPATH=$PWD/site run_quickstart python "$venv/bin/python3" quickstart.py
else
  echo "install_test: no Python toolchain in $venv (scripts/bootstrap.sh): Python skipped"
fi
echo "install_test: ok (SONAME $soname, cflags '$cflags')"
