#!/usr/bin/env bash
# Installs Cairn into a temporary prefix and uses it as the README says:
# the shared library carries its SONAME, pkg-config gives no private
# defines, a program built with `mpicc $(pkg-config --cflags --libs cairn)`
# runs under mpirun without LD_LIBRARY_PATH (and its cairn_delete leaves
# nothing of the deleted checkpoint on two virtual nodes' tiers), and so
# does the installed `cairn` command.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
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
echo "install_test: ok (SONAME $soname, cflags '$cflags')"
