# SPDX-License-Identifier: MIT
"""__cuda_array_interface__ with fake objects: versions, typestr, strides
(dense layouts taken, others refused), views at offsets inside an
allocation, read-only arrays, the object kept alive, the stream left
alone, and the device a framework reports."""

import gc
import types
import weakref

import check
from check import check as CHECK, raises

check.use_mock()
from gdrmap import Mapping	# noqa: E402
from fakes import DeviceMemory, FakeCAI, Mock, RefusingCAI	# noqa: E402
from fakes import pattern	# noqa: E402

mock = Mock()
mem = DeviceMemory(1 << 20)


def mapped(obj, **kwargs):
    """(ptr, size) of a Mapping of obj, closed again."""
    with Mapping(obj, **kwargs) as m:
        return m.ptr, m.size


# Versions, item sizes, shapes.
p = mem.ptr
for version in (0, 1, 2, 3):
    CHECK(mapped(FakeCAI(p, (4, 8), "<f4", version=version)) == (p, 128),
          "version %d" % version)
for typestr, size in (("|u1", 1), ("<i2", 2), ("<f8", 8), ("<c16", 16),
                      ("|V16", 16), (">u4", 4), ("|b1", 1)):
    CHECK(mapped(FakeCAI(p, (3, 5), typestr)) == (p, 15 * size), typestr)
CHECK(mapped(FakeCAI(p, (), "<f8")) == (p, 8), "a 0-d array")
for bad in ("f4", "<f", "<fx", "<f0", 4, None):
    raises(ValueError, Mapping, FakeCAI(p, (4,), bad), match="typestr")

# Strides: C order, Fortran order, other dense orders and size-1 axes
# with any stride are one range; gaps, overlaps, broadcasting and
# negative strides are not.
dense = {
    "C": ((4, 8), (32, 4)),
    "F": ((4, 8), (4, 16)),
    "axes 2,0,1": ((2, 3, 4), (4, 32, 8)),
    "size-1 axis": ((4, 1, 8), (32, 999, 4)),
}
for name, (shape, strides) in dense.items():
    n = 1
    for d in shape:
        n *= d
    CHECK(mapped(FakeCAI(p, shape, "<f4", strides=strides)) == (p, 4 * n),
          "%s strides %r" % (name, strides))
for shape, strides in (((4, 8), (64, 4)), ((4, 8), (32, 8)),
                       ((4, 8), (0, 4)), ((4, 8), (-32, 4)),
                       ((4, 8), (16, 4))):
    raises(ValueError, Mapping, FakeCAI(p, shape, "<f4", strides=strides),
           match=("not contiguous", "strides %r" % (strides,),
                  "tensor.contiguous()"))
raises(ValueError, Mapping, FakeCAI(p, (4, 8), "<f4", strides=(4,)),
       match="do not match shape")
raises(ValueError, Mapping, FakeCAI(p, (4,), "<f4", strides=[4]),
       match="do not match shape")

# Malformed descriptions.
raises(ValueError, Mapping, FakeCAI(p, (4,), mask=object()), match="masked")
raises(ValueError, Mapping, FakeCAI(p, (-1,)), match="shape")
raises(ValueError, Mapping, FakeCAI(p, [4]), match="shape")
raises(ValueError, Mapping, FakeCAI(p, (0, 4)), match="nothing to map")
raises(ValueError, Mapping, FakeCAI(0, (4,)), match="0 is not a device address")
raises(ValueError, Mapping, FakeCAI(p, (4,), version=-1), match="version")
bad = FakeCAI(p, (4,))
bad.cai["data"] = p
raises(ValueError, Mapping, bad, match="(pointer, read-only)")
del bad.cai["typestr"]
raises(ValueError, Mapping, bad, match="has no 'typestr'")
bad.cai = [1]
raises(TypeError, Mapping, bad, match="not a dict")
raises(TypeError, Mapping, RefusingCAI(),
       match=("RefusingCAI cannot be mapped", "__cuda_array_interface__: "
              "dtype bfloat16 has no typestr"))
CHECK(mock.live()[1:] == (0, 0), "refused arrays left pins: %r" %
      (mock.live(),))

# A view at an offset inside an allocation: the window pinned covers it,
# and bytes land at the view's address, nowhere else.
view_at = 3 * 65536 - 40		# straddles a 64 KiB boundary
view = FakeCAI(mem.ptr + view_at, (20,), "<u4")
mem.poison(0xA5)
mock.events()
with Mapping(view) as m:
    CHECK(m.ptr == mem.ptr + view_at and m.size == 80, repr(m))
    m.write(pattern(80))
    CHECK(m.read(80) == pattern(80), "read back through the view")
CHECK(mem.get(view_at, 80) == pattern(80), "the view's bytes")
CHECK(mem.get(0, view_at) == b"\xa5" * view_at and
      mem.get(view_at + 80, 4096) == b"\xa5" * 4096, "bytes around the view")
CHECK(mock.events() == ["pin", "map", "unmap", "unpin"], "one pin")

# size= maps the first bytes only.
with Mapping(FakeCAI(p, (64,), "<u8"), size=24) as m:
    CHECK(m.size == 24, "size=24")
    raises(ValueError, m.read, 1, 24, match="not inside the mapping (24")

# Read-only arrays can be read, not written.
mem.put(0, b"ro")
with Mapping(FakeCAI(p, (64,), readonly=True)) as m:
    CHECK(m.readonly and m.read(2) == b"ro", "read a read-only array")
    raises(ValueError, m.write, b"x", match="read-only")
    CHECK(m.load_u64(8) == int.from_bytes(mem.get(8, 8), "little"),
          "a flag of a read-only array is read")
    raises(ValueError, m.store_u64, 0, 1, match="read-only")
    raises(ValueError, m.store_u64, 8, 1, match="read-only")
CHECK(mem.get(0, 2) == b"ro", "a read-only array was written")

# The stream entry is not used (no synchronisation): any value passes.
with Mapping(FakeCAI(p, (8,), stream=object())) as m:
    CHECK(m.size == 8, "stream ignored")

# The device a framework reports: torch's .device.index, CuPy's .device.id.
torchlike = FakeCAI(p, (8,))
torchlike.device = types.SimpleNamespace(type="cuda", index=2)
cupylike = FakeCAI(p, (8,))
cupylike.device = types.SimpleNamespace(id=1)
for obj, dev in ((torchlike, 2), (cupylike, 1), (FakeCAI(p, (8,)), None)):
    with Mapping(obj) as m:
        CHECK(m.device == dev, "device %r, want %r" % (m.device, dev))

# The object stays alive while mapped, and is let go at close.
obj = FakeCAI(p, (8,))
ref = weakref.ref(obj)
m = Mapping(obj)
del obj
gc.collect()
CHECK(ref() is not None and m.obj is ref(), "the object was let go early")
m.close()
gc.collect()
CHECK(ref() is None, "the object was kept after close")


# An object that is an integer too (__index__, as a PyTorch tensor) and
# whose interfaces refuse (a tensor that requires grad): TypeError with
# the producer's reasons, not the producer's own exception.
class GradTensor:
    def __index__(self):
        return 1

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable "
                           "that requires grad")

    def __dlpack__(self, stream=None):
        raise RuntimeError("Can't export tensors that require gradient")


raises(TypeError, Mapping, GradTensor(), match=("requires grad",
                                                "require gradient"))

check.done()
