#!/usr/bin/env bash
# Installs what Cairn needs to build and test on Debian 12, and nothing else.
# Idempotent: when every package is present it prints nothing and exits 0.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin gfortran
  libisal-dev libxxhash-dev libzstd-dev libpmem2-dev libssl-dev
  libtomlplusplus-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-matplotlib python3-venv
  python3-dev python3-mpi4py python3-numpy python3-pytest
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
    echo "bootstrap: run as root, or install them with apt-get" >&2
    exit 1
  fi
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The Python bindings' toolchain and test tools (bindings/python): a venv under
# the build directory ($BUILD, as the Makefile's; default build), which CMake
# picks up there. It sees Debian's mpi4py, numpy and pytest (mpi4py must be
# built against the system Open MPI, which Debian's is; its binary wheels carry
# an MPI of their own), so pip adds only the build tools. The venv is made from
# Debian's interpreter, whose site-packages hold those modules.
build_dir=${BUILD:-build}
[[ $build_dir == /* ]] || build_dir=$(cd "$(dirname "$0")/.." && pwd)/$build_dir
venv=$build_dir/venv
if ! "$venv/bin/python3" -c 'import scikit_build_core, pybind11, numpy, pytest, mpi4py' \
    >/dev/null 2>&1; then
  echo "bootstrap: installing the Python packages into $venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check \
    scikit-build-core pybind11
fi
