#!/usr/bin/env python3
"""Writes reference-data XML and a planb.ini for `planb bench` from ../shared/data (docs/schemes.md, "Measuring
your own data"): world cities (state: name -> country), IEEE OUI (state: assignment -> organisation, long values)
and tz transitions (temporal: zone -> abbreviation over time).

usage: scripts/shared_data_to_xml.py SHARED_DATA_DIR OUT_DIR
"""
import csv
import gzip
import io
import os
import sys
from xml.sax.saxutils import escape


def rows(path):
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        yield from csv.DictReader(f)


def write(out_dir, name, records):
    with io.open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
        f.write('<referenceData xmlns="reference-data:2">\n')
        for map_name, key, value, time in records:
            when = "<time>%s</time>" % time if time else ""
            f.write("<reference><map>%s</map>%s<key>%s</key><value>%s</value></reference>\n"
                    % (map_name, when, escape(key), escape(value)))
        f.write("</referenceData>\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    write(out, "world-cities.xml",
          (("world_cities", r["name"], r["country"], None) for r in rows(data + "/world-cities.csv.gz")))
    write(out, "ieee-oui.xml",
          (("oui_vendors", r["Assignment"], r["Organization Name"], None)
           for r in rows(data + "/ieee-oui-all.csv.gz") if r["Assignment"]))
    write(out, "tz-transitions.xml",
          (("tz_abbreviations", r["zone"], r["abbreviation"], r["effective_from_utc"] or "1800-01-01T00:00:00Z")
           for r in rows(data + "/tzdata-transitions.csv.gz")))
    with io.open(os.path.join(out, "planb.ini"), "w") as f:
        f.write("[map.world_cities]\ntype = state\n[map.oui_vendors]\ntype = state\n"
                "[map.tz_abbreviations]\ntype = temporal\n")


if __name__ == "__main__":
    main()
