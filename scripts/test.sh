#!/usr/bin/env bash
# README command 2: install what is missing, build, run the whole test suite (ctest). CI runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
# -g1 (line tables only, as the sanitizer builds use): less compile and link time than -g; stacks keep file:line.
"$root/scripts/build.sh" -DPLANB_BUILD_TESTS=ON -DPLANB_BUILD_BENCH=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
build=${PLANB_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j"${PLANB_JOBS:-$(nproc)}" --timeout 600
