#!/usr/bin/env bash
# Makes the files of one release that later releases must read (docs/operations.md, "Upgrading"): a home with
# shards of several built-in types, staged batch zips of each format the release writes (a load, a replacement, a
# deletion), a reader's snapshot, all from tiny inline data, and checks that the release itself answers the
# expected values from them. Writes them to tests/compat/<version>/ (replacing what is there), beside README.md;
# tests/compat/read_previous_release.sh reads them with a later build.
# Usage: make_fixtures.sh [PLANB] [OUT_DIR]   (PLANB: the built binary, default $PLANB; OUT_DIR default
#        tests/compat/<the binary's version>)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
planb=${1:-${PLANB:?usage: make_fixtures.sh PLANB [OUT_DIR] (or set PLANB)}}
planb=$(cd "$(dirname "$planb")" && pwd)/$(basename "$planb")
version=$("$planb" --version | awk '{print $2; exit}')
out=${2:-$here/$version}
work=$(mktemp -d)
serve_pid=
cleanup() {
  if [[ -n "$serve_pid" ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "make_fixtures: $*" >&2; exit 1; }
# expect WHAT EXPECTED ACTUAL
expect() { [[ "$3" == "$2" ]] || fail "$1: expected '$2', got '$3'"; }

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The maps: every section small (max_store_size = 1MiB, the minimum), so the files stay a few pages each.
maps() {
  cat <<'INI'
[map.cities]
type = state
scheme = hashed
max_store_size = 1MiB
[map.geo]
type = ranged
key_format = ipv4
max_store_size = 1MiB
[map.rates]
type = temporal
scheme = hashed
max_store_size = 1MiB
[map.hits]
type = histogram
scheme = hashed
bucket = 1h
max_store_size = 1MiB
INI
}

# 1. The home: a single node, one load per map, fixed effective times so the batch ids do not depend on mtimes.
mkdir -p "$work/fixture"
{ echo "home = home"; maps; } >"$work/fixture/planb.ini"
cfg=(--config "$work/fixture/planb.ini")
printf 'city,country\nParis,France\nLyon,France\nBerlin,Germany\nTokyo,Japan\n' >"$work/cities.csv"
printf 'from,to,site\n10.0.0.0,10.0.0.255,lab\n192.168.1.0,192.168.1.255,office\n' >"$work/geo.csv"
printf '%s\n' '{"pair":"EURUSD","at":"2024-01-01T00:00:00Z","rate":"1.10"}' \
  '{"pair":"EURUSD","at":"2024-06-01T00:00:00Z","rate":"1.08"}' \
  '{"pair":"GBPUSD","at":"2024-01-01T00:00:00Z","rate":"1.27"}' >"$work/rates.jsonl"
printf 'page,at\n/a,2024-01-01T00:10:00Z\n/a,2024-01-01T00:20:00Z\n/a,2024-01-01T01:05:00Z\n/b,2024-01-01T00:15:00Z\n' \
  >"$work/hits.csv"
at=(--effective-time 2026-01-01T00:00:00Z)
"$planb" "${cfg[@]}" load --format csv --map cities --key city --value country "${at[@]}" "$work/cities.csv" >/dev/null
"$planb" "${cfg[@]}" load --format csv --map geo --from from --to to --value site "${at[@]}" "$work/geo.csv" >/dev/null
"$planb" "${cfg[@]}" load --format jsonl --map rates --key pair --time at --value rate "${at[@]}" "$work/rates.jsonl" \
  >/dev/null
"$planb" "${cfg[@]}" load --format csv --map hits --key page --time at "${at[@]}" "$work/hits.csv" >/dev/null

# 2. Staged batches as a storage node holds them before it merges: a load on a storage node that is not serving
# stages its own copy (node_list with itself) and leaves it in staging/.
mkdir -p "$work/stage"
{
  echo "home = home"
  echo "node_name = n1"
  echo "node_list = ,n1"
  maps
  echo "[node.n1]"
  echo "endpoint = tcp://127.0.0.1:$port"
} >"$work/stage/planb.ini"
scfg=(--config "$work/stage/planb.ini")
staged() { ls "$work/stage/home/staging/" | grep -E '^[0-9]{20}\.zip$' | tail -1; }
mkdir -p "$work/fixture/batches"
printf 'city,country\nRome,Italy\nMadrid,Spain\n' >"$work/more-cities.csv"
"$planb" "${scfg[@]}" load --format csv --map cities --key city --value country "${at[@]}" "$work/more-cities.csv" \
  >/dev/null
cp "$work/stage/home/staging/$(staged)" "$work/fixture/batches/load.zip"
printf 'from,to,site\n10.0.0.0,10.0.0.255,lab2\n172.16.0.0,172.16.0.255,dc\n' >"$work/geo-release.csv"
"$planb" "${scfg[@]}" load --replace --format csv --map geo --from from --to to --value site \
  --effective-time 2026-02-01T00:00:00Z "$work/geo-release.csv" >/dev/null
cp "$work/stage/home/staging/$(staged)" "$work/fixture/batches/replace.zip"
"$planb" "${scfg[@]}" delete cities --where "Key = 'Tokyo'" --effective-time 2026-03-01T00:00:00Z >/dev/null
cp "$work/stage/home/staging/$(staged)" "$work/fixture/batches/delete.zip"
for zip in load replace delete; do
  /usr/bin/python3 -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("planb-batch").decode().split("\n")[0])' \
    "$work/fixture/batches/$zip.zip" >"$work/manifest-$zip"
done
expect "load.zip manifest" "planb-batch 2" "$(cat "$work/manifest-load")"
expect "replace.zip manifest" "planb-batch 4" "$(cat "$work/manifest-replace")"
expect "delete.zip manifest" "planb-batch 5" "$(cat "$work/manifest-delete")"

# 3. A reader's snapshot: the fixture home served by a storage node, a reader (node_list without itself) looks a
# key up and so fetches the snapshot of cities.
cp -a "$work/fixture/home" "$work/served"
{
  echo "home = served"
  echo "node_name = n1"
  echo "node_list = ,n1"
  maps
  echo "[node.n1]"
  echo "endpoint = tcp://127.0.0.1:$port"
} >"$work/serve.ini"
"$planb" --config "$work/serve.ini" serve --ready-file "$work/ready" 2>"$work/serve.log" &
serve_pid=$!
# Waits for the node's "serving" line (tail -f follows the log as it grows), at most 10 s; the node writes its
# ready file before that line.
grep -q -m1 "serving tcp://" < <(timeout 10 tail -n +1 -f "$work/serve.log") || true  # grep returns at the line
kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; fail "planb serve stopped"; }
[[ -e "$work/ready" ]] || { cat "$work/serve.log" >&2; fail "planb serve did not get ready in 10 s"; }
{
  echo "home = reader-home"
  echo "node_name = reader1"
  echo "node_list = ,n1"
  echo "min_time_to_keep_snapshots = 3650d"
  maps
  echo "[node.n1]"
  echo "endpoint = tcp://127.0.0.1:$port"
} >"$work/fixture/reader.ini"
expect "reader lookup cities Paris" France "$("$planb" --config "$work/fixture/reader.ini" lookup cities Paris)"
kill "$serve_pid"
wait "$serve_pid" || fail "planb serve did not stop cleanly"
serve_pid=
# The reader's config as kept: a node nobody listens on (port 1), so a later build reads the snapshot it holds.
sed -i "s|^endpoint = tcp://127.0.0.1:$port\$|endpoint = tcp://127.0.0.1:1|" "$work/fixture/reader.ini"

# 4. The release answers what README.md says, from the files alone.
f=(--config "$work/fixture/planb.ini")
expect "lookup cities Paris" France "$("$planb" "${f[@]}" lookup cities Paris)"
expect "lookup geo 10.0.0.7" lab "$("$planb" "${f[@]}" lookup geo 10.0.0.7)"
expect "lookup rates EURUSD at 2024-03-01" 1.10 "$("$planb" "${f[@]}" lookup rates EURUSD --time 2024-03-01T00:00:00Z)"
expect "lookup hits /a at 00:30" 2 "$("$planb" "${f[@]}" lookup hits /a --time 2024-01-01T00:30:00Z)"

# Nothing but the files the release keeps: LMDB's lock.mdb and the homes' lock files are made again by whoever
# opens them (and the lookups above just made some).
find "$work/fixture" \( -name lock.mdb -o -name '*.lock' \) -delete

# What this script makes is replaced; README.md and protocol/ (recorded by hand, see README.md) are kept.
mkdir -p "$out"
rm -rf "$out/home" "$out/reader-home" "$out/batches" "$out/planb.ini" "$out/reader.ini"
cp -a "$work/fixture/." "$out/"
du -sh "$out"
