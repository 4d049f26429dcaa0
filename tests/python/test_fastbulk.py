# SPDX-License-Identifier: MIT
"""Mapping.write and readinto through the compiled helper's bulk() (over
the mock library): one C call instead of three ctypes calls, the GIL kept
for small copies and released for large ones, the same bytes as the
ctypes path (poisoned around, every byte checked); path= through
gdrmap_copy_*_via the same way, never with the GIL; anything unusual (a
read-only buffer to read into, a range outside the mapping, an empty
buffer, an offset that is not an int) falls back to the ctypes path,
which raises as it always has; and a library error is the same
GdrmapError."""

import errno
import os
import sys

import check
from check import check as CHECK, raises

check.use_mock()
if os.environ.get("GDRMAP_FASTFLAG") == "0":
    check.skip("GDRMAP_FASTFLAG=0: no helper to test")
    check.done()
if not check.HELPER:
    print("the helper is not built for this Python: make python-tests",
          file=sys.stderr)
    sys.exit(1)
os.environ["GDRMAP_FASTFLAG"] = check.HELPER
from gdrmap import GdrmapError, Mapping, mapping	# noqa: E402
from fakes import DeviceMemory, Mock, pattern	# noqa: E402

POISON = 0xA5
SIZE = 256 << 10
BASE = 4096 + 5
HELD = mapping.GIL_HELD_MAX
mem = DeviceMemory(SIZE)
mock = Mock()
m = Mapping(mem.ptr + BASE, SIZE - BASE)
CHECK(m._fast_bulk is not None, "the Mapping's bulk copies use the helper")

# Count the ctypes path's use of the buffer protocol.
slow = []
real_host_buffer = mapping.HostBuffer


def counting(*args):
    slow.append(args[2])
    return real_host_buffer(*args)


mapping.HostBuffer = counting
for n in (1, 8, HELD, HELD + 1, 100003):
    data = pattern(n, seed=n)
    mem.poison(POISON)
    CHECK(m.write(data, 3) == n, "write of %d returns %d" % (n, n))
    whole = mem.get(0, SIZE)
    CHECK(whole[BASE + 3:BASE + 3 + n] == data and
          whole[:BASE + 3] == bytes([POISON]) * (BASE + 3) and
          whole[BASE + 3 + n:] == bytes([POISON]) * (SIZE - BASE - 3 - n),
          "write of %d: the bytes, and nothing around them" % n)
    dst = bytearray(b"\x3c" * (n + 2))
    CHECK(m.readinto(memoryview(dst)[1:n + 1], 3) == n and
          dst == b"\x3c" + data + b"\x3c", "readinto of %d bytes" % n)
    CHECK(mock.copies() == {"to": 1, "from": 1, "via": 0, "path": 1},
          "%d: one gdrmap_copy_* each way" % n)
CHECK(slow == [], "no copy went through the ctypes path: %r" % slow)

# path=: gdrmap_copy_*_via through the helper as well, that path passed,
# without the GIL at any size (a named path may be a DMA).
for name, code in (("mapping", 1), ("dma", 3)):
    for n in (8, HELD + 1, 100003):
        data = pattern(n, seed=n + code)
        mem.poison(POISON)
        CHECK(m.write(data, 5, path=name) == n,
              "write path=%s of %d returns %d" % (name, n, n))
        whole = mem.get(0, SIZE)
        CHECK(whole[BASE + 5:BASE + 5 + n] == data and
              whole[:BASE + 5] == bytes([POISON]) * (BASE + 5) and
              whole[BASE + 5 + n:] == bytes([POISON]) * (SIZE - BASE - 5 - n),
              "write path=%s of %d: the bytes, and nothing around them" %
              (name, n))
        CHECK(mock.copies() == {"to": 0, "from": 0, "via": 1, "path": code},
              "write path=%s of %d: one gdrmap_copy_to_mapping_via" %
              (name, n))
        dst = bytearray(b"\x3c" * (n + 2))
        CHECK(m.readinto(memoryview(dst)[1:n + 1], 5, path=name) == n and
              dst == b"\x3c" + data + b"\x3c",
              "readinto path=%s of %d bytes" % (name, n))
        CHECK(mock.copies() == {"to": 0, "from": 0, "via": 1, "path": code},
              "readinto path=%s of %d: one gdrmap_copy_from_mapping_via" %
              (name, n))
CHECK(slow == [], "no path= copy went through the ctypes path: %r" % slow)
# A path that cannot serve: the library's error, the call named, nothing
# written; a name that is no path: refused before anything is copied.
mem.poison(POISON)
e = raises(GdrmapError, m.write, pattern(64), path="threads",
           match="the threads path only reads")
CHECK(e is not None and e.errno == errno.EOPNOTSUPP and
      e.function == "gdrmap_copy_to_mapping_via", repr(e))
CHECK(mem.get(0, SIZE) == bytes([POISON]) * SIZE, "a refused path wrote")
raises(ValueError, m.write, b"12345678", path="fast",
       match="path must be None")
raises(ValueError, m.readinto, bytearray(8), path=3, match="path must be None")
c = mock.copies()
CHECK((c["to"], c["from"], c["via"]) == (0, 0, 1),
      "only the refused threads write reached the library: %r" % c)
CHECK(slow == [], "the refusals went through the ctypes path: %r" % slow)
# A helper older than path= (bulk() answers None to the extra argument):
# the ctypes path serves path= copies as before.
fast = m._fast_bulk
m._fast_bulk = (lambda *a: None if len(a) == 10 else fast[0](*a),
                fast[1], fast[2])
data = pattern(100, seed=9)
mem.poison(POISON)
CHECK(m.write(data, 0, path="dma") == 100 and
      mem.get(BASE, 100) == data and len(slow) == 1,
      "an older helper: path= through ctypes (%r)" % slow)
m._fast_bulk = fast
del slow[:]

# Unusual: the ctypes path, and its exception.
raises(BufferError, m.readinto, b"12345678")
raises(ValueError, m.write, b"x" * 16, SIZE - BASE - 8)
raises(ValueError, m.readinto, bytearray(16), -1)
CHECK(m.write(b"") == 0 and m.readinto(bytearray()) == 0, "empty copies")
raises(TypeError, m.write, b"abcd", True)
CHECK(len(slow) == 6, "the unusual ones fell back (%r)" % slow)

# The library failing: its errno and explanation, the call named.
for n in (16, HELD + 1):
    mock.fail("copy", errno.EIO, "mock: the copy failed")
    e = raises(GdrmapError, m.write, pattern(n),
               match="mock: the copy failed")
    CHECK(e is not None and e.errno == errno.EIO and
          e.function == "gdrmap_copy_to_mapping", repr(e))
    mock.fail("copy", errno.EIO, "mock: the copy failed")
    e = raises(GdrmapError, m.readinto, bytearray(n),
               match="mock: the copy failed")
    CHECK(e is not None and e.function == "gdrmap_copy_from_mapping",
          repr(e))

m.close()
raises(ValueError, m.write, b"12345678")
mapping.HostBuffer = real_host_buffer
check.done()
