#!/usr/bin/env bash
# Installs the SDK and planb from a build tree into a temporary prefix, builds the out-of-tree example plugin
# against the INSTALLED SDK (find_package(PlanB)), and has the installed planb load it and use it for a map.
# Then builds examples/enrich against the installed reader library (PlanB::reader) and runs it on that map: the
# library finds the built-in plugins beside itself, the example plugin through the config.
# Usage: install_and_build_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/planb/plugin.h"

# The package's version is the SDK's (planb/version.h): a plugin asks for the minor it needs and gets any later
# minor of the same major; a later minor than installed, or another major, is refused at configure time.
sdk_major=$(sed -n 's/^#define PLANB_SDK_VERSION_MAJOR \([0-9]*\)$/\1/p' "$source_dir/sdk/include/planb/version.h")
sdk_minor=$(sed -n 's/^#define PLANB_SDK_VERSION_MINOR \([0-9]*\)$/\1/p' "$source_dir/sdk/include/planb/version.h")
test -n "$sdk_major" && test -n "$sdk_minor"
mkdir "$work/versions"
cat >"$work/versions/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(versions LANGUAGES CXX)
find_package(PlanB ${WANT} REQUIRED)
file(WRITE "${CMAKE_BINARY_DIR}/found.txt" "${PlanB_VERSION} ${PLANB_PROGRAM_VERSION}\n")
planb_add_plugin(versions versions.cc)
CMAKE
cat >"$work/versions/versions.cc" <<CC
#include <planb/plugin.h>
#if PLANB_SDK_VERSION_MAJOR != $sdk_major || PLANB_SDK_VERSION_MINOR != $sdk_minor
#error "the macros are not the installed SDK's version"
#endif
#if !PLANB_SDK_VERSION_AT_LEAST($sdk_major, 0) || PLANB_SDK_VERSION_AT_LEAST($sdk_major, $((sdk_minor + 1)))
#error "PLANB_SDK_VERSION_AT_LEAST is wrong"
#endif
#if PLANB_SDK_VERSION_AT_LEAST($((sdk_major - 1)), 0) || PLANB_SDK_VERSION_AT_LEAST($((sdk_major + 1)), 0)
#error "PLANB_SDK_VERSION_AT_LEAST accepts another major"
#endif
static_assert(planb::kAbiMajor == PLANB_SDK_VERSION_MAJOR && planb::kAbiMinor == PLANB_SDK_VERSION_MINOR);
CC
program_version=$(sed -n 's/^project(PlanB VERSION \([0-9.]*\) .*/\1/p' "$source_dir/CMakeLists.txt")
for want in "$sdk_major" "$sdk_major.0" "$sdk_major.$sdk_minor"; do
  rm -rf "$work/versions-build"
  cmake -S "$work/versions" -B "$work/versions-build" -DCMAKE_PREFIX_PATH="$work/prefix" -DWANT="$want" >/dev/null
  test "$(cat "$work/versions-build/found.txt")" = "$sdk_major.$sdk_minor $program_version"
done
cmake --build "$work/versions-build" >/dev/null
for want in "$sdk_major.$((sdk_minor + 1))" "$((sdk_major - 1))" "$((sdk_major + 1)).0" "$program_version"; do
  rm -rf "$work/versions-build"
  if cmake -S "$work/versions" -B "$work/versions-build" -DCMAKE_PREFIX_PATH="$work/prefix" -DWANT="$want" \
    >"$work/versions.txt" 2>&1; then
    echo "find_package(PlanB $want) accepted SDK $sdk_major.$sdk_minor" >&2
    exit 1
  fi
  grep -qF "$sdk_major.$sdk_minor" "$work/versions.txt"
done
cmake -S "$source_dir/examples/plugins/casefold_key" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$work/example" >/dev/null
plugin="$work/example/libplanb_casefold_key.so"
test -f "$plugin"
# No build type given: the SDK made it Release, and the plugin was compiled optimised.
grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$work/example/CMakeCache.txt"
grep -E '"command": .*casefold_key\.cc' "$work/example/compile_commands.json" | grep -q -- ' -O3 '
# An explicit build type is the author's to keep.
cmake -S "$source_dir/examples/plugins/casefold_key" -B "$work/example-debug" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
grep -qx 'CMAKE_BUILD_TYPE:STRING=Debug' "$work/example-debug/CMakeCache.txt"

# The kit: the example's conformance test (planb_add_conformance_test -> the installed planb conform) passes...
ctest --test-dir "$work/example" --output-on-failure >"$work/ctest.txt" || { cat "$work/ctest.txt" >&2; exit 1; }
grep -q '100% tests passed, 0 tests failed out of 1' "$work/ctest.txt"
conform_out=$(ctest --test-dir "$work/example" -V 2>&1)
echo "$conform_out" | grep -q 'ok 4 - warm_lookups'
# ...and fails, naming the row, when the expected model is wrong.
example_src="$source_dir/examples/plugins/casefold_key"
sed 's/team-platform/team-web/' "$example_src/conform/expected.csv" >"$work/wrong.csv"
if "$work/prefix/bin/planb" conform --type state --scheme casefold --plugin-dir "$work/example" \
  --data "$example_src/conform/first.xml" "$example_src/conform/second.xml" --expect "$work/wrong.csv" \
  >"$work/conform.txt"; then
  exit 1
fi
grep -q '^not ok 1 - merge$' "$work/conform.txt"
grep -q 'expected web-01.example.net,string,team-web, got web-01.example.net,string,team-platform' "$work/conform.txt"
# A short bench of the scheme beside raw LMDB.
"$work/prefix/bin/planb" bench --type state --scheme casefold --plugin-dir "$work/example" --runs 1 --lookups 10 \
  --format csv --data "$example_src/conform/first.xml" "$example_src/conform/second.xml" >"$work/bench.csv"
head -1 "$work/bench.csv" | grep -q ',load_x_raw,merge_x_raw,hit_p50_x_raw,miss_p50_x_raw$'
grep -q '^sample,state,casefold,false,true,5,4,' "$work/bench.csv"
# Raw LMDB keys are the keys as written: WEB-01.Example.NET and web-01.example.net are two rows there.
grep -q '^sample,state,raw-lmdb,false,false,5,5,.*,1.00,1.00,1.00,1.00$' "$work/bench.csv"

cat >"$work/planb.ini" <<INI
home = $work/home
plugin_dir = $work/example
[map.host_to_owner]
type = state
scheme = casefold
INI
cat >"$work/hosts.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<referenceData xmlns="reference-data:2">
  <reference><map>host_to_owner</map><key>WEB-01.Example.NET</key><value>team-web</value></reference>
  <reference><map>host_to_owner</map><key>db-02.example.net</key><value>team-data</value></reference>
</referenceData>
XML
planb="$work/prefix/bin/planb"
"$planb" --config "$work/planb.ini" plugins | grep -E "^scheme +casefold +1 +7\.[0-9]+ +$plugin( |\$)"
"$planb" --config "$work/planb.ini" plugins | grep -E "^type +state +2 +7\.[0-9]+ +$work/prefix/lib/planb/plugins/"
"$planb" --config "$work/planb.ini" load "$work/hosts.xml"
test "$("$planb" --config "$work/planb.ini" lookup host_to_owner web-01.example.net)" = "team-web"
test "$("$planb" --config "$work/planb.ini" lookup host_to_owner DB-02.EXAMPLE.NET)" = "team-data"

# The reader library: installed with its headers, exporting planb::Reader and its C API (planb_reader_*,
# planb_parse_time) and nothing else.
lib="$work/prefix/lib/libplanb_reader.so"
test -f "$lib"
test -f "$work/prefix/include/planb/reader.h"
test -f "$work/prefix/include/planb/reader_c.h"
leaked=$(nm -DC --defined-only "$lib" |
  grep -v -E '^[0-9a-f]+ [A-Za-z] planb::Reader::(Reader|~Reader|Open|Lookup|LookupMany|Prepare|Refresh|Describe|Maintain|Stats|ParseTime|FormatTime)(\[abi:cxx11\])?\(' |
  grep -v -E '^[0-9a-f]+ T (planb_reader_[a-z_]+|planb_parse_time)$' ||
  true)
if [ -n "$leaked" ]; then
  echo "libplanb_reader.so exports more than planb::Reader:" >&2
  echo "$leaked" | head -20 >&2
  exit 1
fi
cmake -S "$source_dir/examples/enrich" -B "$work/enrich" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/enrich" >/dev/null
enrich="$work/enrich/planb_enrich"
printf 'web-01.example.net\nnobody.example.net\nDB-02.EXAMPLE.NET\n' |
  "$enrich" --config "$work/planb.ini" --map host_to_owner >"$work/enriched.txt"
printf 'web-01.example.net\tteam-web\nnobody.example.net\t\nDB-02.EXAMPLE.NET\tteam-data\n' >"$work/expected.txt"
cmp "$work/enriched.txt" "$work/expected.txt"
# Batches of 256: 600 lines, every third a hit.
for i in $(seq 1 600); do
  case $((i % 3)) in 0) echo web-01.example.net ;; 1) echo "absent-$i" ;; 2) echo db-02.example.net ;; esac
done >"$work/many.txt"
"$enrich" --config "$work/planb.ini" --map HOST_TO_OWNER <"$work/many.txt" >"$work/many-enriched.txt"
test "$(wc -l <"$work/many-enriched.txt")" -eq 600
test "$(grep -c $'\tteam-web$' "$work/many-enriched.txt")" -eq 200
test "$(grep -c $'\tteam-data$' "$work/many-enriched.txt")" -eq 200
test "$(grep -c -E $'^absent-[0-9]+\t$' "$work/many-enriched.txt")" -eq 200
# Errors name the input.
if "$enrich" --config "$work/planb.ini" --map no_such_map </dev/null 2>"$work/err.txt"; then exit 1; fi
grep -q "map 'no_such_map' is not in the config" "$work/err.txt"
if "$enrich" --config "$work/planb.ini" --map host_to_owner --time 2024-01-01T00:00:00Z </dev/null \
  2>"$work/err.txt"; then
  exit 1
fi
grep -q "does not apply to map host_to_owner" "$work/err.txt"
echo "installed SDK: example plugin built (Release), conformance-tested, benched, loaded and used; planb_enrich built against libplanb_reader.so and run"
