#!/usr/bin/env bash
# Reads the files a release made (tests/compat/<release>/, made by make_fixtures.sh; README.md there lists them and
# the answers) with this build's planb: the home's shards (planb stores, planb lookup), its staged batches of each
# format (they merge, and their keys answer), a batch of a format this build does not read (refused, naming the
# version), a shard whose recorded layout is not this build's (refused, with the commands to load it again), and
# a reader's snapshot. Works on copies in a temporary directory; the repository's files are checked unchanged.
# Usage: read_previous_release.sh BUILD_DIR SOURCE_DIR [RELEASE]   (RELEASE: a directory of tests/compat/, 0.1.0)
set -euo pipefail
build_dir=$1
source_dir=$2
release=${3:-0.1.0}
planb=$build_dir/bin/planb
fixtures=$source_dir/tests/compat/$release
[[ -x "$planb" ]] || { echo "no planb at $planb" >&2; exit 1; }
[[ -f "$fixtures/planb.ini" ]] || { echo "no fixtures at $fixtures" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checksums() { (cd "$fixtures" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
checksums >"$work/before.sha256"

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# check WHAT EXPECTED ACTUAL
check() {
  if [[ "$3" == "$2" ]]; then
    echo "ok: $1"
  else
    fail "$1"$'\n'"  expected: $2"$'\n'"  actual:   $3"
  fi
}
# A fresh copy of the fixtures, as `$work/NAME`.
copy() {
  cp -a "$fixtures" "$work/$1"
  echo "$work/$1"
}
# run ARGS...: planb ARGS;: stdout in $out, stderr in $err, exit status in $rc.
run() {
  set +e
  out=$("$planb" "$@" 2>"$work/stderr")
  rc=$?
  set -e
  err=$(cat "$work/stderr")
}
# MAP TYPE ROWS BATCHES [DIGEST] per map, from planb stores --format json.
stores_summary() {
  /usr/bin/python3 -c '
import json, sys
for m in json.load(sys.stdin)["maps"]:
    v = m["content_version"] or {}
    print(m["map"], m["type"], m["rows"], v.get("batches"), v.get("digest") if sys.argv[1] == "digest" else "")
' "$1"
}
# lookup_check HOME_CONFIG MAP KEY [--time T] EXPECTED_STDOUT EXPECTED_EXIT
lookup_check() {
  local config=$1 map=$2 key=$3
  shift 3
  local time=()
  if [[ "$1" == --time ]]; then
    time=(--time "$2")
    shift 2
  fi
  run --config "$config" lookup "$map" "$key" "${time[@]}"
  check "lookup $map $key ${time[*]}" "$1 (exit $2)" "$out (exit $rc)"
}

# 1. The home: every map with its rows and content version (the digest: the same batches), and lookups.
home=$(copy home)
run --config "$home/planb.ini" stores --format json
check "stores exits 0" 0 "$rc"
check "stores: maps, types, rows, content versions" \
  "cities state 4 1 9b54fc68178cfca0
geo ranged 2 1 a72c26d77ee6e3a7
hits histogram 3 1 4651cf43d2eaad55
rates temporal 3 1 c4f4fa37c43fa22b" "$(stores_summary digest <<<"$out")"
c=$home/planb.ini
lookup_check "$c" cities Paris France 0
lookup_check "$c" cities Tokyo Japan 0
lookup_check "$c" cities Lyon France 0
lookup_check "$c" cities Berlin Germany 0
lookup_check "$c" cities Rome "" 1
lookup_check "$c" geo 10.0.0.7 lab 0
lookup_check "$c" geo 192.168.1.200 office 0
lookup_check "$c" geo 10.0.1.0 "" 1
lookup_check "$c" rates EURUSD --time 2024-03-01T00:00:00Z 1.10 0
lookup_check "$c" rates EURUSD --time 2024-07-01T00:00:00Z 1.08 0
lookup_check "$c" rates GBPUSD --time 2024-02-01T00:00:00Z 1.27 0
lookup_check "$c" rates EURUSD --time 2023-07-01T00:00:00Z "" 1
lookup_check "$c" hits /a --time 2024-01-01T00:30:00Z 2 0
lookup_check "$c" hits /a --time 2024-01-01T01:30:00Z 1 0
lookup_check "$c" hits /b --time 2024-01-01T00:59:59Z 1 0
run --config "$c" query rates --where "Key = 'EURUSD'" --format csv
check "query rates Key = 'EURUSD' (rows)" 3 "$(wc -l <<<"$out")"

# 2. The staged batches of each format merge: a load (format 2), a replacement of geo (4), a deletion of Tokyo
# from cities (5). A single-node load merges whatever is staged before its own batch.
merge=$(copy merge)
cp "$merge/batches/load.zip" "$merge/home/staging/00000000000000000001.zip"
cp "$merge/batches/replace.zip" "$merge/home/staging/00000000000000000002.zip"
cp "$merge/batches/delete.zip" "$merge/home/staging/00000000000000000003.zip"
printf 'city,country\nOslo,Norway\n' >"$work/oslo.csv"
c=$merge/planb.ini
run --config "$c" load --format csv --map cities --key city --value country --effective-time 2026-04-01T00:00:00Z \
  "$work/oslo.csv"
check "load after the staged batches exits 0" 0 "$rc"
check "load merged the 3 staged batches and its own" "merged 4 batch(es) into the shards in $merge/home/shards" \
  "$(grep '^merged ' <<<"$out")"
check "staging/ is empty" "" "$(find "$merge/home/staging" -name '*.zip')"
run --config "$c" stores --format json
check "stores after the merge" "cities state 6 4 
geo ranged 2 2 
hits histogram 3 1 
rates temporal 3 1 " "$(stores_summary "" <<<"$out")"
lookup_check "$c" cities Rome Italy 0
lookup_check "$c" cities Madrid Spain 0
lookup_check "$c" cities Oslo Norway 0
lookup_check "$c" cities Paris France 0
lookup_check "$c" cities Tokyo "" 1
lookup_check "$c" geo 10.0.0.7 lab2 0
lookup_check "$c" geo 172.16.0.9 dc 0
lookup_check "$c" geo 192.168.1.200 "" 1

# 3. A batch of a format this build does not read is refused, naming the version; nothing of it merges. The copy
# of load.zip gets manifest "planb-batch 1" (before batch ids) or "planb-batch 99" (a format from the future).
rewrite_manifest() {  # ZIP_IN ZIP_OUT VERSION
  /usr/bin/python3 - "$@" <<'PY'
import sys, zipfile
src, dst, version = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for info in zin.infolist():
        data = zin.read(info.filename)
        if info.filename == "planb-batch":
            first, rest = data.split(b"\n", 1)
            assert first == b"planb-batch 2", first
            data = b"planb-batch " + version.encode() + b"\n" + rest
        zout.writestr(info.filename, data)
PY
}
for version in 1 99; do
  old=$(copy "old$version")
  c=$old/planb.ini
  rewrite_manifest "$old/batches/load.zip" "$old/home/staging/00000000000000000001.zip" "$version"
  run --config "$c" load --format csv --map cities --key city --value country \
    --effective-time 2026-04-01T00:00:00Z "$work/oslo.csv"
  check "load behind a planb-batch $version batch exits 2" 2 "$rc"
  if [[ $version == 1 ]]; then
    expected="entry 'planb-batch': planb-batch 1 (written by an older planb, without a batch id; reload the source data)"
  else
    expected="entry 'planb-batch': batch format version '99', this build reads 2 to 5"
  fi
  check "planb-batch $version is refused naming its version" 1 "$(grep -cF -- "$expected" <<<"$err" || true)"
  lookup_check "$c" cities Rome "" 1
  run --config "$c" stores --format json
  check "cities still at content version 1 behind planb-batch $version" "cities state 4 1 " \
    "$(stores_summary "" <<<"$out" | grep '^cities ')"
done

# 4. A shard whose meta records another layout (here: scheme hashed/1, as a planb before hashed/2 wrote it) is
# refused at open with the commands to load the map again; nothing is rewritten.
layout=$(copy layout)
shard=$layout/home/shards/cities
mdb_dump -p -s meta "$shard" | grep -v "^db_pagesize=" >"$work/meta.dump"
grep -qx ' hashed/2' "$work/meta.dump" || fail "the cities shard's meta does not record hashed/2"
sed -i 's|^ hashed/2$| hashed/1|' "$work/meta.dump"
mdb_load -s meta "$shard" <"$work/meta.dump"
rm -f "$shard/lock.mdb"
sum=$(sha256sum <"$shard/data.mdb")
run --config "$layout/planb.ini" lookup cities Paris
check "lookup on a shard of another layout exits 2" 2 "$rc"
check "the refusal names both versions" 1 \
  "$(grep -cF "the layout of scheme hashed changed (version 1 to 2: the file was written by an older planb)" <<<"$err" || true)"
check "the refusal says how to load the map again" 1 \
  "$(grep -cF "To load the map again: stop what serves this home (planb serve, its readers), move the shard away (mv $shard /somewhere/cities.old" <<<"$err" || true)"
check "the shard is not rewritten" "$sum" "$(sha256sum <"$shard/data.mdb")"

# 5. The reader's snapshot of cities (its node list names a port nobody listens on, and min_time_to_keep_snapshots
# keeps it from asking): the reader answers from it and lists its version.
reader=$(copy reader)
lookup_check "$reader/reader.ini" cities Paris France 0
lookup_check "$reader/reader.ini" cities Lyon France 0
run --config "$reader/reader.ini" stores --format json
check "reader stores: the snapshot of cities at content version 1" "cities 1 9b54fc68178cfca0" "$(/usr/bin/python3 -c '
import json, sys
for s in json.load(sys.stdin)["snapshots"]:
    print(s["map"], s["content_version"]["batches"], s["content_version"]["digest"])
' <<<"$out")"

# The repository's files are as they were.
checksums >"$work/after.sha256"
check "the fixtures in the repository are unchanged" "" "$(diff "$work/before.sha256" "$work/after.sha256" || true)"

if ((failures > 0)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all checks passed (release $release)"
