# SPDX-License-Identifier: MIT
"""gdrmap: read and write GPU memory from Python through a CPU mapping.

    import gdrmap
    with gdrmap.Mapping(tensor) as m:     # a PyTorch tensor, CuPy array...
        m.store_u64(0, 1)                 # ~0.13 us on the wire, fenced
        value = m.load_u64(8)             # one PCIe round trip (~1 us)
        m.wait(8, 100, timeout=5)         # poll until the GPU writes 100

Python over gdrmap's libgdrapi.so.2 (ctypes): $GDRMAP_LIBRARY, else
the build of the gdrmap tree this package runs from, else the system's;
flag reads and writes go through a small compiled helper where the
package has one (helper_path()), else through ctypes.  Failures raise
GdrmapError (an OSError) with the library's explanation.
See python/README.md.
"""

import ctypes

from . import _helper
from ._lib import BACKENDS, GDRMAP_ATTR_BACKEND
from ._lib import instance as _instance
from ._lib import library as _library
from ._doctor import doctor
from .errors import GdrmapError
from .mapping import Mapping
from .memory import cupy_memory_pool, mem_alloc, mem_free

__version__ = "0.2"
__all__ = ["Mapping", "GdrmapError", "doctor", "mem_alloc", "mem_free",
           "cupy_memory_pool", "library_path", "helper_path", "backend"]


def library_path():
    """The path of the libgdrapi.so.2 in use (loading it if need be), or
    None when none can be loaded: Mapping() and backend() then raise
    GdrmapError saying why and what to do."""
    try:
        return _library().path
    except GdrmapError:
        return None


def helper_path():
    """The path of the compiled flag helper (gdrmap/_fastflag*.so) that
    Mapping's load_*/store_* use, or None when they go through ctypes
    (not built, or GDRMAP_FASTFLAG=0).  Raises GdrmapError when
    GDRMAP_FASTFLAG names a file that cannot be loaded."""
    return _helper.path()


def backend():
    """The backend of this process's library instance: 'gdrdrv', 'dmabuf',
    'rm' or 'vulkan' (opening the instance if need be)."""
    lib, g = _instance()
    value = ctypes.c_int()
    err = lib.gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, ctypes.byref(value))
    if err:
        raise lib.error(err, "gdr_get_attribute")
    return BACKENDS.get(value.value, "unknown (%d)" % value.value)
