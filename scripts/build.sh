#!/usr/bin/env bash
# Configures and builds Plan B into build/ (or $PLANB_BUILD_DIR). Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PLANB_BUILD_DIR:-$root/build}
jobs=${PLANB_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$jobs"
