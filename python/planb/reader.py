"""planb.Reader: a Python face on planb_reader_t (planb/reader_c.h). Answers are copied out of the library at
once, so they stay valid whatever the thread does next; the library itself is safe to call from any thread."""
import collections
import ctypes
import datetime
import json

from planb import _capi
from planb._capi import Error

Session = collections.namedtuple("Session", ["start_ms", "end_ms"])
MapInfo = collections.namedtuple("MapInfo", ["number_keys", "uses_time", "has_value", "has_session"])


def _bytes(text, what):
    if isinstance(text, bytes):
        return text
    if isinstance(text, str):
        return text.encode("utf-8")
    raise TypeError(f"planb: {what} must be str or bytes, not {type(text).__name__}")


def parse_time(text):
    """ISO-8601 text (as `planb lookup --time` reads it) to milliseconds since the epoch; planb.Error if it is
    not such a time."""
    data = _bytes(text, "a time")
    ms = ctypes.c_int64()
    code = _capi.lib().planb_parse_time(data, len(data), ctypes.byref(ms))
    if code != _capi.OK:
        raise Error(code, f"not an ISO-8601 time: {data[:64]!r}")
    return ms.value


def _time_ms(time):
    """None (now), milliseconds since the epoch (int), ISO-8601 text, or an aware datetime."""
    if time is None:
        return None
    if isinstance(time, bool):
        raise TypeError("planb: a time must be None, int milliseconds, ISO-8601 text or a datetime, not bool")
    if isinstance(time, int):
        return time
    if isinstance(time, (str, bytes)):
        return parse_time(time)
    if isinstance(time, datetime.datetime):
        if time.tzinfo is None:
            raise ValueError("planb: a naive datetime has no instant; give it a tzinfo (e.g. timezone.utc)")
        delta = time - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000
    raise TypeError(f"planb: a time must be None, int milliseconds, ISO-8601 text or a datetime, "
                    f"not {type(time).__name__}")


class Reader:
    """Opens the config's maps (Reader::Open): `config` (path; None: ./planb.ini when present), `home` (None: the
    config's), `plugin_dirs`, `maintenance_interval_ms` (0: call maintain() yourself); `remote` True asks the
    config's storage nodes for every lookup over kept-open connections, at most `remote_connections` sets of them
    (docs/snapshots.md, "Remote mode")."""

    def __init__(self, config=None, home=None, plugin_dirs=(), maintenance_interval_ms=1000, remote=False,
                 remote_connections=4):
        self._handle = None  # first: __del__ runs even when loading the library below fails
        self._infos = {}
        self._lib = _capi.lib()
        options = self._lib.planb_reader_options_create()
        if not options:
            raise MemoryError("planb: planb_reader_options_create failed")
        try:
            if config is not None:
                data = _bytes(str(config), "config")
                self._lib.planb_reader_options_set_config(options, data, len(data))
            if home is not None:
                data = _bytes(str(home), "home")
                self._lib.planb_reader_options_set_home(options, data, len(data))
            for directory in plugin_dirs:
                data = _bytes(str(directory), "a plugin directory")
                self._lib.planb_reader_options_add_plugin_dir(options, data, len(data))
            self._lib.planb_reader_options_set_maintenance_interval_ms(options, int(maintenance_interval_ms))
            self._lib.planb_reader_options_set_remote(options, 1 if remote else 0)
            self._lib.planb_reader_options_set_remote_connections(options, int(remote_connections))
            error = ctypes.create_string_buffer(1024)
            handle = self._lib.planb_reader_open(options, error, len(error))
        finally:
            self._lib.planb_reader_options_destroy(options)
        if not handle:
            # The C API gives no code for a failed open: the config, the plugins or the home (kInvalidArgument).
            raise Error(_capi.INVALID_ARGUMENT, error.value.decode("utf-8", "replace"))
        self._handle = handle

    def close(self):
        """Closes the reader (also on garbage collection and at the end of a `with` block)."""
        if self._handle:
            self._lib.planb_reader_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _open_handle(self):
        if not self._handle:
            raise ValueError("planb: the Reader is closed")
        return self._handle

    def describe(self, map_name):
        """How `map_name` is looked up: MapInfo(number_keys, uses_time, has_value, has_session)."""
        info = self._infos.get(map_name)
        if info is not None:
            return info
        data = _bytes(map_name, "a map name")
        c = _capi.MapInfoC()
        error = ctypes.create_string_buffer(1024)
        code = self._lib.planb_reader_describe(self._open_handle(), data, len(data), ctypes.byref(c), error,
                                               len(error))
        if code != _capi.OK:
            raise Error(code, error.value.decode("utf-8", "replace"))
        info = MapInfo(bool(c.number_keys), bool(c.uses_time), bool(c.has_value), bool(c.has_session))
        self._infos[map_name] = info
        return info

    @staticmethod
    def _answer(result, info):
        if result.code == _capi.NOT_FOUND:
            return None
        if result.code != _capi.OK:
            raise Error(result.code, (result.error or b"").decode("utf-8", "replace"))
        if info.has_session:
            return Session(result.session_start_ms, result.session_end_ms)
        if info.has_value:
            text = ctypes.string_at(result.value, result.value_len).decode("utf-8", "surrogateescape")
            # A JSON value comes back as the Python object it is (a dict, a list, a number...).
            return json.loads(text) if result.value_type == _capi.VALUE_JSON else text
        return True  # found, in a type whose answers are fields of its own (not in the C API yet)

    def lookup(self, map_name, key, time=None):
        """The value of `key` in `map_name` (a str; a Session for session maps), or None for a miss. `key` is
        str or bytes, or an int for number-keyed (ranged) maps; `time` (maps with time): None (now), int ms,
        ISO-8601 text or an aware datetime. Raises planb.Error for anything but found or a miss."""
        info = self.describe(map_name)
        data = _bytes(map_name, "a map name")
        at = _time_ms(time)
        at_ptr = ctypes.byref(ctypes.c_int64(at)) if at is not None else None
        result = _capi.Result()
        if info.number_keys:
            if not isinstance(key, int) or isinstance(key, bool):
                raise TypeError(f"planb: map {map_name} is keyed by numbers: give an int, not {type(key).__name__}")
            self._lib.planb_reader_lookup_number(self._open_handle(), data, len(data), key, at_ptr,
                                                 ctypes.byref(result))
        else:
            text = _bytes(key, f"a key of map {map_name}")
            self._lib.planb_reader_lookup(self._open_handle(), data, len(data), text, len(text), at_ptr,
                                          ctypes.byref(result))
        return self._answer(result, info)

    def lookup_many(self, map_name, keys, time=None):
        """Many keys of one map in one read transaction: a list answering keys[i] as lookup() would (None for
        a miss). `time` applies to every key. An error in any key raises planb.Error."""
        info = self.describe(map_name)
        data = _bytes(map_name, "a map name")
        keys = list(keys)
        at = _time_ms(time)
        c_keys = (_capi.Key * len(keys))()
        held = []  # the bytes objects the Key structs point into, alive for the call
        for i, key in enumerate(keys):
            if info.number_keys:
                if not isinstance(key, int) or isinstance(key, bool):
                    raise TypeError(f"planb: map {map_name} is keyed by numbers: key {i} is {type(key).__name__}")
                c_keys[i] = _capi.Key(None, 0, key, 0 if at is None else 1, at or 0)
            else:
                text = _bytes(key, f"key {i} of map {map_name}")
                held.append(text)
                c_keys[i] = _capi.Key(text, len(text), 0, 0 if at is None else 1, at or 0)
        results = (_capi.Result * len(keys))()
        if keys:
            self._lib.planb_reader_lookup_many(self._open_handle(), data, len(data), c_keys, len(keys), results)
        return [self._answer(r, info) for r in results]

    def _call(self, function, *args):
        error = ctypes.create_string_buffer(1024)
        code = function(self._open_handle(), *args, error, len(error))
        if code != _capi.OK:
            raise Error(code, error.value.decode("utf-8", "replace"))

    def prepare(self, map_name):
        """Opens `map_name` now (fetching its snapshot if this node needs one)."""
        data = _bytes(map_name, "a map name")
        self._call(self._lib.planb_reader_prepare, data, len(data))

    def refresh(self, map_name):
        """Fetches a newer snapshot of `map_name` now (read-your-writes after a load)."""
        data = _bytes(map_name, "a map name")
        self._call(self._lib.planb_reader_refresh, data, len(data))

    def maintain(self):
        """One maintenance pass (when maintenance_interval_ms is 0)."""
        self._call(self._lib.planb_reader_maintain)

    def stats(self):
        """Per map figures (Reader::Stats): a dict by map name of lookups, found, misses, errors, serving,
        reads_snapshot, content_version (None when not serving), snapshot_created_ms (None for a shard),
        refreshes, refresh_failures."""
        count = ctypes.c_size_t()
        self._lib.planb_reader_stats(self._open_handle(), None, 0, ctypes.byref(count), None)
        entries = (_capi.MapStatsC * count.value)()
        unknown = ctypes.c_uint64()
        code = self._lib.planb_reader_stats(self._open_handle(), entries, count.value, ctypes.byref(count),
                                            ctypes.byref(unknown))
        if code != _capi.OK:
            raise Error(code, "planb_reader_stats failed")
        out = {}
        for e in entries[:count.value]:
            out[e.map.decode("utf-8")] = {
                "lookups": e.lookups, "found": e.found, "misses": e.misses, "errors": e.errors,
                "serving": bool(e.serving), "reads_snapshot": bool(e.reads_snapshot),
                "content_version": e.content_version if e.has_content_version else None,
                "snapshot_created_ms": e.snapshot_created_ms if e.has_snapshot_created else None,
                "refreshes": e.refreshes, "refresh_failures": e.refresh_failures}
        return out
