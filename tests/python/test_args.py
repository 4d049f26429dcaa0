# SPDX-License-Identifier: MIT
"""Argument handling: every bad argument of Mapping and its methods is
refused with an exception that says what was wrong, and nothing is written
to the memory by a refused call."""

import array
import ctypes
import types

import check
from check import check as CHECK, raises

check.use_mock()
import gdrmap	# noqa: E402
from gdrmap import _lib	# noqa: E402
from fakes import DeviceMemory, FakeCAI, Mock	# noqa: E402

mock = Mock()
mem = DeviceMemory(4096)


class Index:
    """An integer that is not an int (as numpy.int64 is)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


# Making a Mapping.
raises(TypeError, gdrmap.Mapping, mem.ptr, match="needs a size")
raises(ValueError, gdrmap.Mapping, mem.ptr, 0, match="nothing to map")
raises(ValueError, gdrmap.Mapping, mem.ptr, -4, match="nothing to map")
raises(TypeError, gdrmap.Mapping, mem.ptr, 1.5,
       match="size must be an integer, not float")
raises(TypeError, gdrmap.Mapping, mem.ptr, True, match="not a bool")
raises(ValueError, gdrmap.Mapping, 0, 8,
       match="0 is not a device address: a pointer is an address from 1")
# Negative pointers in decimal, never "0x-40".
for bad in (-1, -64):
    e = raises(ValueError, gdrmap.Mapping, bad, 64,
               match="%d is not a device address" % bad)
    CHECK(e is None or "0x-" not in str(e), "no 0x-: %s" % e)
raises(ValueError, gdrmap.Mapping, (1 << 64) - 4, 8,
       match=("[0xfffffffffffffffc, +8) is not a range of device addresses",
              "ends past 2**64 - 1"))
raises(TypeError, gdrmap.Mapping, "0x1000", 8,
       match=("cannot map str", "__cuda_array_interface__", "__dlpack__"))
raises(TypeError, gdrmap.Mapping, True, 8, match="cannot map bool")
raises(TypeError, gdrmap.Mapping, mem.ptr, 8, device="0",
       match="device must be an integer")
raises(ValueError, gdrmap.Mapping, mem.ptr, 8, device=-1,
       match="device ordinal")
on1 = FakeCAI(mem.ptr, (64,))
on1.device = types.SimpleNamespace(index=1)
raises(ValueError, gdrmap.Mapping, on1, device=0,
       match="device=0, but the memory is on device 1")
raises(ValueError, gdrmap.Mapping, on1, size=65,
       match="size 65 is not between 1 and the array's 64 bytes")
CHECK(mock.live()[1:] == (0, 0), "a refused Mapping left %r" % (mock.live(),))

m = gdrmap.Mapping(Index(mem.ptr), Index(4096), device=Index(3))
CHECK(len(m) == m.size == 4096 and m.ptr == mem.ptr, repr(m))
CHECK(m.device == 3 and not m.readonly and not m.closed, repr(m))
CHECK(m.mapping_type == "Write Combining", m.mapping_type)
CHECK("open 0x%x +4096 device 3" % mem.ptr in repr(m), repr(m))
CHECK(m.obj is None, "a pointer has no object")
CHECK(gdrmap.backend() == "unknown (99)", gdrmap.backend())
# gdr_info_v2_t as ctypes lays it out is the library's: every field.
lib, g = _lib.instance()
info = _lib.GdrInfo()
CHECK(lib.gdr_get_info_v2(g, m._pin.handle, ctypes.byref(info)) == 0 and
      ctypes.sizeof(info) == 48 and info.va == mem.ptr and
      info.mapped_size == 65536 and info.page_size == 65536 and
      info.mapped == 1 and info.wc_mapping == 1 and info.mapping_type == 1,
      "gdr_info_v2: %r" % ([(f[0], getattr(info, f[0])) for f in
                             info._fields_],))

# Reads.
raises(ValueError, m.read, -1, match="must not be negative")
raises(TypeError, m.read, 1.0, match="n must be an integer")
raises(ValueError, m.read, 8, -1, match="[-1, +8) is not inside the mapping")
raises(ValueError, m.read, 8, 4089, match="[4089, +8) is not inside")
raises(ValueError, m.read, 4097, match="not inside the mapping (4096")
raises(ValueError, m.read, 1 << 70)
raises(ValueError, m.read, 1, 1 << 70)
raises(TypeError, m.read, 1, "0", match="offset must be an integer")
CHECK(m.read(0, 4096) == b"", "read of 0 bytes at the end")
CHECK(m.read(2, Index(4094)) == b"\xa5\xa5", "offset through __index__")
raises(BufferError, m.readinto, b"immutable", match="writable")
raises(BufferError, m.readinto, memoryview(bytearray(16))[::2],
       match="contiguous")
raises(TypeError, m.readinto, 123, match="buffer protocol")
raises(ValueError, m.readinto, bytearray(8), 4090, match="not inside")
raises(ValueError, m.readinto, array.array("d", [0.0] * 513),
       match="[0, +4104) is not inside")

# Writes.
raises(TypeError, m.write, "text", match=("buffer protocol", "not str"))
raises(BufferError, m.write, memoryview(b"abcdefgh")[::2],
       match="contiguous")
raises(ValueError, m.write, b"x" * 9, 4088, match="[4088, +9)")
raises(ValueError, m.write, b"x", -1)
raises(TypeError, m.write, b"x", 0.0)

# Flags and counters.
raises(ValueError, m.load_u64, 3, match="not a multiple of 8")
raises(ValueError, m.load_u32, 2, match="not a multiple of 4")
raises(ValueError, m.store_u64, 12, 1, match="not a multiple of 8")
raises(ValueError, m.load_u64, 4096,
       match="[4096, +8) is not inside the mapping (4096 bytes)")
raises(ValueError, m.load_u64, 4089)
raises(ValueError, m.load_u32, -4, match="[-4, +4) is not inside")
raises(TypeError, m.load_u64, None, match="offset must be an integer")
raises(ValueError, m.store_u64, 0, -1, match="does not fit in 64")
raises(ValueError, m.store_u32, 0, 1 << 32, match="does not fit in 32")
raises(TypeError, m.store_u64, 0, 1.0, match="value must be an integer")
raises(TypeError, m.store_u32, 0, False, match="not a bool")
raises(ValueError, m.wait, 0, 1, width=2, match="width must be 4 or 8")
raises(ValueError, m.wait, 0, 1 << 32, width=4, match="can never be read")
raises(ValueError, m.wait, 0, -1, match="can never be read")
raises(ValueError, m.wait, 0, 1, timeout=-1, match="timeout must be at")
raises(ValueError, m.wait, 0, 1, timeout=float("nan"), match="timeout")
raises(ValueError, m.wait, 0, 1, spin=-1, match="spin must be")
raises(TypeError, m.wait, 0, "1", match="until must be an integer")
raises(ValueError, m.wait, 1, 1, match="not a multiple of 8")

# Not one refused call wrote a byte.
CHECK(mem.get(0, 4096) == b"\xa5" * 4096, "a refused call wrote")
m.close()
check.done()
