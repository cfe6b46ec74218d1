#!/usr/bin/env python3
"""Writes Plan B's sample reference data: reference-data.xml and reference-data-update.xml, next to this file.

A dev tool only: the XML it writes is committed, so nobody needs Python to run the demo. It is deterministic
(fixed seed, Python 3 standard library only), so running it again rewrites the same bytes:

    python3 examples/data/generate_sample.py

Countries, capitals and cities come from world-cities.txt; users and hosts are made up.
"""
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
SEED = 20240101
ROOT = '<referenceData xmlns="reference-data:2" xmlns:evt="event-logging:3" version="2.0.1">'

# How different upstream pipelines spell each map name, with weights; Plan B lower-cases map names.
SPELLINGS = {
    "city_to_country": {"city_to_country": 6, "CITY_TO_COUNTRY": 3, "City_To_Country": 1},
    "country_to_capital": {"country_to_capital": 8, "COUNTRY_TO_CAPITAL": 2},
    "user_to_role": {"user_to_role": 7, "USER_TO_ROLE": 2, "User_To_Role": 1},
    "host_to_location": {"host_to_location": 8, "HOST_TO_LOCATION": 2},
}

# Names listed under more than one country in world-cities.txt: every country's record is written, the one
# named here last, so it is the value Plan B keeps (State maps: of records with the same effective time in one
# file, the last one wins).
WINNERS = {
    "Alexandria": "Egypt", "Athens": "Greece", "Bangor": "United Kingdom", "Barcelona": "Spain",
    "Birmingham": "United Kingdom", "Boston": "United States", "Brest": "France", "Burlington": "Canada",
    "Cambridge": "United Kingdom", "Cartagena": "Colombia", "Concepción": "Chile", "Córdoba": "Argentina",
    "Cuenca": "Ecuador", "Durango": "Mexico", "Durham": "United Kingdom", "Georgetown": "Guyana",
    "Granada": "Spain", "Guadalajara": "Mexico", "Halifax": "Canada", "Hamilton": "Canada",
    "Hyderabad": "India", "Kingston": "Jamaica", "La Paz": "Bolivia", "Lancaster": "United Kingdom",
    "León": "Mexico", "Lincoln": "United States", "London": "United Kingdom", "Manchester": "United Kingdom",
    "Mérida": "Mexico", "Newcastle": "Australia", "Newport": "United Kingdom", "Orange": "Australia",
    "Panama City": "Panama", "Paris": "France", "Perth": "United Kingdom",  # fixed by the update file
    "Portsmouth": "United Kingdom", "Richmond": "United States", "Salamanca": "Spain", "Salem": "India",
    "Santa Ana": "United States", "Santa Clara": "Cuba", "Santa Fe": "Argentina",
    "Santo Domingo": "Dominican Republic", "Scarborough": "United Kingdom", "St. John's": "Canada",
    "Syracuse": "Italy", "Toledo": "Spain", "Trinidad": "Bolivia", "Tripoli": "Libya", "Valencia": "Spain",
    "Victoria": "Canada", "Worcester": "United Kingdom",
}

ROLES = {"viewer": 45, "analyst": 20, "developer": 15, "operator": 10, "auditor": 6, "admin": 4}
FIRST_NAMES = ("James Mary John Patricia Robert Jennifer Michael Linda David Elizabeth William Barbara Richard Susan "
               "Joseph Jessica Thomas Sarah Priya Wei Mohammed Fatima Olga Kenji Aisha Carlos Lucia Ahmed Ingrid "
               "Nikolai Chloe Hiroshi Amara Zoltan Yusuf Emeka Sofia Raj Mei Pedro Greta Tariq Ewa Liam Noor").split()
SURNAMES = ("smith jones taylor brown williams wilson johnson davies robinson wright thompson evans walker white "
            "roberts green hall wood jackson clarke patel khan lewis james phillips mason mitchell rose davis "
            "garcia martinez rodriguez lopez gonzalez perez sanchez ramirez torres nguyen tran le pham kim lee "
            "park choi chen wang li zhang liu yang huang zhao wu muller schmidt schneider fischer weber meyer "
            "wagner becker hoffmann rossi russo ferrari esposito bianchi romano dubois martin bernard moreau "
            "laurent kowalski nowak wisniewski wojcik ivanov petrov sokolov popov novak svoboda horvath nagy "
            "silva santos oliveira souza costa pereira almeida okafor mensah diallo abubakar mwangi otieno "
            "haddad nasser cohen levi singh kumar sharma gupta reddy iyer tanaka suzuki takahashi watanabe sato "
            "yamamoto nakamura andersson johansson larsen hansen nielsen jensen virtanen korhonen murphy kelly "
            "obrien byrne walsh ryan macdonald campbell stewart fraser").split()
SERVICE_ACCOUNTS = ("svc_backup svc_monitoring svc_ci svc_deploy svc_etl svc_ldap_sync svc_reporting svc_scanner "
                    "svc_siem svc_patching svc_dns svc_mail").split()

# Host sites: code -> (ISO 3166 alpha-3 country, site, buildings).
SITES = {
    "lon": ("GBR", "London", ["B1", "B2", "DC1"]), "man": ("GBR", "Manchester", ["M1"]),
    "fra": ("DEU", "Frankfurt am Main", ["FR2", "FR4"]), "ams": ("NLD", "Amsterdam", ["AM3"]),
    "par": ("FRA", "Paris", ["PA1", "PA2"]), "dub": ("IRL", "Dublin", ["DB1"]),
    "zrh": ("CHE", "Zürich", ["ZH1"]), "waw": ("POL", "Warsaw", ["WA1"]), "sto": ("SWE", "Stockholm", ["ST1"]),
    "nyc": ("USA", "New York", ["NY5", "NY9"]), "iad": ("USA", "Ashburn", ["DC2", "DC6"]),
    "sfo": ("USA", "San Francisco", ["SF1"]), "chi": ("USA", "Chicago", ["CH1"]),
    "tor": ("CAN", "Toronto", ["TR1"]), "sao": ("BRA", "São Paulo", ["SP1"]), "sin": ("SGP", "Singapore", ["SG1"]),
    "tyo": ("JPN", "Tokyo", ["TY2", "TY8"]), "bom": ("IND", "Mumbai", ["MB1"]), "syd": ("AUS", "Sydney", ["SY4"]),
    "jnb": ("ZAF", "Johannesburg", ["JB1"]),
}
HOST_ROLES = {"web": 8, "app": 8, "db": 4, "cache": 3, "mq": 2, "lb": 2, "k8s-node": 6, "log": 2, "mail": 1,
              "dns": 1, "vpn": 1, "bastion": 1}
HOST_ENVS = {"prod": 6, "stage": 2, "dev": 2}

# Cities the update file adds (absent from world-cities.txt) and the capitals it corrects.
NEW_CITIES = {"Longyearbyen": "Norway", "Kirkenes": "Norway", "Hallstatt": "Austria", "Savonlinna": "Finland",
              "Zermatt": "Switzerland"}
CAPITAL_FIXES = {"Sri Lanka": "Sri Jayawardenepura Kotte", "Côte d'Ivoire": "Yamoussoukro"}

rng = random.Random(SEED)


def pick(weights):
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def timestamp(start, days):
    t = start + timedelta(milliseconds=rng.randrange(days * 86_400_000))
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def read_world():
    """Returns ([(country, capital)], [(city, country)]) in file order."""
    countries, cities, current = [], [], None
    for line in (HERE / "world-cities.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(" "):
            names = line
        else:
            country, capital, names = (part.strip() for part in line.split("|"))
            current = country
            countries.append((country, capital))
            cities.append((capital, country))
        cities += [(name.strip(), current) for name in names.split(",") if name.strip()]
    return countries, cities


def city_records(cities):
    """Records for city_to_country: unique names shuffled, then each shared name with its winner last."""
    by_name = {}
    for city, country in cities:
        if country not in by_name.setdefault(city, []):
            by_name[city].append(country)
    shared = {name: countries for name, countries in by_name.items() if len(countries) > 1}
    missing = sorted(set(shared) - set(WINNERS)) + sorted(set(WINNERS) - set(shared))
    if missing:
        sys.exit(f"WINNERS does not match the names shared by several countries: {missing}")
    single = [(name, countries[0]) for name, countries in by_name.items() if len(countries) == 1]
    rng.shuffle(single)
    out = [("city_to_country", name, country) for name, country in single]
    out.append("Names found in several countries: the last record for a key wins.")
    for name, countries in shared.items():
        ordered = [c for c in countries if c != WINNERS[name]] + [WINNERS[name]]
        out += [("city_to_country", name, country) for country in ordered]
    return out


def user_id():
    first, last = rng.choice(FIRST_NAMES), rng.choice(SURNAMES)
    style = rng.random()
    if style < 0.55:
        return f"{first[0].lower()}{last}{rng.randrange(1, 100)}"
    return f"{first[0].lower()}{last}" if style < 0.85 else f"{first.lower()}.{last}"


def add_users(users, count):
    while len(users) < count:
        users.setdefault(user_id(), pick(ROLES))
    return users


def make_hosts(count):
    hosts = {"web-prod-001.lon.example.net": ("lon", "B2", "2.14")}  # the demo looks this one up
    while len(hosts) < count:
        site = rng.choice(list(SITES))
        name = f"{pick(HOST_ROLES)}-{pick(HOST_ENVS)}-{rng.randrange(1, 64):03d}.{site}.example.net"
        hosts.setdefault(name, (site, rng.choice(SITES[site][2]), room()))
    return hosts


def room():
    return f"{rng.randrange(0, 6)}.{rng.randrange(1, 30):02d}"


def location(site, building, room):
    country, place = SITES[site][:2]
    return (f"<evt:Location><evt:Country>{country}</evt:Country><evt:Site>{escape(place)}</evt:Site>"
            f"<evt:Building>{building}</evt:Building><evt:Room>{room}</evt:Room></evt:Location>")


def write(name, heading, records, time_share, start):
    """Writes records: (map, key, value[, is_xml]) tuples, or strings for comments. Some get a <time>."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<!-- {heading} -->", ROOT]
    for record in records:
        if isinstance(record, str):
            lines.append(f"  <!-- {record} -->")
            continue
        map_name, key, value, is_xml = (record + (False,))[:4]
        lines += ["  <reference>", f"    <map>{pick(SPELLINGS[map_name])}</map>"]
        if rng.random() < time_share.get(map_name, 0):
            lines.append(f"    <time>{timestamp(*start)}</time>")
        lines.append(f"    <key>{escape(key)}</key>")
        lines.append(f"    <value>{value if is_xml else escape(value)}</value>")
        lines.append("  </reference>")
    lines.append("</referenceData>")
    (HERE / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    count = sum(1 for r in records if not isinstance(r, str))
    print(f"{name}: {count} records, {(HERE / name).stat().st_size // 1024} KiB")


def main():
    countries, cities = read_world()
    users = {"jsmith42": "analyst"}  # the demo looks this one up
    users.update((account, "operator") for account in SERVICE_ACCOUNTS)
    users, hosts = add_users(users, 2000), make_hosts(500)
    records = ["Countries and their capitals."]
    records += [("country_to_capital", country, capital) for country, capital in countries]
    records += ["Cities and their countries."] + city_records(cities)
    records += ["User ids and their roles."] + [("user_to_role", u, r) for u, r in users.items()]
    records += ["Hosts and where they are: XML values in the event-logging:3 namespace."]
    records += [("host_to_location", h, location(*where), True) for h, where in hosts.items()]
    first_half_2024 = (datetime(2024, 1, 1, tzinfo=timezone.utc), 181)
    write("reference-data.xml", "Plan B sample reference data, written by generate_sample.py. Do not edit.",
          records, {"user_to_role": 0.15, "host_to_location": 0.2, "country_to_capital": 0.3}, first_half_2024)

    # The update: a later stream that changes some keys and adds others.
    known = {city for city, _ in cities}
    assert not set(NEW_CITIES) & known, "NEW_CITIES must be new"
    changed_users = ["jsmith42"] + rng.sample(sorted(set(users) - {"jsmith42"} - set(SERVICE_ACCOUNTS)), 19)
    moved_hosts = rng.sample(sorted(set(hosts) - {"web-prod-001.lon.example.net"}), 8)
    update = ["Corrections: a city and two capitals."]
    update += [("city_to_country", "Perth", "Australia")]
    update += [("country_to_capital", country, capital) for country, capital in CAPITAL_FIXES.items()]
    update += ["Role changes."]
    for user in changed_users:
        update.append(("user_to_role", user, "admin" if user == "jsmith42" else
                       rng.choice([r for r in ROLES if r != users[user]])))
    update += ["Hosts that moved."]
    for host in moved_hosts:
        site = host.split(".")[1]
        update.append(("host_to_location", host, location(site, rng.choice(SITES[site][2]), room()), True))
    update += ["New keys."] + [("city_to_country", c, k) for c, k in NEW_CITIES.items()]
    new_users = add_users(dict(users), len(users) + 6)
    update += [("user_to_role", u, r) for u, r in new_users.items() if u not in users]
    new_hosts = [f"k8s-node-prod-{n:03d}.{site}.example.net" for site in ("lon", "fra", "iad") for n in (64, 65)]
    update += [("host_to_location", h, location(h.split(".")[1], SITES[h.split(".")[1]][2][0], "1.20"), True)
               for h in new_hosts]
    write("reference-data-update.xml", "Plan B sample update: load after reference-data.xml. Written by "
          "generate_sample.py. Do not edit.", update, {m: 1.0 for m in SPELLINGS},
          (datetime(2024, 7, 1, tzinfo=timezone.utc), 14))


if __name__ == "__main__":
    main()
