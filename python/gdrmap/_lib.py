# SPDX-License-Identifier: MIT
"""libgdrapi.so.2 through ctypes: where it is, its functions, and the one
library instance (gdr_t) this process shares.

One gdr_t per process, opened on first use and shared by every Mapping:
gdrmap_open (gdr_open in GDRCopy's library) chooses and sets up a backend (it probes /dev/gdrdrv, CUDA
dma-bufs and Vulkan; the Vulkan set-up alone takes milliseconds), the
library is thread-safe, and the vulkan backend shares one import of an
allocation between the pins of one instance.  Opening one per Mapping
would pay the set-up each time and import the same allocation again.
Its only cost: gdr_close would unpin every Mapping, so it is closed only
at interpreter exit, after every Mapping still open has been closed.
"""

import atexit
import ctypes
import errno
import os
import threading
from ctypes import (POINTER, c_char_p, c_int, c_size_t, c_uint, c_uint32,
                    c_uint64, c_ulong, c_void_p)

from .errors import GdrmapError, library_error

LIBRARY_ENV = "GDRMAP_LIBRARY"
SONAME = "libgdrapi.so.2"
BACKENDS = {1: "gdrdrv", 2: "dmabuf", 3: "vulkan", 4: "rm"}
GDRMAP_ATTR_BACKEND = 0x10001


class GdrInfo(ctypes.Structure):
    """gdr_info_v2_t."""
    _fields_ = [
        ("va", c_uint64),
        ("mapped_size", c_uint64),
        ("page_size", c_uint32),
        ("tm_cycles", c_uint64),
        ("cycles_per_ms", c_uint32),
        ("mapped", c_uint, 1),
        ("wc_mapping", c_uint, 1),
        ("mapping_type", c_int),
    ]


# gdr_mh_t is struct { unsigned long h; }, passed by value.  On x86-64
# (SysV) and arm64 (AAPCS64) a struct of one 8-byte integer travels in the
# register an unsigned long would, so c_ulong stands in for it: cheaper
# to convert than a Structure on every copy.
HANDLE = c_ulong

_PROTOTYPES = {
    # name: (restype, argtypes, required)
    "gdr_close": (c_int, [c_void_p], True),
    "gdr_pin_buffer": (c_int, [c_void_p, c_ulong, c_size_t, c_uint64,
                               c_uint32, POINTER(HANDLE)], True),
    "gdr_unpin_buffer": (c_int, [c_void_p, HANDLE], True),
    "gdr_map": (c_int, [c_void_p, HANDLE, POINTER(c_void_p), c_size_t],
                True),
    "gdr_unmap": (c_int, [c_void_p, HANDLE, c_void_p, c_size_t], True),
    "gdr_get_info_v2": (c_int, [c_void_p, HANDLE, POINTER(GdrInfo)], True),
    "gdr_copy_to_mapping": (c_int, [HANDLE, c_void_p, c_void_p, c_size_t],
                            True),
    "gdr_copy_from_mapping": (c_int, [HANDLE, c_void_p, c_void_p,
                                      c_size_t], True),
    "gdr_get_attribute": (c_int, [c_void_p, c_int, POINTER(c_int)], True),
    "gdr_get_mapping_type_string": (c_int, [c_int, POINTER(c_char_p)],
                                    True),
    # gdrmap's extensions: absent from GDRCopy's library.
    "gdrmap_last_error": (c_char_p, [], False),
    "gdrmap_mem_alloc": (c_int, [c_int, c_size_t, POINTER(c_ulong)], False),
    "gdrmap_mem_free": (c_int, [c_ulong], False),
    # Copies by the fastest path for their size (mapping, threads, DMA).
    "gdrmap_copy_to_mapping": (c_int, [HANDLE, c_void_p, c_void_p,
                                       c_size_t], False),
    "gdrmap_copy_from_mapping": (c_int, [HANDLE, c_void_p, c_void_p,
                                         c_size_t], False),
    "gdrmap_copy_to_mapping_via": (c_int, [HANDLE, c_void_p, c_void_p,
                                           c_size_t, c_int], False),
    "gdrmap_copy_from_mapping_via": (c_int, [HANDLE, c_void_p, c_void_p,
                                             c_size_t, c_int], False),
    "gdrmap_copy_path": (c_int, [HANDLE, c_int, c_size_t, POINTER(c_int)],
                         False),
    # The path for a host buffer's kind (pageable, or pinned by CUDA).
    "gdrmap_copy_path_host": (c_int, [HANDLE, c_int, c_void_p, c_size_t,
                                      POINTER(c_int)], False),
}

# GDRMAP_COPY_PATH_* (gdrapi.h), by the names Mapping's path= takes.
COPY_PATHS = {"auto": 0, "mapping": 1, "threads": 2, "dma": 3, "staged": 4}
COPY_PATH_NAMES = {v: k for k, v in COPY_PATHS.items()}


class Library:
    """The functions of one loaded libgdrapi.so.2.

    Every function releases the GIL while it runs (ctypes' CDLL), except
    the ``*_held`` copies: those keep it, which saves the release and
    re-acquisition on calls of a microsecond, and take their arguments as
    ready-made ctypes objects (no argtypes to convert through).

    Bulk copies (Mapping.read, readinto, write) go through ``bulk_to`` and
    ``bulk_from``, the names of gdrmap_copy_to/from_mapping (each copy by
    the fastest of the CPU through the mapping, several CPU threads, or
    DMA, for its size) where the library has them, else of
    gdr_copy_to/from_mapping (GDRCopy's library: the CPU through the
    mapping).  Flags (load_*/store_*, at most 8 bytes, which the mapping
    always serves fastest) use gdr_copy_* through ``copy_*_held``.
    """

    def __init__(self, path):
        try:
            dll = ctypes.CDLL(path)
            # gdr_open reports its failure in errno.
            errno_dll = ctypes.CDLL(path, use_errno=True)
            self.gdr_open = errno_dll.gdr_open
        except OSError as e:
            raise GdrmapError(errno.ENOENT, str(e), "load") from None
        except AttributeError:
            raise GdrmapError(
                errno.ENOEXEC,
                "%s is not libgdrapi.so.2 (it has no gdr_open): point %s "
                "at gdrmap's libgdrapi.so.2" % (path, LIBRARY_ENV),
                "load") from None
        self.gdr_open.restype = c_void_p
        self.gdr_open.argtypes = []
        # gdrmap's own opening: gdr_open keeps GDRCopy's rule and leaves
        # out a backend that cannot map cudaMalloc memory (the vulkan
        # one); this package serves such memory copy-only, so it takes
        # that backend too.  GDRCopy's library has only gdr_open.
        self.open_name = "gdr_open"
        self.open = self.gdr_open
        if getattr(errno_dll, "gdrmap_open", None) is not None:
            self.open_name = "gdrmap_open"
            self.open = errno_dll.gdrmap_open
            self.open.restype = c_void_p
            self.open.argtypes = []
        self.path = _loaded_path(self.gdr_open) or path
        for name, (restype, argtypes, required) in _PROTOTYPES.items():
            fn = getattr(dll, name, None)
            if fn is None and required:
                raise GdrmapError(
                    errno.ENOEXEC,
                    "%s has no %s: it is not a libgdrapi.so.2 of API 2.5 "
                    "or newer; use gdrmap's" % (self.path, name), "load")
            if fn is not None:
                fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)
        self.copy_to_held = _held(self.gdr_copy_to_mapping)
        self.copy_from_held = _held(self.gdr_copy_from_mapping)
        self.bulk_to = "gdrmap_copy_to_mapping" \
            if self.gdrmap_copy_to_mapping else "gdr_copy_to_mapping"
        self.bulk_from = "gdrmap_copy_from_mapping" \
            if self.gdrmap_copy_from_mapping else "gdr_copy_from_mapping"
        self.bulk_to_held = _held(getattr(self, self.bulk_to))
        self.bulk_from_held = _held(getattr(self, self.bulk_from))

    def explain(self):
        """The library's explanation of this thread's last failure."""
        if self.gdrmap_last_error is None:
            return ""
        text = self.gdrmap_last_error()
        return text.decode("utf-8", "replace") if text else ""

    def error(self, err, function, hint=None):
        return library_error(err, function, self.explain(), hint)

    def mapping_type_name(self, mapping_type):
        name = c_char_p()
        if self.gdr_get_mapping_type_string(mapping_type, ctypes.byref(name)):
            return "unknown (%d)" % mapping_type
        return name.value.decode()


def _held(fn):
    """fn called with the GIL kept, its arguments ready-made ctypes
    objects."""
    return ctypes.PYFUNCTYPE(c_int)(ctypes.cast(fn, c_void_p).value)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p),
                ("dli_sname", c_char_p), ("dli_saddr", c_void_p)]


def _loaded_path(fn):
    """The file the dynamic loader took fn from (dladdr), or None."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [c_void_p, POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(ctypes.cast(fn, c_void_p), ctypes.byref(info)) or \
            not info.dli_fname:
        return None
    return os.path.realpath(os.fsdecode(info.dli_fname))


def _tree_library():
    """(top, build/lib/libgdrapi.so.2) of the gdrmap source tree this
    package is part of when run from it, else (None, None)."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    if not os.path.isfile(os.path.join(top, "include", "gdrapi.h")):
        return None, None
    return top, os.path.join(top, "build", "lib", SONAME)


def _load():
    """Load the library: $GDRMAP_LIBRARY, else the tree's build when this
    package runs from a gdrmap tree, else the system's libgdrapi.so.2."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        try:
            return Library(env)
        except GdrmapError as e:
            raise GdrmapError(
                e.errno, "%s=%s cannot be used: %s: set it to the path of "
                "gdrmap's libgdrapi.so.2, or unset it" %
                (LIBRARY_ENV, env, e.strerror), "load") from None
    top, built = _tree_library()
    if built and os.path.exists(built):
        return Library(built)
    try:
        return Library(SONAME)
    except GdrmapError as e:
        if e.errno != errno.ENOENT:
            raise
        where = ("run `make` in %s (this package is part of that tree, "
                 "whose build/lib has no %s yet), " % (top, SONAME)
                 if top else "")
        raise GdrmapError(
            errno.ENOENT,
            "%s cannot be loaded (%s): %sinstall gdrmap's library (the "
            "libgdrapi2 package, or `make install`), or set %s to its path"
            % (SONAME, e.strerror, where, LIBRARY_ENV), "load") from None


class _State:
    """What this process holds: the library, its gdr_t, the open pins."""

    def __init__(self):
        self.lock = threading.Lock()
        self.lib = None
        self.gdr = None
        self.live = set()	# every open _Pin (mapping.py)
        self.exit_registered = False


_state = _State()


def library():
    """The loaded library (loaded on first use)."""
    with _state.lock:
        if _state.lib is None:
            _state.lib = _load()
        return _state.lib


def instance():
    """(library, gdr_t): this process's shared instance, opened on first
    use.  A failure is raised each time, so that a later call retries
    (after `modprobe gdrdrv`, say)."""
    lib = library()
    with _state.lock:
        if _state.gdr is None:
            g = lib.open()
            if not g:
                err = ctypes.get_errno() or errno.ENODEV
                raise lib.error(err, lib.open_name)
            _state.gdr = g
            if not _state.exit_registered:
                # Registered now, after the frameworks that allocated the
                # memory have registered theirs: atexit runs it before
                # them, while their memory still exists.
                atexit.register(_at_exit)
                _state.exit_registered = True
        return lib, _state.gdr


def register(pin):
    with _state.lock:
        _state.live.add(pin)


def unregister(pin):
    with _state.lock:
        _state.live.discard(pin)


def _at_exit():
    """Close what is still open, the pins first (each unmaps then unpins),
    then the instance.  Errors are dropped: nobody is left to tell."""
    with _state.lock:
        pins = list(_state.live)
    for pin in pins:
        pin.close(quiet=True)
    with _state.lock:
        g, _state.gdr = _state.gdr, None
        if g and not _state.live:
            _state.lib.gdr_close(g)


def _after_fork_in_child():
    """A child of fork() must not touch its parent's pins: with gdrdrv
    they live in a file both share, and unpinning them here would unpin
    them for the parent.  They become unusable, nothing is released, and
    the child opens its own instance when it first needs one."""
    for pin in list(_state.live):
        pin.forget(
            "this Mapping was made by the parent process before fork(); "
            "make a new Mapping in the child")
    _state.live.clear()
    _state.gdr = None
    _state.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
