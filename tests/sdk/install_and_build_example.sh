#!/usr/bin/env bash
# Installs the SDK and planb from a build tree into a temporary prefix, builds the out-of-tree example plugin
# against the INSTALLED SDK (find_package(PlanB)), and has the installed planb load it and use it for a map.
# Usage: install_and_build_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/planb/plugin.h"
cmake -S "$source_dir/examples/plugins/casefold_key" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/example" >/dev/null
plugin="$work/example/libplanb_casefold_key.so"
test -f "$plugin"

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
"$planb" --config "$work/planb.ini" plugins | grep -E "^scheme +casefold +1 +$plugin\$"
"$planb" --config "$work/planb.ini" plugins | grep -E "^type +state +1 +$work/prefix/lib/planb/plugins/"
"$planb" --config "$work/planb.ini" load "$work/hosts.xml"
test "$("$planb" --config "$work/planb.ini" lookup host_to_owner web-01.example.net)" = "team-web"
test "$("$planb" --config "$work/planb.ini" lookup host_to_owner DB-02.EXAMPLE.NET)" = "team-data"
echo "installed SDK: example plugin built, loaded and used"
