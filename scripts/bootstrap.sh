#!/usr/bin/env bash
# Installs what Cairn needs to build and test on Debian 12, and nothing else.
# Idempotent: when every package is present it prints nothing and exits 0.
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin
  libisal-dev libxxhash-dev libzstd-dev
  libtomlplusplus-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-matplotlib
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
