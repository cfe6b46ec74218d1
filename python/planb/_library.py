"""Finds and loads libplanb_reader.so: PLANB_LIBRARY_PATH (a file, or a directory holding the library), then
the directory the planb package installed it in (recorded in _installed.py at install time), then the dynamic
loader's own search path."""
import ctypes
import os

LIBRARY_NAME = "libplanb_reader.so"


def _candidates():
    given = os.environ.get("PLANB_LIBRARY_PATH", "")
    if given:
        # Only what the user named: a wrong path must not fall back silently to another copy.
        yield os.path.join(given, LIBRARY_NAME) if os.path.isdir(given) else given
        return
    try:
        from planb import _installed  # written by the package build (packaging/CMakeLists.txt)
        yield os.path.join(_installed.LIBRARY_DIR, LIBRARY_NAME)
    except ImportError:
        pass
    yield LIBRARY_NAME  # the loader's search path (LD_LIBRARY_PATH, ld.so.cache)


def load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            tried.append(f"{path}: {error}")
    raise OSError("planb: cannot load " + LIBRARY_NAME + " (set PLANB_LIBRARY_PATH to the file or its "
                  "directory); tried " + "; ".join(tried))
