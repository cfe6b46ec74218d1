#!/usr/bin/env bash
# Installs the Debian 12 packages Plan B builds with, only those missing. Non-interactive (CI has no terminal).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  liblmdb-dev lmdb-utils libxxhash-dev
  libboost-dev libboost-program-options-dev libboost-filesystem-dev
  libexpat1-dev libzip-dev zlib1g-dev libzmq3-dev cppzmq-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libsimdjson-dev librocksdb-dev
  redis-server libhiredis-dev  # the remote-lookup peer in bench/remote_bench
  clang libclang-rt-14-dev
  libmicrohttpd-dev prometheus-cpp-dev libsystemd-dev python3-prometheus-client
  libmaxminddb-dev mmdb-bin libmaxmind-db-writer-perl  # .mmdb import; mmdblookup and the Perl writer for tests
  systemd dpkg-dev  # systemd-analyze verify and dpkg-shlibdeps for the packaging test
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
