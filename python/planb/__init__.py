"""Plan B's Reader for Python: in-process lookups of Plan B maps through libplanb_reader.so's C API (ctypes, no
compiled extension).

    import planb
    with planb.Reader(config="/etc/planb/planb.ini") as reader:
        reader.lookup("city_to_country", "Cardiff")          # 'Wales', or None for a miss
        reader.lookup("geo", "10.1.2.3")                      # ranged maps with key_format = ipv4 / ip
        reader.lookup("user_to_role", "alice", time="2024-01-01T00:00:00Z")   # or milliseconds since the epoch
        reader.lookup_many("city_to_country", ["Cardiff", "Atlantis"])        # ['Wales', None]

The library is found through PLANB_LIBRARY_PATH (the file, or a directory holding it), then where the planb
package installed it, then the dynamic loader's search path. Errors raise planb.Error, whose `code` is the C
API's planb_code_t (planb.NO_DATA, planb.INVALID_ARGUMENT, ...). See docs/python.md.
"""
from planb._capi import (CORRUPTION, FULL, INTERNAL, INVALID_ARGUMENT, IO_ERROR, NO_DATA, NOT_FOUND,
                         NOT_SUPPORTED, OK, PERMISSION_DENIED, Error)
from planb.reader import MapInfo, Reader, Session, parse_time

__all__ = ["Reader", "Error", "MapInfo", "Session", "parse_time", "OK", "NOT_FOUND", "INVALID_ARGUMENT",
           "CORRUPTION", "IO_ERROR", "NOT_SUPPORTED", "FULL", "INTERNAL", "PERMISSION_DENIED", "NO_DATA"]
