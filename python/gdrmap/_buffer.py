# SPDX-License-Identifier: MIT
"""The address and length of any object with the buffer protocol
(bytes, bytearray, memoryview, array.array, NumPy arrays, mmap, ...),
without copying it: PyObject_GetBuffer through ctypes, which also takes
read-only buffers (ctypes' from_buffer takes writable ones only)."""

import ctypes
from ctypes import POINTER, c_char_p, c_int, c_void_p, py_object

# Py_buffer: in the stable ABI since Python 3.11, laid out so since 3.3.
class _PyBuffer(ctypes.Structure):
    _fields_ = [
        ("buf", c_void_p),
        ("obj", c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", c_int),
        ("ndim", c_int),
        ("format", c_char_p),
        ("shape", c_void_p),
        ("strides", c_void_p),
        ("suboffsets", c_void_p),
        ("internal", c_void_p),
    ]


PyBUF_SIMPLE = 0
PyBUF_WRITABLE = 1

_get = ctypes.pythonapi.PyObject_GetBuffer
_get.restype = c_int
_get.argtypes = [py_object, POINTER(_PyBuffer), c_int]
_release = ctypes.pythonapi.PyBuffer_Release
_release.restype = None
_release.argtypes = [POINTER(_PyBuffer)]


class HostBuffer:
    """``with HostBuffer(obj, writable) as (address, nbytes):`` the bytes
    of obj, held (obj cannot be resized or freed) until the block ends."""

    __slots__ = ("_view", "_what")

    def __init__(self, obj, writable, what):
        self._view = _PyBuffer()
        self._what = what
        try:
            _get(obj, ctypes.byref(self._view),
                 PyBUF_WRITABLE if writable else PyBUF_SIMPLE)
        except TypeError:
            raise TypeError(
                "%s must support the buffer protocol (bytes, bytearray, "
                "memoryview, array.array, a NumPy array...), not %s" %
                (what, type(obj).__name__)) from None
        except (BufferError, ValueError) as e:
            # Non-contiguous memory (NumPy says so with a ValueError), or a
            # read-only buffer to write into.
            raise BufferError(
                "%s cannot be used: %s (it must be one contiguous%s buffer)"
                % (what, e, " writable" if writable else "")) from None

    def __enter__(self):
        return self._view.buf or 0, self._view.len

    def __exit__(self, *exc):
        _release(ctypes.byref(self._view))
        return False
