# SPDX-License-Identifier: MIT
"""GPU memory every backend can pin (gdrmap_mem_alloc), for frameworks
whose default allocator uses cudaMalloc, which only gdrdrv can pin."""

import ctypes
import errno

from . import _lib
from ._source import _index
from .errors import GdrmapError


def _function(lib, name):
    fn = getattr(lib, name)
    if fn is None:
        raise GdrmapError(
            errno.ENOSYS, "%s has no %s (a gdrmap extension): use gdrmap's "
            "libgdrapi.so.2" % (lib.path, name), name)
    return fn


def mem_alloc(size, device=0):
    """Allocate at least size bytes on CUDA device `device` with
    cuMemCreate, pinnable by every backend; returns the device pointer.
    The size is rounded up to the allocation granularity (2 MiB on
    current GPUs).  Free it with mem_free."""
    size, device = _index(size, "size"), _index(device, "device")
    lib = _lib.library()
    ptr = ctypes.c_ulong()
    err = _function(lib, "gdrmap_mem_alloc")(device, size, ctypes.byref(ptr))
    if err:
        raise lib.error(err, "gdrmap_mem_alloc")
    return ptr.value


def mem_free(ptr):
    """Free memory from mem_alloc."""
    ptr = _index(ptr, "ptr")
    lib = _lib.library()
    err = _function(lib, "gdrmap_mem_free")(ptr)
    if err:
        raise lib.error(err, "gdrmap_mem_free")


def cupy_memory_pool():
    """A cupy.cuda.MemoryPool that takes its memory from mem_alloc, so
    that the arrays it holds can be mapped without gdrdrv::

        pool = gdrmap.cupy_memory_pool()
        with cupy.cuda.using_allocator(pool.malloc):
            flags = cupy.zeros(4, dtype=cupy.uint64)

    Each new block of the pool is one allocation of at least 2 MiB: use
    it for the arrays you map, not for all (cupy.cuda.set_allocator)."""
    import cupy

    def malloc(size, device_id):
        return mem_alloc(size, device_id)

    def free(ptr, device_id):
        mem_free(ptr)

    allocator = cupy.cuda.PythonFunctionAllocator(malloc, free)
    return cupy.cuda.MemoryPool(allocator.malloc)
