# SPDX-License-Identifier: MIT
"""The compiled flag helper, gdrmap._fastflag (_fastflag.c), when there
is one: Mapping's load_u32/u64 and store_u32/u64 go through it at a few
tens of nanoseconds of Python each, where ctypes costs 1 to 1.5 us.

It is optional.  The wheel `pip install` builds and the Debian package
have it beside these modules; a package built without a C compiler or
Python's headers has not, nor has a run from the source tree before
`make` (which builds it into build/python/gdrmap/).  Without it every
flag goes through ctypes, as before, with the same results and errors.

Which one is used, in this order:
  $GDRMAP_FASTFLAG=0            none (ctypes);
  $GDRMAP_FASTFLAG=PATH         that file (an error if it cannot load);
  gdrmap/_fastflag*.so          installed with the package;
  O/python/gdrmap/_fastflag*.so where $GDRMAP_LIBRARY is O/lib/...: the
                                build (`make O=...`) that made the
                                library in use;
  build/python/gdrmap/_fastflag*.so  of the gdrmap tree the package runs
                                from (as the library, _lib.py).
Without one, each bulk copy pays several microseconds more of ctypes (on
an H200's host, 6-11 us a DMA-sized Mapping.readinto, against 1.4-2.1).
"""

import ctypes
import errno
import importlib.machinery
import importlib.util
import os
import sys
import threading
import weakref

from .errors import GdrmapError

ENV = "GDRMAP_FASTFLAG"
NAME = "gdrmap._fastflag"

_lock = threading.Lock()
_loaded = False
_module = None
_path = None


def _usable_suffixes():
    """The extension suffixes this interpreter loads, but an abi3 build
    (made for 3.11, the oldest with everything it uses) only from 3.11."""
    return [s for s in importlib.machinery.EXTENSION_SUFFIXES
            if ".abi3" not in s or sys.version_info >= (3, 11)]


def _from_file(path):
    loader = importlib.machinery.ExtensionFileLoader(NAME, path)
    spec = importlib.util.spec_from_file_location(NAME, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _find(where):
    """The helper in directory where that this Python can load, or None."""
    for suffix in _usable_suffixes():
        path = os.path.join(where, "_fastflag" + suffix)
        if os.path.isfile(path):
            return path
    return None


def _tree_helper():
    """The helper `make` built in the gdrmap tree this package runs from,
    or None."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    if not os.path.isfile(os.path.join(top, "include", "gdrapi.h")):
        return None
    return _find(os.path.join(top, "build", "python", "gdrmap"))


def _library_build_helper():
    """The helper of the build whose library $GDRMAP_LIBRARY names
    (O/lib/libgdrapi.so.2 -> O/python/gdrmap/), or None: `make O=DIR`
    builds both there, and a run that points at the one wants the
    other."""
    lib = os.environ.get("GDRMAP_LIBRARY")
    if not lib:
        return None
    where = os.path.dirname(os.path.realpath(lib))
    if os.path.basename(where) != "lib":
        return None		# not a build's lib/ (a test's mock library)
    return _find(os.path.join(os.path.dirname(where), "python", "gdrmap"))


def _load():
    env = os.environ.get(ENV)
    if env == "0":
        return None, None
    if env:
        try:
            return _from_file(env), os.path.realpath(env)
        except (ImportError, OSError) as e:
            raise GdrmapError(
                errno.ENOENT, "%s=%s cannot be used: %s: set it to the path "
                "of gdrmap's _fastflag helper, to 0 for none, or unset it"
                % (ENV, env, e), "load") from None
    for path in (_find(os.path.dirname(os.path.abspath(__file__))),
                 _library_build_helper(), _tree_helper()):
        if path:
            try:
                return _from_file(path), os.path.realpath(path)
            except (ImportError, OSError):
                pass		# built for another Python: ctypes then
    return None, None


def helper():
    """The helper module, or None (loaded on first use)."""
    global _loaded, _module, _path
    with _lock:
        if not _loaded:
            _module, _path = _load()
            _loaded = True
        return _module


def path():
    """The file of the helper in use, or None."""
    helper()
    return _path


# Mapping types (gdr_mapping_type_t) whose CPU accesses the helper's
# match: write-combined, cached coherent, device.  Copy-only pins (type
# 0) are read and written by the library's DMA, never by the CPU.
CPU_MAPPED = (1, 2, 3)


def _fallback(ref, method):
    """method(mapping, ...) for the Window of the Mapping ref points to,
    without a reference to it (the Mapping holds the Window)."""
    def call(*args, **kwargs):
        mapping = ref()
        if mapping is None:
            raise ValueError("the Mapping is closed")
        return method(mapping, *args, **kwargs)
    call.__name__ = method.__name__
    return call


# _fastflag.bulk's answer for a copy that must run without the GIL.
NEEDS_RELEASE = -1000


def bulk(lib):
    """(_fastflag.bulk, (address of gdrmap_copy_from_mapping, of
    gdrmap_copy_to_mapping), (the same of their _via forms, or None)) for
    Mapping's bulk copies, or None without a helper or with a library that
    has no gdrmap_copy_* (GDRCopy's)."""
    fast = helper()
    if fast is None or not hasattr(fast, "bulk") or \
            lib.bulk_to != "gdrmap_copy_to_mapping" or \
            lib.bulk_from != "gdrmap_copy_from_mapping":
        return None
    try:
        fns = (ctypes.cast(getattr(lib, lib.bulk_from), ctypes.c_void_p).value,
               ctypes.cast(getattr(lib, lib.bulk_to), ctypes.c_void_p).value)
        vias = tuple(
            ctypes.cast(f, ctypes.c_void_p).value if f is not None else None
            for f in (lib.gdrmap_copy_from_mapping_via,
                      lib.gdrmap_copy_to_mapping_via))
    except (AttributeError, TypeError):
        return None
    if not all(fns):
        return None
    return fast.bulk, fns, vias if all(vias) else None


def window(mapping, pin, methods):
    """A Window over pin's mapped range, serving mapping's flags (the
    Python methods in `methods`, the ctypes path, serve what it does
    not), or None where there is no helper or the pin is not CPU
    mapped."""
    fast = helper()
    if fast is None or pin.type_code not in CPU_MAPPED:
        return None
    ref = weakref.ref(mapping)
    return fast.Window(pin.cpu, pin.src.size, bool(pin.src.readonly),
                       tuple(_fallback(ref, m) for m in methods))
