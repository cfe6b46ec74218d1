#!/usr/bin/env bash
# README command 2: install what is missing, build, run the whole test suite (ctest). CI runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DPLANB_BUILD_TESTS=ON -DPLANB_BUILD_BENCH=ON
build=${PLANB_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j"${PLANB_JOBS:-$(nproc)}" --timeout 600
