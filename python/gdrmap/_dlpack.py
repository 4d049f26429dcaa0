# SPDX-License-Identifier: MIT
"""Consuming DLPack (https://dmlc.github.io/dlpack/latest/): the capsule an
object's ``__dlpack__()`` returns, "dltensor_versioned" (a
DLManagedTensorVersioned, DLPack 1.x) or "dltensor" (a DLManagedTensor).

The capsule protocol: a consumer that takes the tensor renames the capsule
"used_dltensor[_versioned]" and from then on owns it: it calls the
tensor's deleter when it is done (here: when the Mapping closes).  A
capsule that is not taken keeps its name, and the producer's capsule
destructor frees the tensor.  gdrmap checks the tensor first and takes it
only once it can map it.

``__dlpack__`` is called with ``stream=-1``: "do not synchronise", for the
reason given in _cai.py.
"""

import ctypes
from ctypes import (POINTER, c_char_p, c_int, c_int32, c_int64, c_uint8,
                    c_uint16, c_uint32, c_uint64, c_void_p, py_object)

from ._layout import dense_extent, product

kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLCUDAManaged = 1, 2, 3, 10, 13
DLPACK_FLAG_BITMASK_READ_ONLY = 1
DEVICE_TYPES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL",
                7: "kDLVulkan", 8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM",
                11: "kDLROCMHost", 12: "kDLExtDev", 13: "kDLCUDAManaged",
                14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


DELETER = ctypes.CFUNCTYPE(None, c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                ("deleter", c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p),
                ("deleter", c_void_p), ("flags", c_uint64),
                ("dl_tensor", DLTensor)]


def _capi(name, restype, argtypes):
    fn = getattr(ctypes.pythonapi, name)
    fn.restype, fn.argtypes = restype, argtypes
    return fn


_is_valid = _capi("PyCapsule_IsValid", c_int, [py_object, c_char_p])
_get_pointer = _capi("PyCapsule_GetPointer", c_void_p, [py_object, c_char_p])
_set_name = _capi("PyCapsule_SetName", c_int, [py_object, c_void_p])


def _c_string(text):
    """A C string that lives as long as the process: PyCapsule_SetName
    keeps the pointer, and a capsule may outlive this module."""
    libc = ctypes.CDLL(None)
    libc.strdup.restype = c_void_p
    libc.strdup.argtypes = [c_char_p]
    return libc.strdup(text)


# (name, used name, struct, versioned), newest first.
_KINDS = [
    (b"dltensor_versioned", _c_string(b"used_dltensor_versioned"),
     DLManagedTensorVersioned, True),
    (b"dltensor", _c_string(b"used_dltensor"), DLManagedTensor, False),
]


def call_dlpack(obj):
    """obj.__dlpack__(), asking for DLPack 1.0 and no synchronisation.
    Producers that predate those arguments (TypeError) are asked with
    fewer; one that refuses stream=-1 is asked with no stream, and may
    then make CUDA's legacy default stream wait for its own (an event on
    the GPU, never a wait of the CPU)."""
    last = None
    for kwargs in ({"stream": -1, "max_version": (1, 0)}, {"stream": -1},
                   {"max_version": (1, 0)}, {}):
        try:
            return obj.__dlpack__(**kwargs)
        except TypeError as e:
            last = e
        except (BufferError, ValueError) as e:
            if "stream" not in kwargs:
                raise
            last = e
    raise last


def _describe(device_type):
    return DEVICE_TYPES.get(device_type, "device type %d" % device_type)


def check_device(device_type, device_id):
    """Refuse memory that is not on a CUDA GPU, saying why."""
    if device_type == kDLCUDA:
        return
    why = {
        kDLCPU: "it is host memory: the CPU reads it directly, no mapping "
                "is needed",
        kDLCUDAHost: "it is pinned host memory: the CPU reads it directly, "
                     "no mapping is needed",
        kDLCUDAManaged: "managed (unified) memory cannot be pinned for the "
                        "CPU: allocate it with cudaMalloc or cuMemCreate",
    }.get(device_type, "gdrmap maps the memory of NVIDIA GPUs (kDLCUDA)")
    raise ValueError("the array is on %s (device %d): %s" %
                     (_describe(device_type), device_id, why))


class Taken:
    """A DLPack tensor taken from its capsule: the memory it describes,
    and release(), which calls its deleter once."""

    def __init__(self, capsule, managed, deleter, ptr, size, device,
                 readonly):
        self.capsule = capsule		# kept: the tensor lives in it
        self.ptr, self.size = ptr, size
        self.device, self.readonly = device, readonly
        self._managed, self._deleter = managed, deleter

    def release(self):
        deleter, self._deleter = self._deleter, None
        if deleter:
            DELETER(deleter)(self._managed)


def take(capsule):
    """Check the tensor in capsule and take it (see the module's text)."""
    for name, used, struct, versioned in _KINDS:
        if _is_valid(capsule, name):
            break
    else:
        raise TypeError(
            "__dlpack__() returned %s, not a capsule named 'dltensor' or "
            "'dltensor_versioned' (already used?)" % type(capsule).__name__)
    managed = _get_pointer(capsule, name)
    m = struct.from_address(managed)
    readonly = False
    if versioned:
        if m.version.major != 1:
            raise ValueError(
                "the DLPack tensor is of version %d.%d; gdrmap reads 1.x"
                % (m.version.major, m.version.minor))
        readonly = bool(m.flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    t = m.dl_tensor
    check_device(t.device.device_type, t.device.device_id)
    if t.ndim < 0 or (t.ndim and not t.shape):
        raise ValueError("the DLPack tensor has no shape (ndim %d)" % t.ndim)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if any(n < 0 for n in shape):
        raise ValueError("the DLPack tensor's shape %r is negative" % (shape,))
    numel = product(shape)
    bits = t.dtype.bits * t.dtype.lanes
    if not bits:
        raise ValueError("the DLPack tensor's data type has no size")
    if t.strides and numel:
        strides = tuple(t.strides[i] for i in range(t.ndim))
        if dense_extent(shape, strides, 1) != numel:
            raise ValueError(
                "the array is not contiguous (shape %r, strides %r items): "
                "a mapping covers one range of memory, so map a contiguous "
                "copy (tensor.contiguous(), cupy.ascontiguousarray(a))"
                % (shape, strides))
    if not t.data and numel:
        raise ValueError("the DLPack tensor's data pointer is NULL")
    ptr = (t.data or 0) + t.byte_offset
    size = (numel * bits + 7) // 8
    taken = Taken(capsule, managed, m.deleter, ptr, size,
                  t.device.device_id, readonly)
    # Ours from here on: the capsule's destructor no longer frees it.
    if _set_name(capsule, used):
        raise RuntimeError("PyCapsule_SetName failed")
    return taken
