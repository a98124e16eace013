#!/bin/sh
# deps.sh: installs the Debian 12 packages mlc-onnx needs to build and test
# (idempotent: installs only what is missing).  Run as root or with sudo.
set -eu
PKGS="build-essential autoconf automake libtool pkg-config
      protobuf-c-compiler libprotobuf-c-dev libonnx-dev
      llvm-19-dev libopenblas-dev libdnnl-dev libcunit1-dev libdlpack-dev libjansson-dev libxgboost-dev libmicrohttpd-dev
      python3-onnx python3-numpy zlib1g-dev libzstd-dev
      clang-19 libclang-rt-19-dev libfuzzer-19-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
