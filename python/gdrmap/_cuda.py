# SPDX-License-Identifier: MIT
"""The GPU a device pointer belongs to, asked of CUDA when the process has
already loaded it (as PyTorch and CuPy do); gdrmap itself never loads
CUDA.  The library finds the owning GPU on its own: this only fills in
Mapping.device and checks the device= argument."""

import ctypes
import os

CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9

_attr = None


def _pointer_get_attribute():
    global _attr
    if _attr is None:
        try:
            cuda = ctypes.CDLL("libcuda.so.1",
                               mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            fn = cuda.cuPointerGetAttribute
        except (OSError, AttributeError):
            return None		# not loaded yet: ask again next time
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
        _attr = fn
    return _attr


def device_of(ptr):
    """The CUDA device ordinal of ptr, or None if CUDA cannot say."""
    fn = _pointer_get_attribute()
    if fn is None:
        return None
    ordinal = ctypes.c_int(-1)
    if fn(ctypes.byref(ordinal), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr):
        return None
    return ordinal.value
