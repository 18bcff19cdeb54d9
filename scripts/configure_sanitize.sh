#!/usr/bin/env bash
# Configures build-sanitize: the one instrumented build, which both the
# unit tests under sanitizers (`make test-sanitize`) and the libFuzzer
# targets (scripts/run_fuzz.sh, `make fuzz`) are built in, so that the
# library is compiled once for both. clang, AddressSanitizer and UBSan
# (undefined behaviour stops the program, as a crash would) and libFuzzer's
# coverage instrumentation on every object; -O1, the level the sanitizers
# are meant for, with line tables and assertions on. The bindings,
# benchmarks and examples are left out (a Fortran or Python program is not
# built with the sanitizer runtime).
#   scripts/configure_sanitize.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-sanitize}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG='-O1 -g1' -DCMAKE_CXX_FLAGS_DEBUG='-O1 -g1' \
  -DCAIRN_SANITIZE=ON -DCAIRN_BUILD_FUZZ=ON \
  -DCAIRN_BUILD_BENCH=OFF -DCAIRN_BUILD_EXAMPLES=OFF \
  -DCAIRN_BUILD_PYTHON=OFF -DCAIRN_BUILD_FORTRAN=OFF "${launcher[@]}" >/dev/null
