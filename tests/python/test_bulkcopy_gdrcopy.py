# SPDX-License-Identifier: MIT
"""With a library that has no gdrmap_copy_* (GDRCopy's libgdrapi.so.2,
played by libgdrapi-mock-gdrcopy.so), bulk copies go through
gdr_copy_to/from_mapping, byte for byte the same (and the instance is
opened with gdr_open, which is all it has), and their failures name
those; path= other than None is refused as needing gdrmap's library;
copy_path() says 'mapping'."""

import errno

import check
from check import check as CHECK, raises

check.use_mock(check.MOCK_GDRCOPY_LIBRARY)
from gdrmap import GdrmapError, Mapping, mapping	# noqa: E402
from fakes import DeviceMemory, Mock, pattern	# noqa: E402

POISON = 0xA5
SIZE = 256 << 10
mem = DeviceMemory(SIZE)
mock = Mock(check.MOCK_GDRCOPY_LIBRARY)
HELD = mapping.GIL_HELD_MAX
BASE = 4096 + 5
m = Mapping(mem.ptr + BASE, SIZE - BASE)
lib = m._lib
CHECK(lib.gdrmap_copy_to_mapping is None and
      lib.gdrmap_copy_from_mapping_via is None and
      lib.gdrmap_copy_path is None, "the library has no gdrmap_copy_*")
CHECK(lib.open_name == "gdr_open" and mock.gdrmap_opens() == 0,
      "GDRCopy's library has no gdrmap_open: opened with %s" % lib.open_name)
CHECK(lib.bulk_from == "gdr_copy_from_mapping" and
      lib.bulk_to == "gdr_copy_to_mapping",
      "bulk copies: %s, %s" % (lib.bulk_from, lib.bulk_to))


def only(start, data):
    whole = mem.get(0, SIZE)
    end = start + len(data)
    return whole[start:end] == data and \
        whole[:start] == bytes([POISON]) * start and \
        whole[end:] == bytes([POISON]) * (SIZE - end)


for n in (1, 8, 63, HELD, HELD + 1, 100003):
    data = pattern(n, seed=n)
    mem.poison(POISON)
    CHECK(m.write(data, 3) == n and only(BASE + 3, data),
          "write of %d bytes" % n)
    CHECK(m.read(n, 3) == data, "read of %d bytes" % n)
    dst = bytearray(b"\x3c" * (n + 2))
    CHECK(m.readinto(memoryview(dst)[1:n + 1], 3) == n and
          dst == b"\x3c" + data + b"\x3c", "readinto of %d bytes" % n)
CHECK(mock.copies() == {"to": 0, "from": 0, "via": 0, "path": 0},
      "the mock's gdrmap_copy_* were reached")

CHECK(m.copy_path(8) == "mapping" and
      m.copy_path(1 << 30, write=True) == "mapping", "copy_path")
for call, function in (
        (lambda: m.read(8, path="dma"), "gdrmap_copy_from_mapping_via"),
        (lambda: m.write(b"x", path="mapping"),
         "gdrmap_copy_to_mapping_via")):
    mem.poison(POISON)
    e = raises(GdrmapError, call,
               match=("has no %s (a gdrmap extension)" % function,
                      "needs gdrmap's libgdrapi.so.2"))
    CHECK(e is not None and e.errno == errno.ENOSYS and
          e.function == function, repr(e))
    CHECK(only(0, b""), "a refused path wrote")

# The library refusing a copy (its handle gone, as after a close that
# raced it): the error names gdr_copy_*, held or not.
for n in (16, HELD + 1):
    m._hbox.value, saved = 0, m._hbox.value
    handle, m._pin.handle = m._pin.handle, 0
    try:
        for call, function in ((lambda: m.read(n), "gdr_copy_from_mapping"),
                               (lambda: m.write(pattern(n)),
                                "gdr_copy_to_mapping")):
            mem.poison(POISON)
            e = raises(GdrmapError, call, match=function + ": ")
            CHECK(e is not None and e.errno == errno.EINVAL and
                  e.function == function, repr(e))
            CHECK(only(0, b""), "a refused copy wrote")
    finally:
        m._hbox.value, m._pin.handle = saved, handle
CHECK(m.read(4, 0) == mem.get(BASE, 4), "the Mapping after")
m.close()

check.done()
