"""Drives planb/reader_c.h from Python through ctypes: reader_ctypes.py LIBRARY CONFIG HOME. Prints what
reader_c_test.cc compares with `planb lookup`. Exits 1 on the first unexpected outcome."""
import ctypes
import sys


class Result(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("value", ctypes.c_void_p), ("value_len", ctypes.c_size_t),
                ("session_start_ms", ctypes.c_int64), ("session_end_ms", ctypes.c_int64),
                ("error", ctypes.c_char_p), ("value_type", ctypes.c_int)]


class Key(ctypes.Structure):
    _fields_ = [("key", ctypes.c_char_p), ("key_len", ctypes.c_size_t), ("number", ctypes.c_int64),
                ("has_time", ctypes.c_int), ("time_ms", ctypes.c_int64)]


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.planb_reader_options_create.restype = ctypes.c_void_p
    lib.planb_reader_options_set_config.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.planb_reader_options_set_home.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.planb_reader_options_destroy.argtypes = [ctypes.c_void_p]
    lib.planb_reader_open.restype = ctypes.c_void_p
    lib.planb_reader_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.planb_reader_close.argtypes = [ctypes.c_void_p]
    lib.planb_reader_lookup.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                        ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(Result)]
    lib.planb_reader_lookup_many.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                             ctypes.POINTER(Key), ctypes.c_size_t, ctypes.POINTER(Result)]
    lib.planb_parse_time.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64)]

    options = lib.planb_reader_options_create()
    config, home = sys.argv[2].encode(), sys.argv[3].encode()
    lib.planb_reader_options_set_config(options, config, len(config))
    lib.planb_reader_options_set_home(options, home, len(home))
    error = ctypes.create_string_buffer(512)
    reader = lib.planb_reader_open(options, error, len(error))
    lib.planb_reader_options_destroy(options)
    if not reader:
        print("open:", error.value.decode())
        return 1

    def show(label, code, r):
        if code == 0 and r.value:
            print(f"{label}: {code} {ctypes.string_at(r.value, r.value_len).decode()}")
        elif code == 0:
            print(f"{label}: {code} session {r.session_start_ms} {r.session_end_ms}")
        else:
            print(f"{label}: {code} {r.error.decode()}")

    r = Result()
    for label, map_name, key in [("text", b"country_to_capital", b"Japan"),
                                 ("miss", b"city_to_country", b"Atlantis")]:
        show(label, lib.planb_reader_lookup(reader, map_name, len(map_name), key, len(key), None, ctypes.byref(r)), r)
    at = ctypes.c_int64()
    when = b"2024-01-01T09:10:00Z"
    assert lib.planb_parse_time(when, len(when), ctypes.byref(at)) == 0
    m, k = b"user_app_sessions", b"alice_payroll"
    show("session", lib.planb_reader_lookup(reader, m, len(m), k, len(k), ctypes.byref(at), ctypes.byref(r)), r)

    words = [b"Japan", b"Atlantis", b"Albania"]
    keys = (Key * 3)(*[Key(w, len(w), 0, 0, 0) for w in words])
    results = (Result * 3)()
    m = b"country_to_capital"
    print("many:", lib.planb_reader_lookup_many(reader, m, len(m), keys, 3, results))
    for result in results:
        show("many", result.code, result)
    m = b"no_such_map"
    show("unknown map", lib.planb_reader_lookup(reader, m, len(m), b"k", 1, None, ctypes.byref(r)), r)
    lib.planb_reader_close(reader)
    return 0


if __name__ == "__main__":
    sys.exit(main())
