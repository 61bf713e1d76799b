#!/bin/sh
# Installs the Debian packages ktune needs to build and test, when missing.
set -e
pkgs="build-essential cmake pkg-config libsqlite3-dev libjson-c-dev zlib1g-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd python3 python3-dev clang-format python3-numpy python3-pytest python3-setuptools python3-wheel python3-venv python3-pip chromium openmpi-bin libopenmpi-dev"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "ktune: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
