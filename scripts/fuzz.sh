#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) in a build dir of their own and runs each for a bounded
# time from its seed corpus (fuzz/corpus/<target>/). Exits non-zero when a target crashes, leaks or breaks an
# invariant, printing the reproducer's path. docs/fuzzing.md says more.
#
#   scripts/fuzz.sh                        every target, PLANB_FUZZ_SECONDS each (default 60), two at a time
#   scripts/fuzz.sh --seconds 600 fuzz_xml  one target, longer
#   scripts/fuzz.sh --seeds                 regenerate the generated seeds (fuzz/corpus/*/gen-* and t-*), run nothing
# Environment: PLANB_FUZZ_BUILD_DIR (default build-fuzz), PLANB_JOBS (build jobs and targets run at once, default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PLANB_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${PLANB_JOBS:-2}
seconds=${PLANB_FUZZ_SECONDS:-60}
all_targets=(fuzz_xml fuzz_config fuzz_time fuzz_protocol fuzz_query fuzz_batch fuzz_snapshot fuzz_json_event
  fuzz_tabular fuzz_mmdb fuzz_ip_text)
targets=()
seeds=0
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --seeds) seeds=1; shift ;;
    fuzz_*) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (targets: ${all_targets[*]})" >&2; exit 2 ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# -O1 -g1: the usual trade for fuzzing (fast enough to run, quick to build, stacks with file:line). No NDEBUG: asserts stay on.
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DPLANB_BUILD_FUZZERS=ON -DPLANB_BUILD_TESTS=OFF \
  -DPLANB_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" "${launcher[@]}" >/dev/null
if ((seeds)); then
  cmake --build "$build" -j"$jobs" --target make_fuzz_seeds
  "$build/bin/make_fuzz_seeds" "$root/fuzz/corpus"
  (cd "$root" && python3 fuzz/extract_text_seeds.py)
  echo "fuzz.sh: seeds written under fuzz/corpus/ (gen-* by make_fuzz_seeds, t-* by extract_text_seeds.py)"
  exit 0
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# Each run adds what it finds to a corpus in the build dir (the first directory), reading the seeds from the
# repository (the second), which stays untouched. Crashes go to $out/artifacts.
out=$build/fuzz-runs
rm -rf "$out/artifacts" "$out/logs"
mkdir -p "$out/artifacts" "$out/logs"
run_one() {
  local t=$1
  mkdir -p "$out/corpus/$t"
  # -timeout: one input may take this long (the zip targets start a verifier process with a 5 s deadline).
  if "$build/bin/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$t-" "$out/corpus/$t" "$root/fuzz/corpus/$t" >"$out/logs/$t.log" 2>&1; then
    echo "fuzz.sh: $t ok ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/logs/$t.log" | grep -o '[0-9]*$') runs in ${seconds}s)"
  else
    echo "fuzz.sh: $t FAILED; log: $out/logs/$t.log"
    tail -n 40 "$out/logs/$t.log" | sed "s/^/  $t: /"
    return 1
  fi
}
export -f run_one
export build out seconds root
failed=0
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' || failed=1
if ((failed)); then
  echo "fuzz.sh: FAILED. Reproducers (run: $build/bin/<target> <file>):" >&2
  find "$out/artifacts" -type f -printf '  %p\n' >&2
  exit 1
fi
echo "fuzz.sh: all ${#targets[@]} targets ran ${seconds}s each without a finding"
