#!/usr/bin/python3
"""Drives the planb Python module (python/planb) for python_module_test.cc:
  planb_module_check.py SOURCE_DIR LIBRARY_PATH CONFIG HOME
reads queries "MAP<TAB>KEY<TAB>TIME" from stdin (TIME "" = now; KEY "#N" = the number N) and prints one answer
per line as `planb lookup` would ("<miss>" for None; sessions "session START_MS END_MS"), then lookup_many of all
the queries of the first map, then the errors, each as "NAME: code CODE message". Exits 1 on anything else."""
import os
import sys


def main():
    source_dir, library, config, home = sys.argv[1:5]
    os.environ["PLANB_LIBRARY_PATH"] = library
    sys.path.insert(0, os.path.join(source_dir, "python"))
    import planb

    def show(answer):
        if answer is None:
            return "<miss>"
        if isinstance(answer, planb.Session):
            return f"session {answer.start_ms} {answer.end_ms}"
        return answer

    queries = []
    with planb.Reader(config=config, home=home, maintenance_interval_ms=0) as reader:
        for line in sys.stdin.read().splitlines():
            map_name, key, time = line.split("\t")
            key = int(key[1:]) if key.startswith("#") else key
            queries.append((map_name, key, time or None))
            print(show(reader.lookup(map_name, key, time=time or None)))
        first = queries[0][0]
        same = [q for q in queries if q[0] == first and q[2] is None]
        print("many:", [show(a) for a in reader.lookup_many(first, [q[1] for q in same])])
        print("describe:", tuple(reader.describe("user_app_sessions")))

        def error(name, call):
            try:
                call()
            except planb.Error as e:
                print(f"{name}: code {e.code} {e.message}")
                return
            except (TypeError, ValueError) as e:
                print(f"{name}: {type(e).__name__} {e}")
                return
            print(f"{name}: no error")

        error("unknown map", lambda: reader.lookup("no_such_map", "k"))
        error("text key on a number map", lambda: reader.lookup("employeeidtooffice", "1555"))
        error("time on a map without time", lambda: reader.lookup("country_to_capital", "Japan", time=0))
        error("bad time text", lambda: reader.lookup("user_to_department", "alice", time="yesterday"))
        error("naive datetime", lambda: reader.lookup("user_to_department", "alice",
                                                      time=__import__("datetime").datetime(2024, 1, 1)))
        error("key of another type", lambda: reader.lookup("country_to_capital", 3.5))
        stats = reader.stats()
        print("stats:", sorted(stats)[:2], stats["country_to_capital"]["found"] > 0,
              stats["country_to_capital"]["content_version"])
    try:
        reader.lookup("country_to_capital", "Japan")
    except ValueError as e:
        print("closed:", e)
    try:
        planb.Reader(config=os.path.join(os.path.dirname(config), "missing.ini"))
    except planb.Error as e:
        print(f"open missing config: code {e.code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
