# SPDX-License-Identifier: MIT
"""DLPack with fake producers and real capsules: both capsule kinds, the
arguments __dlpack__ gets, byte_offset, strides, sizes of odd types,
devices that are not a GPU, read-only tensors, and the capsule protocol:
a tensor refused stays the producer's (its capsule destructor frees it),
a tensor taken is renamed and its deleter called exactly once, at close
or when pinning fails."""

import ctypes
import errno
import gc
import weakref

import check
from check import check as CHECK, raises

check.use_mock()
from gdrmap import GdrmapError, Mapping	# noqa: E402
from gdrmap import _dlpack as dl	# noqa: E402
from fakes import DeviceMemory, FakeDLPack, Mock, RefusingCAI	# noqa: E402
from fakes import pattern	# noqa: E402

mock = Mock()
mem = DeviceMemory(1 << 20)
p = mem.ptr
_valid = ctypes.pythonapi.PyCapsule_IsValid
_valid.restype, _valid.argtypes = ctypes.c_int, [ctypes.py_object,
                                                 ctypes.c_char_p]


def capsule_of(m):
    return m._pin.src.keep[1].capsule


def settled(producer, deleted, what):
    """After collecting garbage, the deleter ran exactly `deleted` times."""
    gc.collect()
    CHECK(producer.deleted == deleted, "%s: deleter ran %d times, not %d"
          % (what, producer.deleted, deleted))


# A versioned tensor: asked for without synchronisation, taken (renamed),
# freed once at close and not again when its capsule goes.
prod = FakeDLPack(p, (4, 8), bits=32)
m = Mapping(prod)
CHECK(prod.calls == [{"stream": -1, "max_version": (1, 0)}], repr(prod.calls))
CHECK(m.ptr == p and m.size == 128 and m.device == 0, repr(m))
CHECK(_valid(capsule_of(m), b"used_dltensor_versioned"), "not renamed")
CHECK(prod.deleted == 0, "deleted while mapped")
m.close()
CHECK(prod.deleted == 1, "not deleted at close")
m.close()
settled(prod, 1, "versioned")
CHECK(prod.capsules_freed == 1, "the capsule was not freed")

# An old producer: no max_version, a plain "dltensor" capsule.
old = FakeDLPack(p, (16,), legacy=True)
with Mapping(old) as m:
    CHECK(old.calls == [{"stream": -1, "max_version": None}],
          repr(old.calls))
    CHECK(_valid(capsule_of(m), b"used_dltensor"), "not renamed")
    CHECK(m.size == 16, "legacy size")
settled(old, 1, "legacy")

# A producer that refuses stream=-1 (it wants to synchronise): asked
# again without a stream.
class Syncing(FakeDLPack):
    def __dlpack__(self, stream=None, **kwargs):
        if stream == -1:
            raise BufferError("this producer always synchronises")
        return FakeDLPack.__dlpack__(self, stream=stream, **kwargs)


syncing = Syncing(p, (16,))
with Mapping(syncing) as m:
    CHECK(syncing.calls == [{"stream": None, "max_version": (1, 0)}],
          repr(syncing.calls))
settled(syncing, 1, "syncing")

# byte_offset, and a device id.
prod = FakeDLPack(p, (10,), bits=16, byte_offset=2 * 65536 + 3,
                  device=(dl.kDLCUDA, 3))
mem.poison(0xA5)
with Mapping(prod) as m:
    CHECK(m.ptr == p + 2 * 65536 + 3 and m.size == 20 and m.device == 3,
          repr(m))
    m.write(pattern(20))
CHECK(mem.get(2 * 65536 + 3, 20) == pattern(20), "bytes at byte_offset")
CHECK(mem.get(0, 2 * 65536 + 3) == b"\xa5" * (2 * 65536 + 3),
      "bytes before byte_offset")

# Sizes: strides NULL or dense in any order; sub-byte types; vectors.
for kwargs, size in (({"shape": (2, 3, 4), "bits": 32}, 96),
                     ({"shape": (2, 3, 4), "bits": 32,
                       "strides": (12, 4, 1)}, 96),
                     ({"shape": (2, 3, 4), "bits": 32,
                       "strides": (1, 2, 6)}, 96),
                     ({"shape": (10,), "bits": 1}, 2),
                     ({"shape": (3,), "bits": 8, "lanes": 4}, 12),
                     ({"shape": (), "bits": 64}, 8)):
    prod = FakeDLPack(p, **kwargs)
    with Mapping(prod) as m:
        CHECK(m.size == size, "%r: size %d, want %d" % (kwargs, m.size, size))
    settled(prod, 1, repr(kwargs))

# Refused tensors stay the producer's: the capsule keeps its name, and
# its destructor frees the tensor exactly once.  Nothing is pinned.
live = mock.live()
refusals = [
    ({"shape": (2, 3, 4), "bits": 32, "strides": (24, 4, 1)},
     ("not contiguous", "(24, 4, 1)")),
    ({"shape": (4,), "bits": 32, "strides": (-1,)}, "not contiguous"),
    ({"shape": (0,), "bits": 32}, "nothing to map"),
    ({"shape": (4,), "bits": 0}, "has no size"),
    ({"shape": (4,), "version": (2, 0)}, "version 2.0"),
    ({"shape": (4,), "device": (dl.kDLCUDAManaged, 0)}, "managed"),
]
for kwargs, words in refusals:
    prod = FakeDLPack(p, **kwargs)
    prod.reported = (dl.kDLCUDA, 0)	# only the tensor tells
    raises(ValueError, Mapping, prod, match=words)
    settled(prod, 1, "refused %r" % (kwargs,))
CHECK(mock.live() == live, "refused tensors left %r" % (mock.live(),))

# __dlpack_device__ says host memory: refused before __dlpack__.
for device, words in (((dl.kDLCPU, 0), "kDLCPU (device 0): it is host"),
                      ((dl.kDLCUDAHost, 1), "pinned host memory"),
                      ((dl.kDLROCM, 0), "kDLROCM"),
                      ((99, 0), "device type 99")):
    prod = FakeDLPack(p, (4,), device=device)
    raises(ValueError, Mapping, prod, match=words)
    CHECK(prod.calls == [], "exported %r anyway" % (device,))

# Read-only tensors.
prod = FakeDLPack(p, (8,), flags=dl.DLPACK_FLAG_BITMASK_READ_ONLY)
with Mapping(prod) as m:
    CHECK(m.readonly, "the read-only flag")
    raises(ValueError, m.write, b"x", match="read-only")

# Pinning fails after the tensor was taken: the deleter runs once, ours.
prod = FakeDLPack(p, (8,))
mock.fail("pin", errno.EINVAL, "mock: cannot pin this")
raises(GdrmapError, Mapping, prod, match="mock: cannot pin this")
settled(prod, 1, "after a failed pin")

# A producer that returns something else; one whose __dlpack__ fails.
class Liar:
    def __dlpack__(self, **kwargs):
        return 42


class Broken:
    def __dlpack__(self, **kwargs):
        raise RuntimeError("Can't export tensors that require gradient")


raises(TypeError, Mapping, Liar(), match="not a capsule named")
raises(TypeError, Mapping, Broken(),
       match=("Broken cannot be mapped", "require gradient"))


# __cuda_array_interface__ failing but DLPack working (torch's bfloat16).
class Both(RefusingCAI, FakeDLPack):
    pass


both = Both(p, (8,), bits=16)
with Mapping(both) as m:
    CHECK(m.size == 16 and both.calls, "DLPack used after the CAI failed")

# The producer stays alive while mapped; a Mapping dropped without close
# frees the tensor when collected.
prod = FakeDLPack(p, (8,))
ref = weakref.ref(prod)
m = Mapping(prod)
del prod
gc.collect()
CHECK(ref() is not None and m.obj is ref(), "the producer was let go")
m = None
gc.collect()
CHECK(ref() is None, "the producer was kept after the Mapping went")

check.done()
