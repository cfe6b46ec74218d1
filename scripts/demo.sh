#!/usr/bin/env bash
# README command 1: install what is missing, build, then run the main job on the bundled sample data on a
# single embedded node: load two reference-data streams, look keys up, show what was stored.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DPLANB_BUILD_TESTS=OFF -DPLANB_BUILD_BENCH=OFF
planb="${PLANB_BUILD_DIR:-$root/build}/bin/planb"
config="$root/examples/planb.ini"
rm -rf "$root/planb-home"  # the sample config's home: start from nothing so the demo shows a first load

bold='' plain=''
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@"; }
step "$planb" --config "$config" plugins
step "$planb" --config "$config" load "$root/examples/data/reference-data.xml"
step "$planb" --config "$config" lookup city_to_country Cardiff
step "$planb" --config "$config" lookup country_to_capital Japan
step "$planb" --config "$config" lookup host_to_location web-prod-001.lon.example.net
step "$planb" --config "$config" load "$root/examples/data/reference-data-update.xml"
step "$planb" --config "$config" lookup user_to_role jsmith42
step "$planb" --config "$config" lookup city_to_country Perth
printf '\n%s$ %s%s\n' "$bold" "$planb --config $config lookup city_to_country Atlantis   # absent: exit 1" "$plain"
if "$planb" --config "$config" lookup city_to_country Atlantis; then exit 1; fi
echo
echo "demo: done. Shards are in $root/planb-home/shards; try: $planb --config $config lookup MAP KEY"
