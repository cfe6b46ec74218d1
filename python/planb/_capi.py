"""The C API of planb/reader_c.h as ctypes declarations, and the error type its codes raise."""
import ctypes

from planb import _library

# planb_code_t (planb/reader_c.h)
OK, NOT_FOUND, INVALID_ARGUMENT, CORRUPTION, IO_ERROR, NOT_SUPPORTED, FULL, INTERNAL, PERMISSION_DENIED, NO_DATA = \
    range(10)
VALUE_JSON = 3  # planb_result_t.value_type of a JSON value
CODE_NAMES = ["OK", "NOT_FOUND", "INVALID_ARGUMENT", "CORRUPTION", "IO_ERROR", "NOT_SUPPORTED", "FULL", "INTERNAL",
              "PERMISSION_DENIED", "NO_DATA"]


class Error(Exception):
    """A Plan B error: `code` is the planb_code_t, `message` what the library said."""

    def __init__(self, code, message):
        name = CODE_NAMES[code] if 0 <= code < len(CODE_NAMES) else f"code {code}"
        super().__init__(f"{name}: {message}")
        self.code = code
        self.message = message


class Result(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("value", ctypes.c_void_p), ("value_len", ctypes.c_size_t),
                ("session_start_ms", ctypes.c_int64), ("session_end_ms", ctypes.c_int64),
                ("error", ctypes.c_char_p), ("value_type", ctypes.c_int)]


class Key(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("key_len", ctypes.c_size_t), ("number", ctypes.c_int64),
                ("has_time", ctypes.c_int), ("time_ms", ctypes.c_int64)]


class MapInfoC(ctypes.Structure):
    _fields_ = [("number_keys", ctypes.c_int), ("uses_time", ctypes.c_int), ("has_value", ctypes.c_int),
                ("has_session", ctypes.c_int)]


class MapStatsC(ctypes.Structure):
    _fields_ = [("map", ctypes.c_char_p), ("lookups", ctypes.c_uint64), ("found", ctypes.c_uint64),
                ("misses", ctypes.c_uint64), ("errors", ctypes.c_uint64), ("serving", ctypes.c_int),
                ("reads_snapshot", ctypes.c_int), ("has_content_version", ctypes.c_int),
                ("content_version", ctypes.c_uint64), ("has_snapshot_created", ctypes.c_int),
                ("snapshot_created_ms", ctypes.c_int64), ("refreshes", ctypes.c_uint64),
                ("refresh_failures", ctypes.c_uint64)]


_lib = None


def lib():
    """The loaded library with its functions declared (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    c = _library.load()
    vp, cp, sz, i64p = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64)
    c.planb_reader_options_create.restype = vp
    c.planb_reader_options_create.argtypes = []
    c.planb_reader_options_destroy.argtypes = [vp]
    for name in ("planb_reader_options_set_config", "planb_reader_options_set_home",
                 "planb_reader_options_add_plugin_dir"):
        getattr(c, name).argtypes = [vp, cp, sz]
    c.planb_reader_options_set_maintenance_interval_ms.argtypes = [vp, ctypes.c_int64]
    c.planb_reader_options_set_remote.argtypes = [vp, ctypes.c_int]
    c.planb_reader_options_set_remote_connections.argtypes = [vp, sz]
    c.planb_reader_open.restype = vp
    c.planb_reader_open.argtypes = [vp, cp, sz]
    c.planb_reader_close.argtypes = [vp]
    c.planb_reader_lookup.argtypes = [vp, cp, sz, cp, sz, i64p, ctypes.POINTER(Result)]
    c.planb_reader_lookup_number.argtypes = [vp, cp, sz, ctypes.c_int64, i64p, ctypes.POINTER(Result)]
    c.planb_reader_lookup_many.argtypes = [vp, cp, sz, ctypes.POINTER(Key), sz, ctypes.POINTER(Result)]
    for name in ("planb_reader_prepare", "planb_reader_refresh"):
        getattr(c, name).argtypes = [vp, cp, sz, cp, sz]
    c.planb_reader_maintain.argtypes = [vp, cp, sz]
    c.planb_reader_describe.argtypes = [vp, cp, sz, ctypes.POINTER(MapInfoC), cp, sz]
    c.planb_reader_stats.argtypes = [vp, ctypes.POINTER(MapStatsC), sz, ctypes.POINTER(sz),
                                     ctypes.POINTER(ctypes.c_uint64)]
    c.planb_parse_time.argtypes = [cp, sz, i64p]
    for name in ("planb_reader_lookup", "planb_reader_lookup_number", "planb_reader_lookup_many",
                 "planb_reader_prepare", "planb_reader_refresh", "planb_reader_maintain", "planb_reader_describe",
                 "planb_reader_stats", "planb_parse_time"):
        getattr(c, name).restype = ctypes.c_int
    _lib = c
    return c
