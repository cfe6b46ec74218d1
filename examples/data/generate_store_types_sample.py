#!/usr/bin/env python3
"""Writes store-types.xml: sample data for the temporal, ranged, temporal ranged and session store types.

Deterministic (fixed seed); a dev tool only: the generated file is committed. Run from this directory.
"""
import random
from datetime import datetime, timedelta, timezone

random.seed(20240101)
BASE = datetime(2024, 1, 1, 8, 0, 0, tzinfo=timezone.utc)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def ip(text):
    a, b, c, d = (int(x) for x in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


out = ['<?xml version="1.0" encoding="UTF-8"?>',
       "<!-- Plan B sample data for every store type, written by generate_store_types_sample.py. -->",
       '<referenceData xmlns="reference-data:2" version="2.0.1">']


def reference(map_name, value, key=None, rng=None, time=None):
    out.append("  <reference>")
    out.append(f"    <map>{map_name}</map>")
    if time is not None:
        out.append(f"    <time>{iso(time)}</time>")
    if key is not None:
        out.append(f"    <key>{key}</key>")
    else:
        out.append(f"    <range><from>{rng[0]}</from><to>{rng[1]}</to></range>")
    out.append(f"    <value>{value}</value>")
    out.append("  </reference>")


# Ranged: employee id ranges -> office, with nested teams (the narrowest range wins).
out.append("  <!-- employee id ranges -> office; nested ranges name teams inside an office -->")
offices = [(1000, 1999, "London HQ"), (2000, 2999, "Cardiff"), (3000, 3999, "Manchester"),
           (4000, 4999, "Edinburgh"), (5000, 5999, "Belfast")]
for lo, hi, office in offices:
    reference("employeeIdToOffice", office, rng=(lo, hi))
reference("employeeIdToOffice", "London HQ, Security team", rng=(1500, 1599))
reference("employeeIdToOffice", "London HQ, Security team, Incident response", rng=(1550, 1559))
reference("employeeIdToOffice", "Cardiff, Data team", rng=(2100, 2199))
reference("employeeIdToOffice", "Contractor desk", key=4242)

# Temporal: users moving between departments over time.
out.append("  <!-- user -> department, effective from <time> -->")
departments = ["Engineering", "Finance", "Security", "Operations", "Research", "Sales"]
for n in range(40):
    user = f"user{n:03d}"
    t = BASE - timedelta(days=random.randint(300, 700))
    for _ in range(random.randint(1, 4)):
        reference("user_to_department", random.choice(departments), key=user, time=t)
        t += timedelta(days=random.randint(30, 200), hours=random.randint(0, 23))
reference("user_to_department", "Engineering", key="alice", time=BASE - timedelta(days=400))
reference("user_to_department", "Security", key="alice", time=datetime(2024, 3, 1, tzinfo=timezone.utc))

# Temporal ranged: IP ranges -> site, re-assigned over time.
out.append("  <!-- IPv4 ranges (as numbers) -> site, effective from <time> -->")
sites = [("10.1.0.0", "10.1.255.255", "London DC1"), ("10.2.0.0", "10.2.255.255", "Cardiff DC2"),
         ("10.3.0.0", "10.3.255.255", "Manchester DC3")]
for lo, hi, site in sites:
    reference("ip_range_to_site", site, rng=(ip(lo), ip(hi)), time=BASE - timedelta(days=365))
reference("ip_range_to_site", "Cardiff DC2 (migrated from London)", rng=(ip("10.1.128.0"), ip("10.1.255.255")),
          time=datetime(2024, 2, 1, tzinfo=timezone.utc))

# Session: application log-ins; each event opens a session of <timeout>.
out.append("  <!-- user_app sessions: each event at <time> opens a session lasting <timeout> -->")
for n in range(20):
    key = f"user{n:03d}_app{random.randint(1, 3)}"
    t = BASE + timedelta(minutes=random.randint(0, 600))
    for _ in range(random.randint(1, 5)):
        out.append("  <session>")
        out.append("    <map>user_app_sessions</map>")
        out.append(f"    <key>{key}</key>")
        out.append(f"    <time>{iso(t)}</time>")
        out.append(f"    <timeout>{random.choice(['15m', '30m', 'PT1H'])}</timeout>")
        out.append("  </session>")
        t += timedelta(minutes=random.randint(5, 90))
out.append("  <session><map>user_app_sessions</map><key>alice_payroll</key>"
           "<time>2024-01-01T09:00:00.000Z</time><timeout>30m</timeout></session>")
out.append("</referenceData>")

with open("store-types.xml", "w", encoding="utf-8") as f:
    f.write("\n".join(out) + "\n")
