# SPDX-License-Identifier: MIT
"""Mapping: GPU memory pinned and mapped for this process's CPU."""

import ctypes
import errno
import os
import threading
import time
import weakref
from ctypes import (byref, c_char, c_size_t, c_uint32, c_uint64, c_ulong,
                    c_void_p)

from . import _helper, _lib
from ._buffer import HostBuffer
from ._source import _index, resolve
from .errors import GdrmapError

# Copies up to this size keep the GIL (a few microseconds at most);
# larger ones release it so that other threads run meanwhile.
GIL_HELD_MAX = 4096

_N4, _N8 = c_size_t(4), c_size_t(8)
_LIMITS = {4: (1 << 32) - 1, 8: (1 << 64) - 1}

def _hint(producer):
    """Advice for memory from PyTorch or CuPy that could not be pinned."""
    if producer == "torch":
        conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") + \
            os.environ.get("PYTORCH_ALLOC_CONF", "")
        if "expandable_segments:True" in conf:
            return ("PyTorch: expandable segments are on, and a segment is "
                    "made of several CUDA allocations: a tensor that spans "
                    "two cannot be mapped without gdrdrv; map a smaller "
                    "tensor, or load gdrdrv (sudo modprobe gdrdrv).")
        return ("PyTorch: its caching allocator takes memory with "
                "cudaMalloc, which only gdrdrv maps for the CPU; start the "
                "process with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                " (read at the first CUDA allocation) so that it allocates "
                "with cuMemCreate, or load gdrdrv (sudo modprobe gdrdrv).")
    if producer == "cupy":
        return ("CuPy: its default memory pool takes memory with cudaMalloc, "
                "which only gdrdrv maps for the CPU; allocate the arrays to "
                "map under "
                "cupy.cuda.using_allocator(gdrmap.cupy_memory_pool().malloc),"
                " or load gdrdrv (sudo modprobe gdrdrv).")
    return None


class _Pin:
    """The library's side of one Mapping: its handle and mapping, and what
    must stay alive.  Kept apart from the Mapping so that the Mapping's
    finalizer can close it without keeping the Mapping alive.

    Copies that release the GIL count themselves in ``users`` (under
    ``cond``); close waits for them before unmapping.  Copies that keep
    the GIL go through ``hbox``, the handle, which close zeroes first:
    the library refuses handle 0, so no copy reaches an unmapped page.
    Flags through the compiled helper go through ``window``, which close
    closes first, with the GIL held: it refuses from then on."""

    def __init__(self, lib, gdr, src):
        self.lib, self.gdr, self.src = lib, gdr, src
        self.handle = 0
        self.va = None
        self.hbox = c_ulong(0)
        self.cond = threading.Condition(threading.Lock())
        self.users = 0
        self.closed = None		# why it is closed, once it is
        self.window = None		# the helper's Window (_helper.py)

    def open(self):
        lib, src = self.lib, self.src
        handle = _lib.HANDLE()
        err = lib.gdr_pin_buffer(self.gdr, src.ptr, src.size, 0, 0,
                                 byref(handle))
        if err:
            hint = _hint(src.producer) if err == errno.EINVAL else None
            raise lib.error(err, "gdr_pin_buffer", hint)
        self.handle = handle.value
        va = c_void_p()
        err = lib.gdr_map(self.gdr, self.handle, byref(va), src.size)
        if err:
            exc = lib.error(err, "gdr_map")
            lib.gdr_unpin_buffer(self.gdr, self.handle)
            raise exc
        self.va = va.value
        info = _lib.GdrInfo()
        err = lib.gdr_get_info_v2(self.gdr, self.handle, byref(info))
        if err:
            exc = lib.error(err, "gdr_get_info_v2")
            self._release()
            raise exc
        # Mapped, with no mapping type: a copy-only pin (gdrapi(3)).
        self.type_code = info.mapping_type
        self.mapping_type = "copy-only" if info.mapping_type == 0 else \
            lib.mapping_type_name(info.mapping_type)
        self.cpu = self.va + (src.ptr - info.va)
        self.hbox.value = self.handle

    def _release(self):
        """Unmap, then unpin: the library refuses to unpin a mapped
        handle.  The first error, or None."""
        lib, g, h = self.lib, self.gdr, self.handle
        first = None
        err = lib.gdr_unmap(g, h, self.va, self.src.size)
        if err:
            first = lib.error(err, "gdr_unmap")
        else:
            err = lib.gdr_unpin_buffer(g, h)
            if err:
                first = lib.error(err, "gdr_unpin_buffer")
        return first

    def close(self, quiet=False):
        with self.cond:
            if self.closed:
                return
            self.closed = "the Mapping is closed"
            self.hbox.value = 0
            if self.window is not None:
                self.window.close()
            while self.users:
                self.cond.wait()
        _lib.unregister(self)
        try:
            exc = self._release()
        finally:
            release, self.src.release = self.src.release, None
            self.src.keep = None
            if release:
                release()
        if exc and not quiet:
            raise exc

    def forget(self, why):
        """Drop the pin without a library call (after fork)."""
        self.closed = why
        self.hbox.value = 0
        if self.window is not None:
            self.window.close()


class Mapping:
    """GPU memory mapped for the CPU: ``Mapping(obj_or_ptr, size=None,
    device=None)``.

    obj_or_ptr is an object exposing ``__cuda_array_interface__`` or
    ``__dlpack__`` (a PyTorch tensor, a CuPy or Numba array...), which must
    be contiguous and is kept alive while mapped, or a device pointer (an
    int), then with size.  size maps only the first size bytes of an
    object.  device, the CUDA ordinal, is checked against where the memory
    is when that is known; the library finds the owning GPU itself.

    Every copy goes through the library's routines; offsets are in bytes
    from the start of the mapped range (from the object's first byte, in
    memory order).  Nothing here synchronises a CUDA stream: see
    python/README.md on ordering.

    Close with close() or a ``with`` block; a Mapping that is garbage
    collected, or still open at interpreter exit, is closed then.  A
    Mapping may be used from several threads.
    """

    def __init__(self, obj_or_ptr, size=None, device=None):
        self._pin = None
        _helper.helper()	# a GDRMAP_FASTFLAG that cannot load: before pinning
        src = resolve(obj_or_ptr, size, device)
        try:
            lib, gdr = _lib.instance()
            pin = _Pin(lib, gdr, src)
            pin.open()
        except BaseException:
            if src.release:
                src.release()
            raise
        _lib.register(pin)
        self._pin = pin
        self._lib = lib
        self._hbox = pin.hbox
        self._cpu = pin.cpu
        self._size = src.size
        self._readonly = bool(src.readonly)
        self._from_held = lib.copy_from_held
        self._to_held = lib.copy_to_held
        # Bulk copies in one call of the compiled helper where there is
        # one and the library has gdrmap_copy_* (_bulk).
        self._fast_bulk = _helper.bulk(lib)
        # Checked flag addresses, by width then offset: a flag is polled
        # at the same few offsets, and making and checking the address
        # object each time costs a third of a load's Python overhead.
        self._flags = {4: {}, 8: {}}
        self._finalizer = weakref.finalize(self, pin.close, True)
        # _lib's exit handler closes what is open, in the right order.
        self._finalizer.atexit = False
        # With the compiled helper, the flag methods of this Mapping are
        # its Window's (instance attributes before the class's methods):
        # one C call that checks and accesses; what it does not serve it
        # hands to the class's methods below (ctypes), which also raise
        # every error.  Those stay reachable as Mapping.load_u64(m, off).
        win = _helper.window(self, pin, (
            Mapping.load_u32, Mapping.load_u64, Mapping.store_u32,
            Mapping.store_u64))
        if win is not None:
            pin.window = win
            self.load_u32, self.load_u64 = win.load_u32, win.load_u64
            self.store_u32, self.store_u64 = win.store_u32, win.store_u64

    # -- what it is --------------------------------------------------------

    @property
    def ptr(self):
        """The device address of the first mapped byte."""
        return self._pin.src.ptr

    @property
    def size(self):
        return self._size

    def __len__(self):
        return self._size

    @property
    def device(self):
        """The CUDA device ordinal of the memory, or None if unknown."""
        return self._pin.src.device

    @property
    def readonly(self):
        """True if the memory's producer marked it read-only."""
        return self._pin.src.readonly

    @property
    def mapping_type(self):
        """'Write Combining', 'Caching' or 'Device' (gdr_get_info), or
        'copy-only': memory the module-free backend cannot map for the CPU
        (cudaMalloc memory under the vulkan backend), which reads and
        writes reach by DMA, at about 6 to 8 us each instead of 0.1 to 1."""
        return self._pin.mapping_type

    @property
    def copy_only(self):
        """True if reads and writes go by DMA, not through a CPU mapping
        (mapping_type 'copy-only')."""
        return self._pin.mapping_type == "copy-only"

    @property
    def closed(self):
        return self._pin is None or bool(self._pin.closed)

    @property
    def obj(self):
        """The object mapped (None for a pointer, or once closed)."""
        keep = self._pin.src.keep
        return keep[0] if isinstance(keep, tuple) else keep

    def __repr__(self):
        if self._pin is None:
            return "<gdrmap.Mapping (not made)>"
        state = "closed" if self.closed else "open"
        return "<gdrmap.Mapping %s 0x%x +%d device %s>" % (
            state, self.ptr, self._size, self.device)

    # -- lifetime ----------------------------------------------------------

    def close(self):
        """Unmap and unpin (once; later calls do nothing), then let the
        object go.  Raises GdrmapError if the library refused."""
        if self._pin is not None and self._finalizer.detach():
            self._pin.close()

    def __enter__(self):
        self._check()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _check(self):
        if self._pin.closed:
            raise ValueError(self._pin.closed)

    def _failed(self, err, function):
        """Raise for a copy the library refused: a closed Mapping says
        so; anything else is the library's to explain."""
        self._check()
        raise self._lib.error(err, function)

    # -- arguments ---------------------------------------------------------

    def _range(self, offset, n):
        if type(offset) is not int:
            offset = _index(offset, "offset")
        if offset < 0 or n > self._size - offset:
            self._check()
            raise ValueError(
                "[%d, +%d) is not inside the mapping (%d bytes)" %
                (offset, n, self._size))
        return self._cpu + offset

    def _aligned(self, offset, width):
        """The address object of an aligned flag at offset, checked once
        and remembered (a few hundred offsets at most)."""
        if type(offset) is int and 0 <= offset <= self._size - width:
            cpu = self._cpu + offset
        else:
            cpu = self._range(offset, width)	# converts, or refuses
            offset = cpu - self._cpu
        if cpu & (width - 1):
            raise ValueError(
                "offset %d: device address 0x%x is not a multiple of %d "
                "(a flag must be aligned to its size to be read and written "
                "in one piece)" % (offset, self._pin.src.ptr + offset, width))
        known = self._flags[width]
        if len(known) >= _FLAGS_KEPT:
            known.clear()
        addr = known[offset] = c_void_p(cpu)
        return addr

    def _writable(self):
        if self._pin.src.readonly:
            raise ValueError("the array is read-only (its producer marked "
                             "it so): it cannot be written")

    # -- copies --------------------------------------------------------------

    def _copy(self, to, dst, src, n, path):
        """One bulk copy of n bytes (to: into the mapping), by the
        library's fastest path (gdrmap_copy_*, else gdr_copy_*) or the
        one path names; GIL kept for small automatic ones (see _Pin)."""
        lib = self._lib
        if path is None:
            function = lib.bulk_to if to else lib.bulk_from
            if n <= GIL_HELD_MAX:
                held = lib.bulk_to_held if to else lib.bulk_from_held
                err = held(self._hbox, c_void_p(dst), c_void_p(src),
                           c_size_t(n))
                if err:
                    self._failed(err, function)
                return
            args = (dst, src, n)
        else:
            function = "gdrmap_copy_%s_mapping_via" % ("to" if to else "from")
            args = (dst, src, n, _path_code(path))
        fn = getattr(lib, function)
        if fn is None:
            raise GdrmapError(
                errno.ENOSYS, "%s has no %s (a gdrmap extension): path= "
                "needs gdrmap's libgdrapi.so.2" % (lib.path, function),
                function)
        pin = self._pin
        with pin.cond:
            self._check()
            pin.users += 1
        try:
            err = fn(pin.handle, *args)
        finally:
            with pin.cond:
                pin.users -= 1
                if not pin.users:
                    pin.cond.notify_all()
        if err:
            self._failed(err, function)

    def _bulk(self, to, obj, offset, path=None):
        """A bulk copy in one call of the compiled helper (path: by
        gdrmap_copy_*_via, that path): the bytes copied, or None where it
        does not serve (no helper, GDRCopy's library, anything unusual:
        the ctypes path raises for it)."""
        fast = self._fast_bulk
        if fast is None or type(offset) is not int:
            return None
        call, fns, vias = fast
        if path is None:
            fn, more = fns[to], ()
            r = call(fn, self._hbox.value, self._cpu, self._size, offset,
                     obj, to, False, GIL_HELD_MAX)
        elif vias is None:
            return None
        else:
            # A path named may be a DMA of any size: never with the GIL.
            fn, more = vias[to], (_path_code(path),)
            r = _helper.NEEDS_RELEASE
        if r == _helper.NEEDS_RELEASE:
            # Without the GIL: as _copy, close waits until it is done.
            pin = self._pin
            with pin.cond:
                self._check()
                pin.users += 1
            try:
                r = call(fn, pin.handle, self._cpu, self._size, offset, obj,
                         to, True, GIL_HELD_MAX, *more)
            finally:
                with pin.cond:
                    pin.users -= 1
                    if not pin.users:
                        pin.cond.notify_all()
        if r is not None and r < 0:
            function = self._lib.bulk_to if to else self._lib.bulk_from
            self._failed(-r, function + ("_via" if more else ""))
        return r

    def readinto(self, buffer, offset=0, path=None):
        """Fill buffer (any writable contiguous buffer: bytearray,
        memoryview, array.array, NumPy array...) with the mapped bytes at
        offset, without an intermediate copy; returns the bytes read.
        path: None (the fastest), or 'mapping', 'threads', 'dma' (see
        copy_path)."""
        self._check()
        n = self._bulk(False, buffer, offset, path)
        if n is not None:
            return n
        with HostBuffer(buffer, True, "the buffer") as (address, n):
            cpu = self._range(offset, n)
            self._copy(False, address, cpu, n, path)
        return n

    def read(self, n, offset=0, path=None):
        """n bytes from offset, as bytes (path: as readinto's)."""
        if type(n) is not int:
            n = _index(n, "n")
        if n < 0:
            raise ValueError("n must not be negative, not %d" % n)
        self._check()
        cpu = self._range(offset, n)
        out = (c_char * n)()
        self._copy(False, ctypes.addressof(out), cpu, n, path)
        return out.raw

    def write(self, data, offset=0, path=None):
        """Write data (any contiguous bytes-like object) at offset;
        returns the bytes written.  Fenced: visible to GPU work started
        after it returns.  path: as readinto's."""
        self._check()
        self._writable()
        n = self._bulk(True, data, offset, path)
        if n is not None:
            return n
        with HostBuffer(data, False, "data") as (address, n):
            cpu = self._range(offset, n)
            self._copy(True, cpu, address, n, path)
        return n

    def copy_path(self, n, write=False, host=None):
        """The path a read (write=True: a write) of n bytes takes now:
        'mapping' (the CPU through the mapping), 'threads' (several CPU
        threads through it), 'dma' (the GPU's copy engine, straight from
        and to memory CUDA has pinned), 'staged' (the copy engine through
        pinned staging buffers: pageable memory), or 'auto' while the
        library is timing that size (at first use, or again after its
        path grew slower).  host: the host buffer (an
        address, e.g. a tensor's data_ptr(), or any buffer), whose kind,
        pageable or pinned by CUDA, the path depends on; None: pageable.
        With a library that has no gdrmap_copy_* (GDRCopy's), 'mapping'
        ('dma' for a copy-only pin)."""
        if type(n) is not int:
            n = _index(n, "n")
        if n < 0:
            raise ValueError("n must not be negative, not %d" % n)
        self._check()
        lib = self._lib
        if lib.gdrmap_copy_path is None or \
                getattr(lib, "gdrmap_copy_%s_mapping" %
                        ("to" if write else "from")) is None:
            return "dma" if self.copy_only else "mapping"
        code = ctypes.c_int(-1)
        # The handle from hbox: 0 (refused) once closed by another thread.
        if host is not None and lib.gdrmap_copy_path_host is not None:
            if type(host) is not int:
                with HostBuffer(host, False, "host") as (host, _):
                    pass	# the address only: nothing is copied
            err = lib.gdrmap_copy_path_host(
                self._hbox.value, 1 if write else 0, host, n, byref(code))
            function = "gdrmap_copy_path_host"
        else:
            err = lib.gdrmap_copy_path(self._hbox.value, 1 if write else 0,
                                       n, byref(code))
            function = "gdrmap_copy_path"
        if err:
            self._failed(err, function)
        return _lib.COPY_PATH_NAMES.get(code.value,
                                        "unknown (%d)" % code.value)

    @property
    def fast_flags(self):
        """True if load_*/store_* go through the compiled helper
        (gdrmap._fastflag), False if through ctypes."""
        return self._pin.window is not None

    # The flag and counter helpers (made by _loader and _storer below):
    # one library call each, the GIL kept, arguments as ready-made ctypes
    # objects; offsets naturally aligned; native byte order.
    def wait(self, offset, until, timeout=None, width=8, spin=1e-3,
             max_sleep=1e-3):
        """Poll the value at offset until it equals ``until`` (an int) or
        ``until(value)`` is true (a callable); return that value.

        width: 4 or 8 bytes.  The first ``spin`` seconds poll back to
        back; then the sleeps between polls double from 10 us up to
        ``max_sleep``.  TimeoutError after ``timeout`` seconds (None:
        wait for ever); KeyboardInterrupt stops it as usual."""
        if width not in _LIMITS:
            raise ValueError("width must be 4 or 8, not %r" % (width,))
        load = self.load_u64 if width == 8 else self.load_u32
        if callable(until):
            done = until
        else:
            target = _index(until, "until")
            if not 0 <= target <= _LIMITS[width]:
                raise ValueError("until=%d can never be read from %d "
                                 "unsigned bits" % (target, 8 * width))
            done = target.__eq__
        for name, value in (("timeout", timeout), ("spin", spin),
                            ("max_sleep", max_sleep)):
            if value is not None and not value >= 0:
                raise ValueError("%s must be at least 0, not %r" %
                                 (name, value))
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        spin_end, sleep = start + spin, 1e-5
        while True:
            value = load(offset)
            if done(value):
                return value
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise TimeoutError(
                    "the value at offset %d was still %d after %g s" %
                    (offset, value, timeout))
            if now >= spin_end:
                pause = sleep if deadline is None else \
                    min(sleep, deadline - now)
                time.sleep(pause)
                sleep = min(2 * sleep, max_sleep) if max_sleep else 0


# How many checked flag offsets a Mapping remembers per width.
_FLAGS_KEPT = 256


def _path_code(path):
    code = _lib.COPY_PATHS.get(path) if isinstance(path, str) else None
    if code is None:
        raise ValueError("path must be None, 'auto', 'mapping', 'threads', "
                         "'dma' or 'staged', not %r" % (path,))
    return code


def _loader(ctype, width, count):
    """Mapping.load_u<8*width>: written once for both widths, without a
    call more on the way (the flag read is the path to keep short)."""
    def load(self, offset=0):
        addr = self._flags[width].get(offset) if type(offset) is int \
            else None
        if addr is None:
            addr = self._aligned(offset, width)
        value = ctype()
        err = self._from_held(self._hbox, byref(value), addr, count)
        if err:
            self._failed(err, "gdr_copy_from_mapping")
        return value.value
    load.__name__ = "load_u%d" % (8 * width)
    load.__qualname__ = "Mapping." + load.__name__
    load.__doc__ = "The unsigned %d-bit value at offset." % (8 * width)
    return load


def _storer(ctype, width, count):
    def store(self, offset, value):
        if type(value) is not int:
            value = _index(value, "value")
        if not 0 <= value <= _LIMITS[width]:
            raise ValueError("value %d does not fit in %d unsigned bits" %
                             (value, 8 * width))
        if self._readonly:
            self._writable()	# refuses
        addr = self._flags[width].get(offset) if type(offset) is int \
            else None
        if addr is None:
            addr = self._aligned(offset, width)
        err = self._to_held(self._hbox, addr, byref(ctype(value)), count)
        if err:
            self._failed(err, "gdr_copy_to_mapping")
    store.__name__ = "store_u%d" % (8 * width)
    store.__qualname__ = "Mapping." + store.__name__
    store.__doc__ = ("Write an unsigned %d-bit value at offset (fenced)." %
                     (8 * width))
    return store


Mapping.load_u32 = _loader(c_uint32, 4, _N4)
Mapping.load_u64 = _loader(c_uint64, 8, _N8)
Mapping.store_u32 = _storer(c_uint32, 4, _N4)
Mapping.store_u64 = _storer(c_uint64, 8, _N8)
