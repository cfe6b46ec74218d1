#!/usr/bin/env bash
# Builds the Debian packages from a build tree (cpack -G DEB), checks their metadata, unpacks both into an empty
# root (dpkg -x: no maintainer scripts, nothing installed on this machine) and, from the unpacked files alone:
# planb --version, a single-node load and lookup, an out-of-tree plugin built against the unpacked SDK and loaded
# by the unpacked planb; and systemd-analyze verify accepts the unit (its ExecStart pointed at the unpacked planb,
# the one path that differs from an installed system).
# Usage: debian_packages.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$build_dir" && cpack -G DEB -B "$work/pkgs" >"$work/cpack.txt" 2>&1) || { cat "$work/cpack.txt" >&2; exit 1; }
runtime_deb=$(ls "$work"/pkgs/planb_*_amd64.deb)
dev_deb=$(ls "$work"/pkgs/planb-dev_*_amd64.deb)

# Metadata: names, dependencies found by dpkg-shlibdeps, the config as a conffile.
test "$(dpkg-deb -f "$runtime_deb" Package)" = planb
test "$(dpkg-deb -f "$dev_deb" Package)" = planb-dev
depends=$(dpkg-deb -f "$runtime_deb" Depends)
for lib in liblmdb0 libzmq5 libzip4 libmicrohttpd12 libprometheus-cpp-core1.0 libsystemd0 libmaxminddb0 adduser; do
  grep -q "$lib" <<<"$depends" || { echo "planb does not depend on $lib: $depends" >&2; exit 1; }
done
dev_depends=$(dpkg-deb -f "$dev_deb" Depends)
grep -qF "planb (= $(dpkg-deb -f "$runtime_deb" Version))" <<<"$dev_depends"
dpkg-deb --ctrl-tarfile "$runtime_deb" | tar -xO ./conffiles >"$work/conffiles"
grep -qx /etc/planb/planb.ini "$work/conffiles"
# What goes where: the program and its plugins in planb, the SDK in planb-dev only. (Listed to files first: grep -q
# ending a pipe early would kill dpkg-deb with SIGPIPE.)
dpkg-deb -c "$runtime_deb" >"$work/runtime.txt"
dpkg-deb -c "$dev_deb" >"$work/dev.txt"
grep -q ' ./usr/bin/planb$' "$work/runtime.txt"
grep -q ' ./usr/lib/planb/plugins/libplanb_state_store.so$' "$work/runtime.txt"
grep -q ' ./usr/lib/systemd/system/planb.service$' "$work/runtime.txt"
if grep -q '/usr/include/' "$work/runtime.txt"; then echo "planb ships headers" >&2; exit 1; fi
grep -q ' ./usr/include/planb/plugin.h$' "$work/dev.txt"
grep -q ' ./usr/lib/cmake/PlanB/PlanBConfig.cmake$' "$work/dev.txt"

root="$work/root"
mkdir "$root"
dpkg -x "$runtime_deb" "$root"
dpkg -x "$dev_deb" "$root"
planb="$root/usr/bin/planb"
"$planb" --version | grep -q '^planb [0-9]'

cat >"$work/planb.ini" <<INI
home = $work/home
[map.city_to_country]
type = state
INI
cat >"$work/cities.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<referenceData xmlns="reference-data:2">
  <reference><map>city_to_country</map><key>Paris</key><value>France</value></reference>
  <reference><map>city_to_country</map><key>Lyon</key><value>France</value></reference>
</referenceData>
XML
"$planb" --config "$work/planb.ini" load "$work/cities.xml" >/dev/null
test "$("$planb" --config "$work/planb.ini" lookup city_to_country Paris)" = France

# The Python module: installed where python3 looks, naming the directory the package put the library in.
pydir="$root/usr/lib/python3/dist-packages"
libdir=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$pydir'); from planb import _installed; print(_installed.LIBRARY_DIR)")
test -f "$root$libdir/libplanb_reader.so" || { echo "planb/_installed.py names $libdir, which holds no libplanb_reader.so" >&2; exit 1; }
# A sanitizer build's library cannot be loaded into the uninstrumented python3 (its runtime must come first).
if readelf -d "$root$libdir/libplanb_reader.so" | grep -qE 'NEEDED.*lib(a|t|ub)san'; then
  echo "python: skipped, libplanb_reader.so is a sanitizer build"
else
  answer=$(PYTHONPATH="$pydir" PLANB_LIBRARY_PATH="$root$libdir" /usr/bin/python3 -c "
import planb
with planb.Reader(config='$work/planb.ini') as reader:
    print(reader.lookup('city_to_country', 'Paris'), reader.lookup('city_to_country', 'Atlantis'))")
  test "$answer" = "France None" || { echo "python: $answer" >&2; exit 1; }
fi

# An out-of-tree plugin against the unpacked SDK, loaded by the unpacked planb.
cmake -S "$source_dir/examples/plugins/casefold_key" -B "$work/example" -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build "$work/example" >/dev/null
plugins=$("$planb" --plugin-dir "$work/example" --config "$work/planb.ini" plugins)
grep -qE '^scheme +casefold ' <<<"$plugins"

mkdir "$work/unit"
sed "s|/usr/bin/planb|$planb|" "$root/usr/lib/systemd/system/planb.service" >"$work/unit/planb.service"
verdict=$(systemd-analyze verify "$work/unit/planb.service" 2>&1) || { echo "$verdict" >&2; exit 1; }
if [ -n "$verdict" ]; then echo "systemd-analyze verify: $verdict" >&2; exit 1; fi
echo "Debian packages: $(basename "$runtime_deb") and $(basename "$dev_deb") built, unpacked, planb loaded and looked up (also from Python), a plugin built against the SDK, the unit verified"
