#!/usr/bin/env bash
# Installs the Debian packages privsearch needs to build and test. Idempotent: when everything is
# already installed it only runs dpkg-query and returns in well under a second.
set -euo pipefail

packages=(
  cmake ninja-build pkg-config g++ ccache clang libclang-rt-14-dev clang-format-14 universal-ctags
  libgtest-dev libgmock-dev
  libssl-dev libgmp-dev libfaiss-dev liblapacke-dev libopenblas-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler python3 zlib1g-dev
  chromium fonts-dejavu-core emscripten nodejs libcpp-httplib-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libhiredis-dev redis-server haproxy
  python3-dev python3-numpy python3-pybind11 pybind11-dev python3-pytest python3-venv
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  echo "setup: install failed; refreshing package lists and retrying" >&2
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
