#!/usr/bin/env bash
# README command 1: install what is missing, build, then run the main job on the bundled sample data on a
# single embedded node: load two reference-data streams, look keys up, query, show what was stored, and enrich a
# few JSON events with planb enrich.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" -DPLANB_BUILD_TESTS=OFF -DPLANB_BUILD_BENCH=OFF
planb="${PLANB_BUILD_DIR:-$root/build}/bin/planb"
config="$root/examples/planb.ini"
rm -rf "$root/planb-home"  # the sample config's home: start from nothing so the demo shows a first load

bold='' plain=''
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() {
  local shown
  printf -v shown '%q ' "$@"
  printf '\n%s$ %s%s\n' "$bold" "$shown" "$plain"
  "$@"
}
step "$planb" --config "$config" plugins
# The base release's records carry no <time>: they take effect when the release did, before the corrections in
# the update (which carry theirs). Without --effective-time they would take the file's modification time, and a
# State map keeps the latest effective time, so a freshly copied base file would win over the older corrections.
step "$planb" --config "$config" load --effective-time 2024-07-01T00:00:00Z "$root/examples/data/reference-data.xml"
step "$planb" --config "$config" lookup city_to_country Cardiff
step "$planb" --config "$config" lookup country_to_capital Japan
step "$planb" --config "$config" lookup host_to_location web-prod-001.lon.example.net
step "$planb" --config "$config" load "$root/examples/data/reference-data-update.xml"
step "$planb" --config "$config" lookup user_to_role jsmith42
step "$planb" --config "$config" lookup city_to_country Perth
step "$planb" --config "$config" load "$root/examples/data/store-types.xml"
step "$planb" --config "$config" lookup employeeIdToOffice 1555
step "$planb" --config "$config" lookup user_to_department alice --time 2024-02-01T00:00:00Z
step "$planb" --config "$config" lookup ip_range_to_site 167887879 --time 2024-01-15T00:00:00Z
step "$planb" --config "$config" lookup user_app_sessions alice_payroll --time 2024-01-01T09:10:00Z
step "$planb" --config "$config" query city_to_country --where "Key startsWith 'San '" --limit 5
step "$planb" --config "$config" query user_to_department --where "Key = 'alice'" --format csv --explain
step "$planb" --config "$config" query employeeIdToOffice --where "KeyStart between 1000 and 1999" --format json
step "$planb" --config "$config" stores
# Events as a pipeline would send them: each gets its city's country and its user's department at the event's time.
step "$planb" --config "$config" enrich --lookup geo.country=city_to_country:city \
  --lookup dept=user_to_department:user@@timestamp --on-miss tag "$root/examples/data/events.jsonl"
printf '\n%s$ %s%s\n' "$bold" "$planb --config $config lookup city_to_country Atlantis   # absent: exit 1" "$plain"
if "$planb" --config "$config" lookup city_to_country Atlantis; then exit 1; fi
echo
echo "demo: done. Shards are in $root/planb-home/shards; try: $planb --config $config lookup MAP KEY"
