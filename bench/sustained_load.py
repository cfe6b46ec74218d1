#!/usr/bin/env python3
"""Sustained load on a real two-node Plan B cluster with CURVE on (issue 16, "Sustained load").

4 processing processes (`planb load`, one batch per process) load into 2 storage nodes (`planb serve`) for a fixed
number of batches while 2 readers look keys up through snapshots and with `--remote`. At the end it checks that no
batch was lost or doubled (both nodes' content versions, row counts, every row and the histogram's counts equal
what was loaded) and that no lookup failed, and prints batches/s, merge lag and lookup latencies during the merges.
A bench, not a test: it asserts correctness, never speed. How to run it and a sample of its output:
docs/benchmarks.md.

Python rather than bash: the run needs parallel loaders and readers, millisecond timing of every process, a
poller reading batch ids out of the nodes' staged zips and percentiles, all of which the standard library gives
without forking `date`, `unzip` and `sort` thousands of times (which would load the machine being measured).
"""

import argparse
import csv
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

NODES = ["node1", "node2"]
LOADERS = ["loader1", "loader2", "loader3", "loader4"]
READERS = ["reader1", "reader2"]
STATE_MAP = "sl_state"     # state, hashed: K distinct keys per batch
COUNTS_MAP = "sl_counts"   # histogram: counts add, so a batch merged twice would show
BUCKET_TIME = "2026-01-01T00:00:00.000Z"
MAP_SECTIONS = f"""
[map.{STATE_MAP}]
type = state
scheme = hashed

[map.{COUNTS_MAP}]
type = histogram
scheme = direct
bucket = 1d
"""
POLL_S = 0.01              # how often the merge-lag poller lists the nodes' staging/
PROGRESS_S = 3.0
SAMPLE_ERRORS = 5          # error messages kept per kind for the report


def now():
    return time.monotonic()


def fail_setup(message):
    raise SystemExit(f"sustained_load: {message}")


class Cluster:
    """The work dir: keys, configs, the two `planb serve` processes and the commands run against them."""

    def __init__(self, planb, work):
        self.planb = planb
        self.work = work
        self.keys_dir = os.path.join(work, "keys")
        self.public = {}
        self.endpoints = {n: "tcp://127.0.0.1:*" for n in NODES}
        self.serve = {}

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def run(self, name, args, config=None, timeout=300):
        config = config or self.path(f"{name}.ini")
        cmd = [self.planb, "--config", config, "--home", self.path(f"{name}-home")] + args
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def keygen(self):
        os.makedirs(self.keys_dir)
        for name in NODES + LOADERS + READERS:
            r = subprocess.run([self.planb, "keygen", name, "--dir", self.keys_dir], capture_output=True, text=True)
            if r.returncode != 0:
                fail_setup(f"planb keygen {name} failed (exit {r.returncode}): {r.stderr.strip()}")
            with open(os.path.join(self.keys_dir, f"{name}.pub")) as f:
                self.public[name] = f.read().strip()

    def cluster_keys(self, name, node_list=NODES, extra=""):
        text = f"node_name = {name}\nnode_list = ,{','.join(node_list)}\n"
        text += f"secret_key_file = {os.path.join(self.keys_dir, name + '.key')}\n{extra}"
        for node in node_list:
            text += f"\n[node.{node}]\nendpoint = {self.endpoints[node]}\npublic_key = {self.public[node]}\n"
        return text

    def write_configs(self):
        clients = "".join(f"\n[client.{c}]\npublic_key = {self.public[c]}\nallow = upload\n" for c in LOADERS)
        clients += "".join(f"\n[client.{c}]\npublic_key = {self.public[c]}\nallow = read, snapshot\n"
                           for c in READERS)
        for node in NODES:
            self.write(f"{node}.ini", self.cluster_keys(node) + clients + MAP_SECTIONS)
        for loader in LOADERS:
            self.write(f"{loader}.ini", self.cluster_keys(loader) + MAP_SECTIONS)
        # Readers refresh a snapshot older than a second, so that they fetch new ones while the nodes merge.
        fresh = "min_time_to_keep_snapshots = 1s\nsnapshot_retry_fetch_interval = 1s\n"
        for reader in READERS:
            self.write(f"{reader}.ini", self.cluster_keys(reader, extra=fresh) + MAP_SECTIONS)
        # One checker per node (reader1's key, a node_list of that node alone): its snapshots say the content
        # version of that node's shards, which `planb stores` on a storage node does not print.
        for node in NODES:
            self.write(f"check-{node}.ini", self.cluster_keys("reader1", [node]) + MAP_SECTIONS)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)

    def start_nodes(self, deadline_s=60):
        for node in NODES:
            ready = self.path(f"{node}.ready")
            log = open(self.path(f"{node}.log"), "w")
            cmd = [self.planb, "--config", self.path(f"{node}.ini"), "--home", self.path(f"{node}-home"), "serve",
                   "--bind", "tcp://127.0.0.1:*", "--ready-file", ready]
            self.serve[node] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        end = now() + deadline_s
        for node in NODES:
            ready = self.path(f"{node}.ready")
            while not os.path.exists(ready):
                if self.serve[node].poll() is not None:
                    fail_setup(f"{node}: planb serve exited {self.serve[node].returncode}: {self.log_tail(node)}")
                if now() > end:
                    fail_setup(f"{node}: not ready after {deadline_s} s: {self.log_tail(node)}")
                time.sleep(0.02)
            with open(ready) as f:
                self.endpoints[node] = f.read().strip()
        self.write_configs()  # now with the bound endpoints, for the clients

    def log_tail(self, node):
        try:
            with open(self.path(f"{node}.log")) as f:
                return " | ".join(f.read().strip().splitlines()[-5:])
        except OSError:
            return "(no log)"

    def stop_nodes(self):
        codes = {}
        for node, proc in self.serve.items():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for node, proc in self.serve.items():
            try:
                codes[node] = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[node] = proc.wait()
        self.serve = {}
        return codes

    def staged(self, node):
        """Names of the batch zips in the node's staging/ (not yet merged)."""
        try:
            return [n for n in os.listdir(self.path(f"{node}-home", "staging")) if n.endswith(".zip")]
        except FileNotFoundError:
            return []


def batch_xml(loader, batch, keys):
    refs = [f"  <reference><map>{STATE_MAP}</map><key>{k}</key><value>{v}</value></reference>"
            for k, v in batch_rows(loader, batch, keys)]
    for key, count in (("all", keys), (f"batches-{loader}", 1)):
        refs.append(f"  <reference><map>{COUNTS_MAP}</map><time>{BUCKET_TIME}</time><key>{key}</key>"
                    f"<value>{count}</value></reference>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<referenceData xmlns="reference-data:2" version="2.0.1">\n'
            + "\n".join(refs) + "\n</referenceData>\n")


def batch_rows(loader, batch, keys):
    """The state map's rows of one batch: keys distinct over every loader and batch."""
    return [(f"{loader}-b{batch}-k{i}", f"value-{loader}-{batch}-{i}-" + "x" * 24) for i in range(keys)]


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))]


class Run:
    """Shared state of one run: what was loaded, lookups made, merge lags seen; guarded by `lock`."""

    def __init__(self, cluster, args):
        self.c = cluster
        self.args = args
        self.lock = threading.Lock()
        self.loads = []            # (loader, batch, pid, start, end, exit code, stderr)
        self.loaded = []           # (key, value) of batches whose load returned 0
        self.expected = {}         # key -> value, every batch meant to be loaded
        self.lookups = []          # (mode, phase, seconds, keys asked, found, exit code)
        self.errors = {}           # kind -> [count, sample messages]
        self.pending = {n: {} for n in NODES}  # node -> {(loader, pid): load return time}
        self.lags = {n: [] for n in NODES}     # node -> seconds from a load's return to its batch leaving staging/
        self.max_staged = {n: 0 for n in NODES}
        self.zip_ids = {}          # (node, zip name) -> batch id (its manifest), read once
        self.loaders_done = threading.Event()
        self.merged = threading.Event()
        self.stop_readers = threading.Event()
        self.stop_poller = threading.Event()

    def error(self, kind, message):
        with self.lock:
            entry = self.errors.setdefault(kind, [0, []])
            entry[0] += 1
            if len(entry[1]) < SAMPLE_ERRORS:
                entry[1].append(message.strip().replace("\n", " | ")[:300])

    # Loaders: one `planb load` per batch, one after another; four at once.
    def loader(self, loader):
        for batch in range(1, self.args.batches + 1):
            file = self.c.path("input", loader, f"b{batch}.xml")
            cmd = [self.c.planb, "--config", self.c.path(f"{loader}.ini"), "--home", self.c.path(f"{loader}-home"),
                   "load", "--batch-id", f"{loader}/b{batch}", file]
            start = now()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _, err = proc.communicate()
            end = now()
            with self.lock:
                self.loads.append((loader, batch, proc.pid, start, end, proc.returncode, err))
                if proc.returncode == 0:
                    self.loaded.extend(batch_rows(loader, batch, self.args.keys))
                    for node in NODES:
                        self.pending[node][f"{loader}/b{batch}"] = end
            if proc.returncode != 0:
                self.error("load failed", f"{loader} batch {batch} exit {proc.returncode}: {err}")

    # The poller: every POLL_S, each node's staging/. A batch whose load returned at R and that is no longer staged
    # at a listing made after R was merged by then: its lag is that listing's time - R (resolution: POLL_S).
    def poller(self):
        while not self.stop_poller.is_set():
            for node in NODES:
                started = now()
                names = self.c.staged(node)
                listed = now()
                present = set()
                for name in names:
                    batch_id = self.zip_ids.get((node, name))
                    if batch_id is None:
                        batch_id = read_batch_id(self.c.path(f"{node}-home", "staging", name))
                        if batch_id is None:
                            continue  # merged (deleted) between the listing and the read
                        self.zip_ids[(node, name)] = batch_id
                    present.add(batch_id)
                with self.lock:
                    self.max_staged[node] = max(self.max_staged[node], len(names))
                    for batch_id, returned in list(self.pending[node].items()):
                        if returned > started:
                            continue
                        if batch_id not in present:
                            self.lags[node].append(listed - returned)
                            del self.pending[node][batch_id]
            self.stop_poller.wait(POLL_S)

    # Readers: single-key and batched lookups, through snapshots and --remote, of keys already loaded.
    def reader(self, reader, seed):
        rng = random.Random(seed)
        modes = [("snapshot", 1), ("remote", 1), ("snapshot", self.args.lookup_batch),
                 ("remote", self.args.lookup_batch)]
        keys_file = self.c.path(f"{reader}-keys.txt")
        i = 0
        while not self.stop_readers.is_set():
            where, count = modes[i % len(modes)]
            i += 1
            with self.lock:  # before anything is loaded: a key no batch has (a miss, exit 1)
                n = len(self.loaded)
                keys = [self.loaded[rng.randrange(n)][0] for _ in range(count)] if n else ["never-loaded"] * count
            args = ["lookup", STATE_MAP]
            if count == 1:
                args.append(keys[0])
            else:
                with open(keys_file, "w") as f:
                    f.write("\n".join(keys) + "\n")
                args += ["--keys-from", keys_file]
            if where == "remote":
                args.append("--remote")
            phase = "idle" if self.merged.is_set() else "load"
            snapshots = count_snapshots(self.c, reader)
            merged_before = self.all_nodes_merged_one()
            start = now()
            r = self.c.run(reader, args)
            seconds = now() - start
            fetched = count_snapshots(self.c, reader) > snapshots  # this process fetched a newer snapshot
            found = self.check_lookup(reader, where, keys, r, merged_before)
            with self.lock:
                mode = f"{where}{' + fetch' if fetched else ''}, {count} key{'s' if count > 1 else ''}/process"
                self.lookups.append((mode, phase, seconds, count, found, r.returncode))

    def all_nodes_merged_one(self):
        """Whether every node has merged at least one batch (the poller saw one leave its staging/)."""
        with self.lock:
            return all(self.lags[n] for n in NODES)

    def check_lookup(self, reader, where, keys, r, merged_before):
        """Counts the keys found; a value that is not the one loaded, or exit 2, is an error (exit 1: a miss)."""
        what = f"{reader} {where} lookup of {len(keys)} key(s)"
        # Before a batch merged on every node, the map may have no data on a node or in a snapshot: an error by
        # design (exit 2, not a miss: a wrong home must not look like one), but here only "not merged yet", counted
        # as misses. Judged by what was merged when the lookup started.
        if r.returncode == 2 and "has no data" in r.stderr and not merged_before:
            return 0
        if r.returncode not in (0, 1):
            self.error(f"{where} lookup exit {r.returncode}", f"{what}: {r.stderr}")
            return 0
        lines = r.stdout.splitlines()
        found = 0
        if len(keys) == 1:
            if r.returncode == 0:
                found = 1
                if lines != [self.expected.get(keys[0])]:
                    self.error("wrong value", f"{what}: {keys[0]} gave {r.stdout!r}")
        else:
            for line in lines:
                key, _, value = line.partition("\t")
                found += 1
                if self.expected.get(key) != value:
                    self.error("wrong value", f"{what}: line {line!r}")
        for line in r.stderr.splitlines():
            if "no key" not in line and "no data loaded yet" not in line:
                self.error(f"{where} lookup stderr", f"{what}: {line}")
        if (r.returncode == 0) != (found == len(keys)):
            self.error(f"{where} lookup exit status", f"{what}: exit {r.returncode} with {found} found")
        return found

    def progress(self, started, total):
        while not self.stop_readers.wait(PROGRESS_S):
            with self.lock:
                done = len(self.loads)
                lookups = len(self.lookups)
                errors = sum(e[0] for e in self.errors.values())
            staged = ", ".join(f"{n} {len(self.c.staged(n))}" for n in NODES)
            state = "loading" if not self.loaders_done.is_set() else (
                "waiting for merges" if not self.merged.is_set() else "idle lookups")
            print(f"[{now() - started:6.1f}s] {state}: batches {done}/{total}, lookups {lookups}, errors {errors}, "
                  f"staged: {staged}", file=sys.stderr, flush=True)


def read_batch_id(zip_path):
    try:
        with zipfile.ZipFile(zip_path) as z:
            for line in z.read("planb-batch").decode().splitlines():
                if line.startswith("id "):
                    return line[3:]
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return None


def parse_table(text, header_first):
    """Rows of a `planb stores` table whose header line starts with `header_first`, as dicts."""
    rows, header = [], None
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            header = None
            continue
        if fields[0] == header_first:
            header = fields
        elif header and len(fields) == len(header):
            rows.append(dict(zip(header, fields)))
    return rows


def check(run, args):
    """Every check of the run; returns the list of failures (empty: all passed)."""
    c, failures = run.c, []
    batches = len(LOADERS) * args.batches
    failed_loads = [l for l in run.loads if l[5] != 0]
    if failed_loads or len(run.loads) != batches:
        failures.append(f"loads: {len(failed_loads)} of {len(run.loads)} failed (expected {batches} loads)")
    dumps = {}
    for node in NODES:
        # Nothing staged, nothing quarantined.
        if c.staged(node):
            failures.append(f"{node}: {len(c.staged(node))} batch(es) still staged")
        quarantine = c.path(f"{node}-home", "quarantine")
        if os.path.isdir(quarantine) and os.listdir(quarantine):
            failures.append(f"{node}: quarantine/ holds {sorted(os.listdir(quarantine))}")
        # Rows, as `planb stores` on the node counts them.
        r = c.run(node, ["stores"])
        rows = {row["MAP"]: row["ROWS"] for row in parse_table(r.stdout, "MAP") if "ROWS" in row}
        want = {STATE_MAP: len(LOADERS) * args.batches * args.keys, COUNTS_MAP: 1 + len(LOADERS)}
        for name, expected in want.items():
            if rows.get(name) != str(expected):
                failures.append(f"{node}: {name} has {rows.get(name)} rows, expected {expected} "
                                f"(stores exit {r.returncode}: {r.stderr.strip()})")
        # Content versions: a fresh snapshot from this node alone.
        r = c.run(f"check-{node}", ["refresh"], config=c.path(f"check-{node}.ini"))
        if r.returncode != 0:
            failures.append(f"{node}: refresh of a snapshot failed (exit {r.returncode}): {r.stderr.strip()}")
        r = c.run(f"check-{node}", ["stores"], config=c.path(f"check-{node}.ini"))
        versions = {row["MAP"]: row["VERSION"] for row in parse_table(r.stdout, "MAP") if "VERSION" in row}
        for name in (STATE_MAP, COUNTS_MAP):
            if versions.get(name) != str(batches):
                failures.append(f"{node}: content version of {name} is {versions.get(name)}, expected {batches} "
                                f"(one per batch loaded)")
        # Every row of the state map, with its value.
        r = c.run(node, ["query", STATE_MAP, "--format", "csv"])
        if r.returncode != 0:
            failures.append(f"{node}: query {STATE_MAP} failed (exit {r.returncode}): {r.stderr.strip()}")
        dump = {row["Key"]: row["Value"] for row in csv.DictReader(io.StringIO(r.stdout))}
        dumps[node] = dump
        missing = sum(1 for k in run.expected if k not in dump)
        wrong = sum(1 for k, v in run.expected.items() if k in dump and dump[k] != v)
        extra = sum(1 for k in dump if k not in run.expected)
        if missing or wrong or extra:
            failures.append(f"{node}: {STATE_MAP}: {missing} key(s) missing, {wrong} wrong value(s), {extra} extra")
        # The histogram adds: a batch merged twice (or lost) changes these counts.
        count_keys = ["all"] + [f"batches-{l}" for l in LOADERS]
        r = c.run(node, ["lookup", COUNTS_MAP] + count_keys + ["--time", BUCKET_TIME])
        counts = dict(line.split("\t", 1) for line in r.stdout.splitlines() if "\t" in line)
        want_counts = {"all": str(batches * args.keys), **{f"batches-{l}": str(args.batches) for l in LOADERS}}
        if counts != want_counts:
            failures.append(f"{node}: {COUNTS_MAP} counts {counts}, expected {want_counts} "
                            f"(exit {r.returncode}: {r.stderr.strip()})")
    if len(dumps) == 2 and dumps[NODES[0]] != dumps[NODES[1]]:
        failures.append(f"the nodes disagree: {STATE_MAP} differs between {NODES[0]} and {NODES[1]}")
    for kind, (count, samples) in sorted(run.errors.items()):
        failures.append(f"{count} error(s): {kind}, e.g. {samples[0]}")
    if any(run.pending[n] for n in NODES):
        failures.append(f"merge lag: batches never seen leaving staging/: "
                        f"{ {n: len(run.pending[n]) for n in NODES} }")
    return failures


def count_snapshots(cluster, reader):
    """Snapshots the reader installed (none is cleaned up during the run: the CLI leaves that to `planb cleanup`)."""
    try:
        return sum(1 for n in os.listdir(cluster.path(f"{reader}-home", "snapshots", STATE_MAP)) if n[0] != ".")
    except FileNotFoundError:
        return 0


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def report(run, args, load_seconds, merge_seconds):
    batches = len(run.loads)
    ok = sum(1 for l in run.loads if l[5] == 0)
    durations = [l[4] - l[3] for l in run.loads]
    print(f"\nSustained load: {len(LOADERS)} loaders x {args.batches} batches x {args.keys} keys -> "
          f"{len(NODES)} storage nodes (CURVE, per-client rights), {len(READERS)} readers")
    print(f"  planb: {args.planb}; {os.cpu_count()} CPUs")
    print(f"\n  Loading:   {ok}/{batches} batches in {load_seconds:.1f} s  =  {ok / load_seconds:.2f} batches/s  "
          f"({ok * args.keys / load_seconds:.0f} rows/s into {STATE_MAP})")
    print(f"  per load (one `planb load` process, returns once both nodes staged it): "
          f"p50 {ms(percentile(durations, 50))} ms, p99 {ms(percentile(durations, 99))} ms, "
          f"max {ms(max(durations) if durations else None)} ms")
    print(f"  all merged {merge_seconds:.1f} s after the last load returned")
    print(f"\n  Merge lag (a load's return -> its batch gone from the node's staging/, i.e. merged; "
          f"polled every {POLL_S * 1000:.0f} ms)")
    print(f"  {'node':<8}{'batches':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'max staged':>12}")
    for node in NODES:
        lags = run.lags[node]
        print(f"  {node:<8}{len(lags):>8}{ms(percentile(lags, 50)):>9}{ms(percentile(lags, 99)):>9}"
              f"{ms(max(lags) if lags else None):>9}{run.max_staged[node]:>12}")
    print(f"\n  Lookups of {STATE_MAP} (latency of one `planb lookup` process: start-up + CURVE handshake or snapshot "
          f"open + lookups)")
    print(f"  'load' = while loading and merging; 'idle' = the {args.idle_seconds:g} s after everything merged; "
          f"'+ fetch' = the process fetched a newer snapshot first")
    print(f"  {'mode':<36}{'phase':<6}{'n':>6}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'us/key p50':>12}{'missed/asked':>15}")
    modes = sorted({l[0] for l in run.lookups}, key=lambda m: (m.split(",")[0], int(m.split(", ")[1].split()[0])))
    for mode in modes:
        for phase in ("load", "idle"):
            rows = [l for l in run.lookups if l[0] == mode and l[1] == phase]
            if not rows:
                continue
            lat = [l[2] for l in rows]
            per_key = [l[2] / l[3] for l in rows]
            missed = sum(l[3] - l[4] for l in rows)
            asked = sum(l[3] for l in rows)
            print(f"  {mode:<36}{phase:<6}{len(rows):>6}{ms(percentile(lat, 50)):>9}{ms(percentile(lat, 99)):>9}"
                  f"{ms(max(lat)):>9}{percentile(per_key, 50) * 1e6:>12.0f}{f'{missed}/{asked}':>15}")
    fetched = ", ".join(f"{r} {count_snapshots(run.c, r)}" for r in READERS)
    print(f"  snapshots of {STATE_MAP} fetched (min_time_to_keep_snapshots = 1s): {fetched}")
    errors = sum(e[0] for e in run.errors.values())
    print(f"  lookup and load errors: {errors}  (a miss, exit 1, is not an error: a snapshot up to 1 s old, or a node "
          f"not yet merged)")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batches", type=int, default=50, help="batches per loader (default 50)")
    p.add_argument("--keys", type=int, default=1000, help="distinct keys per batch (default 1000)")
    p.add_argument("--lookup-batch", type=int, default=100, help="keys per batched lookup (default 100)")
    p.add_argument("--idle-seconds", type=float, default=3.0,
                   help="seconds of lookups after everything merged, for comparison (default 3)")
    p.add_argument("--planb", default=os.path.join(root, "build", "bin", "planb"),
                   help="the planb program (default: build/bin/planb of this checkout)")
    p.add_argument("--load-twice", action="store_true",
                   help="load one batch file once more at the end under a new --batch-id (a new batch on purpose; "
                        "the same id would be answered 'already merged'): the checks must then fail, "
                        "which shows that they catch a doubled batch")
    p.add_argument("--keep", action="store_true", help="keep the work dir (it is kept anyway when a check fails)")
    args = p.parse_args()
    for name in ("batches", "keys", "lookup_batch"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be a positive number")
    if args.idle_seconds < 0:
        p.error("--idle-seconds must not be negative")
    args.planb = os.path.abspath(args.planb)
    if not os.access(args.planb, os.X_OK):
        p.error(f"--planb {args.planb}: not an executable (build it: cmake --build build --target planb)")

    work = tempfile.mkdtemp(prefix="planb-sustained-")
    cluster = Cluster(args.planb, work)
    run = Run(cluster, args)
    failures = ["interrupted"]
    try:
        cluster.keygen()
        cluster.write_configs()
        for loader in LOADERS:
            os.makedirs(cluster.path("input", loader))
            for batch in range(1, args.batches + 1):
                cluster.write(os.path.join("input", loader, f"b{batch}.xml"), batch_xml(loader, batch, args.keys))
                run.expected.update(batch_rows(loader, batch, args.keys))
        cluster.start_nodes()
        print(f"sustained_load: work dir {work}; nodes at {cluster.endpoints['node1']}, {cluster.endpoints['node2']}",
              file=sys.stderr)

        started = now()
        threads = [threading.Thread(target=run.poller, daemon=True),
                   threading.Thread(target=run.progress, args=(started, len(LOADERS) * args.batches), daemon=True)]
        threads += [threading.Thread(target=run.reader, args=(r, i), daemon=True) for i, r in enumerate(READERS)]
        loaders = [threading.Thread(target=run.loader, args=(l,), daemon=True) for l in LOADERS]
        for t in threads + loaders:
            t.start()
        for t in loaders:
            t.join()
        run.loaders_done.set()
        load_seconds = now() - started
        if args.load_twice:  # kept out of run.loads: the checks expect what the loaders loaded
            again = cluster.run(LOADERS[0], ["load", "--batch-id", f"{LOADERS[0]}/b1-again",
                                             cluster.path("input", LOADERS[0], "b1.xml")])
            print(f"sustained_load: --load-twice: {LOADERS[0]}'s batch 1 loaded again (exit {again.returncode})",
                  file=sys.stderr)
        end = now() + 120
        while (any(cluster.staged(n) for n in NODES) or any(run.pending[n] for n in NODES)) and now() < end:
            time.sleep(POLL_S)
        merge_seconds = now() - started - load_seconds
        run.merged.set()
        time.sleep(args.idle_seconds)
        run.stop_readers.set()
        run.stop_poller.set()
        for t in threads:
            t.join()
        report(run, args, load_seconds, merge_seconds)
        failures = check(run, args)
    finally:
        run.stop_readers.set()
        run.stop_poller.set()
        codes = cluster.stop_nodes()
        for node, code in codes.items():
            if code != 0:
                failures.append(f"{node}: planb serve exited {code} on SIGTERM: {cluster.log_tail(node)}")
        if failures or args.keep:
            print(f"\nwork dir kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("\nFAILED:", file=sys.stdout)
        for f in failures:
            print(f"  {f}")
        return 1
    print(f"\nPASSED: no batch lost or doubled ({len(LOADERS) * args.batches} batches; both nodes at content version "
          f"{len(LOADERS) * args.batches} with {len(LOADERS) * args.batches * args.keys} rows of {STATE_MAP}, "
          f"every row and count as loaded), 0 lookup errors")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the nodes were stopped on the way out (main's finally)
        sys.exit(130)
