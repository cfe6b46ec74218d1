#!/usr/bin/env bash
# Builds the tests with sanitizers in a build dir of their own and runs them (docs/testing.md):
#
#   scripts/sanitize.sh asan   every test, everything instrumented with AddressSanitizer (+ LeakSanitizer) and
#                              UndefinedBehaviorSanitizer: build-asan/ (gtest tests in PLANB_JOBS shard processes)
#   scripts/sanitize.sh tsan   the concurrency tests (scripts/sanitizers/tsan_tests.txt) under ThreadSanitizer:
#                              build-tsan/
#
# Extra arguments go to ctest (e.g. -R Reader), which then runs the tests one process each. Every process of the run (the test binary and the planb children it
# starts) writes its sanitizer reports under <build>/sanitizer-logs/; the pass fails when ctest fails or any report
# was written. Environment: PLANB_SANITIZE_BUILD_DIR, PLANB_JOBS (build jobs and tests at once, default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pass=${1:-}
shift || true
supp=$root/scripts/sanitizers
case "$pass" in
  # ASan: every test, once. No retries: a sanitizer report fails the pass (docs/testing.md says why the retries
  # that covered gcc 12's fork hazard were dropped).
  asan) sanitize=address,undefined; subset=(); ctest_extra=() ;;
  # TSan: the concurrency tests only, less those that assert short product timeouts (tsan_excluded.txt says why).
  tsan) sanitize=thread; subset=(-DPLANB_TEST_LIST="$supp/tsan_tests.txt")
    ctest_extra=(-E "$(grep -v '^#' "$supp/tsan_excluded.txt" | paste -sd '|')") ;;
  *) echo "sanitize.sh: first argument must be asan or tsan, not '$pass'" >&2; exit 2 ;;
esac
build=${PLANB_SANITIZE_BUILD_DIR:-$root/build-$pass}
jobs=${PLANB_JOBS:-2}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

start=$SECONDS
echo "sanitize.sh $pass: configuring $build (-fsanitize=$sanitize, -O1)"
# gcc: its sanitizer runtimes are shared libraries, so libplanb_reader.so (-Wl,--no-undefined), the plugins and
# the test fixtures link and load as in the normal build. -O1 -g1: sane stacks with file:line (line tables only:
# a third less compile time than -g, which CI pays three times), a bearable slowdown.
CC=gcc CXX=g++ cmake -S "$root" -B "$build" -DPLANB_SANITIZE="$sanitize" "${subset[@]}" -DPLANB_BUILD_TESTS=ON \
  -DPLANB_BUILD_BENCH=OFF -DPLANB_BUILD_FUZZERS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" "${launcher[@]}" >/dev/null
echo "sanitize.sh $pass: building"
cmake --build "$build" -j"$jobs"
built=$SECONDS
echo "sanitize.sh $pass: built in $((built - start)) s; running the tests"

logs=$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# Reports go to files (one per process: the planb children's too, whose stderr a test may not show) and the first
# error ends the process with a failing exit code.
common=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=$common:detect_leaks=1:log_path=$logs/asan
export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=$common:log_path=$logs/ubsan
# ignore_noninstrumented_modules: accesses that uninstrumented libraries (libzmq) make through TSan's interceptors
# (memcpy of message bytes on libzmq's I/O thread) are not checked: TSan cannot see libzmq's own synchronisation,
# so each was a false race, symbolised and matched against tsan.supp at great cost (a 3 MiB upload took 16 s
# instead of 0.2 s, and uploads timed out). Our code's accesses are all still checked.
export TSAN_OPTIONS=$common:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$supp/tsan.supp:log_path=$logs/tsan
# Deadlines inside tests (WaitUntil, waits on child processes) stretch by this factor (tests/support/test_env.h).
export PLANB_TEST_TIME_SCALE=${PLANB_TEST_TIME_SCALE:-4}
# The out-of-tree builds of sdk_install_and_build_example (an example plugin and program against the installed SDK)
# are instrumented too: a program linked against the instrumented libplanb_reader.so must load the runtime first.
export CXXFLAGS="-fsanitize=$sanitize" CFLAGS="-fsanitize=$sanitize" LDFLAGS="-fsanitize=$sanitize"
status=0
if [[ $pass == asan && $# -eq 0 ]]; then
  # The whole suite: the gtest tests in $jobs processes (gtest's sharding, each test once); the other ctest tests
  # (no '.' in their names) and those that need a process of their own (own_process_tests.txt says why) by ctest.
  # One process per test, as ctest runs them, paid an instrumented planb_tests start and leak check (~0.4 s of
  # CPU) ~3,200 times: about 11 of the pass's 27 minutes on 2 cores. Each shard's log is <build>/shard-N.log; a
  # line a minute says how far they are, and a failing shard's failures and the end of its log are printed.
  own=$(grep -v '^#' "$supp/own_process_tests.txt" | grep . || true)
  own_regex=$(printf '%s\n' $own | sed 's/\./\\./g' | paste -sd '|')
  (cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 1500 -R "^(${own_regex:-none})\$|^[^.]*\$") ||
    status=$?
  pids=()
  for ((shard = 0; shard < jobs; shard++)); do
    # PLANB_TEST_WATCHDOG_SECONDS (tests/support/test_watchdog.cc): ctest's per-test limit, which a shard lacks.
    (cd "$build/tests" && GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$shard PLANB_TEST_WATCHDOG_SECONDS=600 \
      timeout --kill-after=30 3000 "$build/bin/planb_tests" \
      "--gtest_filter=-$(printf '%s\n' $own | paste -sd ':')" >"$build/shard-$shard.log" 2>&1) &
    pids+=($!)
  done
  total=$("$build/bin/planb_tests" --gtest_list_tests "--gtest_filter=-$(printf '%s\n' $own | paste -sd ':')" |
    grep -c '^  ' || true)
  (
    while sleep 60; do
      done_tests=$(cat "$build"/shard-*.log 2>/dev/null | grep -cE '^\[ +(OK|FAILED|SKIPPED) +\] .*\(' || true)
      echo "sanitize.sh $pass: $done_tests of $total gtest tests run ($((SECONDS - built)) s)"
    done
  ) &
  progress=$!
  for shard in "${!pids[@]}"; do
    if wait "${pids[$shard]}"; then
      echo "sanitize.sh $pass: gtest shard $shard of $jobs: $(grep -E '^\[  PASSED  \]' "$build/shard-$shard.log")"
    else
      rc=$?
      status=1
      echo "sanitize.sh $pass: gtest shard $shard of $jobs FAILED (exit $rc; $build/shard-$shard.log):" >&2
      grep -E '^\[  FAILED  \]' "$build/shard-$shard.log" >&2 || true
      tail -n 200 "$build/shard-$shard.log" >&2
    fi
  done
  pkill -P "$progress" 2>/dev/null || true
  kill "$progress" 2>/dev/null || true
  wait "$progress" 2>/dev/null || true
else
  (cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 1500 "${ctest_extra[@]}" "$@") || status=$?
fi
ran=$SECONDS
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitize.sh $pass: sanitizer reports:" >&2
  for f in "$logs"/*; do
    echo "=== $f" >&2
    head -n 80 "$f" >&2
  done
  status=1
fi
echo "sanitize.sh $pass: build $((built - start)) s, tests $((ran - built)) s"
if ((status)); then
  echo "sanitize.sh $pass: FAILED" >&2
  exit 1
fi
echo "sanitize.sh $pass: clean"
