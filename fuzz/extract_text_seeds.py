#!/usr/bin/env python3
"""Writes the text seed corpora (fuzz/corpus/<target>/t-*) from the tests' inputs and the sample data:
expressions from tests/host/query, configs from tests/host/config and examples/planb.ini, times and durations
from their tests, reference-data XML from examples/data (the large sample cut to its first records).
Run from the repository root: python3 fuzz/extract_text_seeds.py (scripts/fuzz.sh --seeds runs it too)."""
import glob
import hashlib
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
STRING = re.compile(r'(?<![A-Za-z0-9_)])"((?:[^"\\\n]|\\.)*)"')
RAW = re.compile(r'R"\((.*?)\)"', re.S)


def unescape(s):
    return s.encode("utf-8").decode("unicode_escape").encode("latin-1")


def literals(pattern):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
        text = open(path, encoding="utf-8").read()
        for m in STRING.finditer(text):
            try:
                yield unescape(m.group(1))
            except (UnicodeDecodeError, UnicodeEncodeError):
                pass


def write(target, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "t-" + hashlib.sha1(data).hexdigest()[:12]), "wb") as f:
        f.write(data)


def clear(target):
    for path in glob.glob(os.path.join(CORPUS, target, "t-*")):
        os.remove(path)


def main():
    for t in ("fuzz_query", "fuzz_config", "fuzz_time", "fuzz_xml"):
        clear(t)
    # fuzz_query: a selector byte (the store type, modulo their count), then the expression.
    ops = re.compile(rb"(=|<|>| between | in \(| contains | startsWith )", re.I)
    exprs = sorted({s for s in literals("tests/host/query/*.cc") if ops.search(s) and b"column" not in s})
    for i, e in enumerate(exprs[:200]):
        write("fuzz_query", bytes([i % 8]) + e)
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/host/config/*.cc"))):
        for m in RAW.finditer(open(path, encoding="utf-8").read()):
            write("fuzz_config", m.group(1).encode("utf-8"))
    configs = [s for s in literals("tests/host/config/*.cc") if b"\n" in s and (b"=" in s or b"[" in s)]
    for c in sorted(set(configs))[:120]:
        write("fuzz_config", c)
    write("fuzz_config", open(os.path.join(ROOT, "examples/planb.ini"), "rb").read())
    times = re.compile(rb"^(P|[+-]?\d{4}|\d+(ms|s|m|h|d)$)")
    for s in literals("tests/host/common/iso_time_test.cc"):
        if times.match(s) and len(s) < 64:
            write("fuzz_time", s)
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/sdk/*duration*"))):
        for s in literals(os.path.relpath(path, ROOT)):
            if times.match(s) and len(s) < 64:
                write("fuzz_time", s)
    for name in ("reference-data-update.xml", "store-types.xml"):
        write("fuzz_xml", open(os.path.join(ROOT, "examples/data", name), "rb").read())
    big = open(os.path.join(ROOT, "examples/data/reference-data.xml"), "rb").read()
    cut = big.find(b"</reference>", 6000) + len(b"</reference>")
    write("fuzz_xml", big[:cut] + b"\n</referenceData>\n")


if __name__ == "__main__":
    main()
