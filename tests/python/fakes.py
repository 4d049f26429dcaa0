# SPDX-License-Identifier: MIT
"""Stand-ins for GPU memory and the objects that describe it, for the host
tests: host memory the mock library "maps", fake __cuda_array_interface__
objects, fake DLPack producers with real capsules, and the mock library's
hooks."""

import ctypes
import mmap
import weakref
from ctypes import c_char_p, c_int, c_int64, c_void_p, py_object

import check
from gdrmap import _dlpack

GPU_PAGE = 1 << 16


class DeviceMemory:
    """size bytes of host memory standing in for one GPU allocation: it
    starts on a 64 KiB boundary and whole 64 KiB pages are owned, so that
    the mock library's pinned windows stay inside.  Poisoned with 0xA5."""

    def __init__(self, size):
        pages = (size + GPU_PAGE - 1) // GPU_PAGE + 1
        self._mm = mmap.mmap(-1, pages * GPU_PAGE + GPU_PAGE)
        start = ctypes.addressof(ctypes.c_char.from_buffer(self._mm))
        self.ptr = (start + GPU_PAGE - 1) & ~(GPU_PAGE - 1)
        self.size = size
        self.poison(0xA5)

    def poison(self, byte):
        ctypes.memset(self.ptr, byte, self.size)

    def get(self, offset, n):
        return ctypes.string_at(self.ptr + offset, n)

    def put(self, offset, data):
        ctypes.memmove(self.ptr + offset, bytes(data), len(data))


def pattern(n, seed=1):
    """n bytes with no zero and no 0xA5, different at every position."""
    values = ((i * 7 + seed) % 250 + 1 for i in range(n))
    return bytes(0x5A if v == 0xA5 else v for v in values)


class Mock:
    """The mock library's hooks (tests/mock_gdrapi.c)."""

    def __init__(self, library=None):
        lib = ctypes.CDLL(library or check.MOCK_LIBRARY)
        self._copies = lib.gdrmap_mock_copies
        self._set_path = lib.gdrmap_mock_set_path
        self._set_path.argtypes = [c_int]
        self._path_host = lib.gdrmap_mock_path_host
        self._path_host.restype = ctypes.c_void_p
        self._fail = lib.gdrmap_mock_fail
        self._fail.argtypes = [c_char_p, c_int, c_char_p]
        self._live = lib.gdrmap_mock_live
        self._events = lib.gdrmap_mock_events
        self._events.restype = c_char_p
        self._events.argtypes = [c_int]
        self._gdrmap_opens = lib.gdrmap_mock_gdrmap_opens

    def fail(self, op, err, why):
        """The next `op` fails with err, explained by why."""
        assert self._fail(op.encode(), err, why.encode()) == 0

    def live(self):
        """(instances, pins, mappings) open now."""
        v = [c_int(), c_int(), c_int()]
        self._live(*[ctypes.byref(x) for x in v])
        return tuple(x.value for x in v)

    def copies(self, clear=True):
        """{"to", "from", "via": calls of gdrmap_copy_*, "path": the path
        (GDRMAP_COPY_PATH_*) of the last} since the last clear."""
        v = [c_int() for _ in range(4)]
        self._copies(*[ctypes.byref(x) for x in v], 1 if clear else 0)
        return dict(zip(("to", "from", "via", "path"),
                        (x.value for x in v)))

    def set_path(self, path):
        """What gdrmap_copy_path answers (a GDRMAP_COPY_PATH_*)."""
        self._set_path(path)

    def path_host(self):
        """The host pointer gdrmap_copy_path_host was last asked about."""
        return self._path_host() or 0

    def gdrmap_opens(self):
        """How many times gdrmap_open was called."""
        return self._gdrmap_opens()

    def events(self, clear=True):
        """The operations done since the last clear, in order."""
        text = self._events(1 if clear else 0).decode()
        return text.split(",") if text else []


class FakeCAI:
    """An object exposing __cuda_array_interface__ (as CuPy or Numba do)."""

    def __init__(self, ptr, shape, typestr="|u1", strides=None, version=3,
                 readonly=False, **extra):
        self.cai = {"shape": shape, "typestr": typestr, "data":
                    (ptr, readonly), "version": version, "strides": strides}
        self.cai.update(extra)

    @property
    def __cuda_array_interface__(self):
        return self.cai


class RefusingCAI:
    """__cuda_array_interface__ raises (as torch does for bfloat16)."""

    @property
    def __cuda_array_interface__(self):
        raise TypeError("dtype bfloat16 has no typestr")


def _capi(name, restype, argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capi("PyCapsule_New", py_object, [c_void_p, c_void_p,
                                                  c_void_p])
# Called from a capsule's destructor: the capsule is a raw pointer then.
_capsule_name = _capi("PyCapsule_GetName", c_char_p, [c_void_p])
_capsule_pointer = _capi("PyCapsule_GetPointer", c_void_p, [c_void_p,
                                                            c_char_p])
# The producers alive, by the address of their tensor: the C callbacks
# below outlive them, and must not keep them alive.
_producers = weakref.WeakValueDictionary()
# Capsule names live as long as the process (capsules keep the pointer).
_NAMES = {name: ctypes.create_string_buffer(name)
          for name in (b"dltensor", b"dltensor_versioned")}


@_dlpack.DELETER
def _deleter(managed):
    producer = _producers.get(managed)
    if producer is not None:
        producer.deleted += 1


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    """A producer's capsule destructor: frees the tensor unless a consumer
    took it (renamed the capsule)."""
    name = _capsule_name(capsule)
    managed = _capsule_pointer(capsule, name)
    producer = _producers.get(managed)
    if producer is not None:
        producer.capsules_freed += 1
    if name in _NAMES:
        _deleter(managed)


class FakeDLPack:
    """A DLPack producer, as a framework is one: __dlpack__ returns a real
    capsule over a DLManagedTensor[Versioned] built here, whose capsule
    destructor frees the tensor unless a consumer renamed the capsule.

    deleted counts the deleter's calls; calls records __dlpack__'s
    arguments; legacy: __dlpack__ takes no max_version (old producers)."""

    def __init__(self, ptr, shape, bits=8, strides=None, byte_offset=0,
                 device=(_dlpack.kDLCUDA, 0), versioned=True, legacy=False,
                 flags=0, version=(1, 0), lanes=1):
        self.deleted = 0
        self.calls = []
        self.capsules_freed = 0
        self.legacy = legacy
        self.reported = device	# what __dlpack_device__ says
        self._versioned = versioned and not legacy
        struct = (_dlpack.DLManagedTensorVersioned if self._versioned
                  else _dlpack.DLManagedTensor)
        self.managed = struct()
        self._shape = (c_int64 * max(len(shape), 1))(*shape)
        self._strides = (c_int64 * max(len(shape), 1))(*(strides or ()))
        t = self.managed.dl_tensor
        t.data = ptr
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 1, bits, lanes
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(c_int64))
        if strides is not None:
            t.strides = ctypes.cast(self._strides, ctypes.POINTER(c_int64))
        t.byte_offset = byte_offset
        if self._versioned:
            self.managed.version.major, self.managed.version.minor = version
            self.managed.flags = flags
        self.managed.deleter = ctypes.cast(_deleter, c_void_p).value
        _producers[ctypes.addressof(self.managed)] = self

    def capsule(self):
        name = b"dltensor_versioned" if self._versioned else b"dltensor"
        return _capsule_new(ctypes.addressof(self.managed),
                            ctypes.addressof(_NAMES[name]),
                            ctypes.cast(_capsule_destructor, c_void_p).value)

    def __dlpack_device__(self):
        return self.reported

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if self.legacy and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword "
                            "argument 'max_version'")
        self.calls.append(dict(kwargs, stream=stream,
                               max_version=max_version))
        return self.capsule()
