# SPDX-License-Identifier: MIT
"""Bulk copies (read, readinto, write) go through gdrmap's best-path
copies, gdrmap_copy_to/from_mapping, at every size (with the GIL kept and
released), and flags never do; path= goes through gdrmap_copy_*_via with
that path; copy_path() says what gdrmap_copy_path says; failures of each
become GdrmapError naming the call, with nothing copied where the
arguments were wrong.  Over the mock library, whose gdrmap_copy_* count
their calls (tests/mock_gdrapi.c)."""

import ctypes
import errno
import struct
import sys

import check
from check import check as CHECK, raises

check.use_mock()
from gdrmap import GdrmapError, Mapping, mapping	# noqa: E402
from fakes import DeviceMemory, Mock, pattern	# noqa: E402

POISON = 0xA5
SIZE = 256 << 10
mem = DeviceMemory(SIZE)
mock = Mock()
HELD = mapping.GIL_HELD_MAX
SIZES = (1, 8, 63, HELD, HELD + 1, 100003)
BASE = 4096 + 5
m = Mapping(mem.ptr + BASE, SIZE - BASE)
CHECK(m._lib.bulk_from == "gdrmap_copy_from_mapping" and
      m._lib.bulk_to == "gdrmap_copy_to_mapping",
      "bulk copies: %s, %s" % (m._lib.bulk_from, m._lib.bulk_to))


def only(start, data):
    whole = mem.get(0, SIZE)
    end = start + len(data)
    return whole[start:end] == data and \
        whole[:start] == bytes([POISON]) * start and \
        whole[end:] == bytes([POISON]) * (SIZE - end)


mock.copies()
for n in SIZES:
    data = pattern(n, seed=n)
    mem.poison(POISON)
    CHECK(m.write(data, 3) == n and only(BASE + 3, data),
          "write of %d bytes" % n)
    CHECK(mock.copies() == {"to": 1, "from": 0, "via": 0, "path": 1},
          "write of %d: one gdrmap_copy_to_mapping" % n)
    CHECK(m.read(n, 3) == data, "read of %d bytes" % n)
    dst = bytearray(b"\x3c" * (n + 2))
    CHECK(m.readinto(memoryview(dst)[1:n + 1], 3) == n and
          dst == b"\x3c" + data + b"\x3c", "readinto of %d bytes" % n)
    CHECK(mock.copies() == {"to": 0, "from": 2, "via": 0, "path": 1},
          "read and readinto of %d: gdrmap_copy_from_mapping" % n)

# Flags never: they are at most 8 bytes, where the mapping is fastest.
FLAG = (-BASE) % 8
for load, store in ((m.load_u64, m.store_u64), (m.load_u32, m.store_u32),
                    (lambda o: Mapping.load_u64(m, o),
                     lambda o, v: Mapping.store_u64(m, o, v))):
    store(FLAG, 7)
    CHECK(load(FLAG) == 7, "flag")
    CHECK(mock.copies()["to"] + mock.copies()["from"] == 0,
          "a flag went through gdrmap_copy_*")
CHECK(m.wait(FLAG, 7, timeout=1) == 7 and mock.copies()["from"] == 0,
      "wait() went through gdrmap_copy_*")

# path=: gdrmap_copy_*_via, with that path.
data = pattern(HELD + 100, seed=3)
mem.put(BASE, data)
for name, code in (("auto", 1), ("mapping", 1), ("threads", 2), ("dma", 3),
                   ("staged", 4)):
    for n in (8, HELD + 100):
        CHECK(m.read(n, path=name) == data[:n], "read path=%s" % name)
        buf = bytearray(n)
        m.readinto(buf, path=name)
        CHECK(bytes(buf) == data[:n], "readinto path=%s" % name)
        CHECK(mock.copies() == {"to": 0, "from": 0, "via": 2, "path": code},
              "read path=%s: the via calls" % name)
for name, code in (("mapping", 1), ("dma", 3)):
    mem.poison(POISON)
    m.write(data, 0, path=name)
    CHECK(only(BASE, data) and
          mock.copies() == {"to": 0, "from": 0, "via": 1, "path": code},
          "write path=%s" % name)
# A path that cannot serve: the library's error, nothing written.
mem.poison(POISON)
e = raises(GdrmapError, m.write, data, path="threads",
           match="gdrmap_copy_to_mapping_via: mock: the threads path only "
                 "reads")
CHECK(e is not None and e.errno == errno.EOPNOTSUPP and
      e.function == "gdrmap_copy_to_mapping_via", repr(e))
CHECK(only(0, b""), "a refused path wrote")
# Not a path: refused before anything is copied.
mock.copies()
for bad in ("fast", 3, b"dma", "DMA"):
    raises(ValueError, m.read, 8, path=bad, match="path must be None")
    raises(ValueError, m.write, b"12345678", path=bad,
           match="path must be None")
CHECK(mock.copies() == {"to": 0, "from": 0, "via": 0, "path": 0} and
      only(0, b""), "a wrong path copied")

# copy_path(): gdrmap_copy_path's answer, by name.
for code, name in ((1, "mapping"), (2, "threads"), (3, "dma"), (0, "auto"),
                   (4, "staged"), (9, "unknown (9)")):
    mock.set_path(code)
    CHECK(m.copy_path(1 << 20) == name and
          m.copy_path(64, write=True) == name, "copy_path %s" % name)
# host=: gdrmap_copy_path_host, asked about that buffer's address.
mock.set_path(4)
host = bytearray(64)
CHECK(m.copy_path(1 << 20, host=0x10000) == "staged" and
      mock.path_host() == 0x10000, "copy_path host=address")
CHECK(m.copy_path(1 << 20, write=True, host=host) == "staged" and
      mock.path_host() == ctypes.addressof(
          (ctypes.c_char * 64).from_buffer(host)), "copy_path host=buffer")
m.copy_path(8, host=0x20000)
CHECK(m.copy_path(1 << 20) == "staged" and
      m.copy_path(8, host=None) == "staged" and
      mock.path_host() == 0x20000,
      "copy_path without host: gdrmap_copy_path, not _host")
raises(TypeError, m.copy_path, 8, host="abc", match="buffer protocol")
mock.set_path(1)
raises(ValueError, m.copy_path, -1, match="must not be negative")
raises(TypeError, m.copy_path, "8", match="must be an integer")

# The library failing: GdrmapError with its errno, the call and its
# explanation; the destination left as it was.
for n in (16, HELD + 1):
    for what, call, function in (
            ("read", lambda: m.read(n), "gdrmap_copy_from_mapping"),
            ("readinto", lambda: m.readinto(dst), "gdrmap_copy_from_mapping"),
            ("write", lambda: m.write(pattern(n)), "gdrmap_copy_to_mapping"),
            ("read via", lambda: m.read(n, path="dma"),
             "gdrmap_copy_from_mapping_via"),
            ("copy_path", lambda: m.copy_path(n), "gdrmap_copy_path")):
        dst = bytearray(b"\x3c" * n)
        mem.poison(POISON)
        mock.fail("copy", errno.EIO, "mock: the copy engine failed")
        e = raises(GdrmapError, call,
                   match="%s: mock: the copy engine failed" % function)
        CHECK(e is not None and e.errno == errno.EIO and
              e.function == function, "%s of %d: %r" % (what, n, e))
        CHECK(dst == b"\x3c" * n and only(0, b""),
              "a failed %s of %d copied" % (what, n))

# Closed: refused before any library call.
m.close()
mock.copies()
for call in (lambda: m.read(8), lambda: m.read(HELD + 1),
             lambda: m.write(b"x"), lambda: m.readinto(bytearray(8)),
             lambda: m.read(8, path="dma"), lambda: m.copy_path(8)):
    raises(ValueError, call, match="the Mapping is closed")
CHECK(mock.copies() == {"to": 0, "from": 0, "via": 0, "path": 0},
      "a closed Mapping called the library")

# Native byte order for what read returns of a flag written by store.
m = Mapping(mem.ptr + 64, 64)
m.store_u64(8, 0x0102030405060708)
CHECK(m.read(8, 8) == struct.pack(("<" if sys.byteorder == "little" else ">")
                                  + "Q", 0x0102030405060708), "byte order")
m.close()

check.done()
