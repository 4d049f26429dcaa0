# SPDX-License-Identifier: MIT
"""Copies through the mapping (the mock's "GPU memory" is host memory the
test sees): writes land exactly where asked and nowhere else, reads return
exactly the memory's bytes into any kind of buffer, at every size around
64-byte lines and the GIL threshold, at odd offsets; the flag helpers and
wait()."""

import array
import mmap
import struct
import sys
import threading
import time

import check
from check import check as CHECK, raises

check.use_mock()
from gdrmap import mapping	# noqa: E402
from gdrmap import Mapping	# noqa: E402
from fakes import DeviceMemory, pattern	# noqa: E402

try:
    import numpy
except ImportError:
    numpy = None
    check.skip("NumPy is not installed: NumPy buffers are not tested")

SIZE = 256 << 10
mem = DeviceMemory(SIZE)
POISON = 0xA5
HELD = mapping.GIL_HELD_MAX
SIZES = (1, 7, 63, 64, 65, 4095, HELD, HELD + 1, 100003)


def expect_only(start, data, what):
    """The memory holds data at start and the poison everywhere else."""
    whole = mem.get(0, SIZE)
    end = start + len(data)
    ok = whole[start:end] == data and \
        whole[:start] == bytes([POISON]) * start and \
        whole[end:] == bytes([POISON]) * (SIZE - end)
    if not ok:
        bad = [i for i in range(SIZE) if whole[i] != (
            data[i - start] if start <= i < end else POISON)]
        CHECK(False, "%s: %d wrong bytes, first at %d" % (what, len(bad),
                                                           bad[0]))
    else:
        CHECK(True)


# A Mapping that starts at an odd address inside the allocation; offsets
# are relative to it.
BASE = 4096 + 3
m = Mapping(mem.ptr + BASE, SIZE - BASE - 5)
for n in SIZES:
    for off in (0, 1, 61, 4096 + 17):
        data = pattern(n, seed=n + off)
        mem.poison(POISON)
        CHECK(m.write(data, off) == n, "write returns the bytes written")
        expect_only(BASE + off, data, "write %d at %d" % (n, off))

        # Reads see exactly the memory: poison the destination first.
        mem.put(BASE + off, data)
        CHECK(m.read(n, off) == data, "read %d at %d" % (n, off))
        dst = bytearray(b"\x3c" * (n + 10))
        view = memoryview(dst)[5:5 + n]
        CHECK(m.readinto(view, off) == n, "readinto returns n")
        CHECK(dst == b"\x3c" * 5 + data + b"\x3c" * 5,
              "readinto %d at %d into the middle of a buffer" % (n, off))

# Every kind of buffer, both ways.
n = 4 * 1000
data = pattern(n, seed=9)
sources = [data, bytearray(data), memoryview(data), array.array("I", data)]
mm = mmap.mmap(-1, n)
mm.write(data)
sources.append(mm)
if numpy is not None:
    sources.append(numpy.frombuffer(data, dtype=numpy.float32).copy())
for src in sources:
    mem.poison(POISON)
    m.write(src, 8)
    expect_only(BASE + 8, data, "write from %s" % type(src).__name__)
mem.put(BASE + 8, data)
targets = [bytearray(n), array.array("I", bytes(n)), mmap.mmap(-1, n)]
if numpy is not None:
    targets.append(numpy.full(n // 4, 7, dtype=numpy.uint32))
    targets.append(numpy.zeros((10, n // 10), dtype=numpy.uint8))
for dst in targets:
    m.readinto(dst, 8)
    got = dst.tobytes() if hasattr(dst, "tobytes") else bytes(dst)
    CHECK(got == data, "readinto a %s" % type(dst).__name__)
if numpy is not None:
    # A non-contiguous NumPy array is refused, and left alone.
    strided = numpy.full(64, 7, dtype=numpy.uint8)[::2]
    raises(BufferError, m.readinto, strided, match="contiguous")
    CHECK((strided == 7).all(), "a refused readinto wrote")

# Flags and counters: native byte order, exactly their bytes.
native = "<" if sys.byteorder == "little" else ">"
for width, store, load in ((4, m.store_u32, m.load_u32),
                           (8, m.store_u64, m.load_u64)):
    fmt = native + ("I" if width == 4 else "Q")
    off = (-BASE) % 8 + 8 * 3	# an aligned address
    for value in (1, 0x5A5A5A5A, (1 << (8 * width)) - 2):
        mem.poison(POISON)
        store(off, value)
        expect_only(BASE + off, struct.pack(fmt, value),
                    "store_u%d(%d, %#x)" % (8 * width, off, value))
        mem.put(BASE + off, struct.pack(fmt, value ^ 0x3C))
        CHECK(load(off) == value ^ 0x3C, "load_u%d" % (8 * width))

# wait(): already there; written later by another thread; a predicate;
# a timeout that says what it saw.
FLAG = (-BASE) % 8 + 8 * 2
mem.put(BASE + FLAG, struct.pack(native + "Q", 5))
CHECK(m.wait(FLAG, 5, timeout=0) == 5, "wait for a value already there")


def later(value, delay):
    time.sleep(delay)
    mem.put(BASE + FLAG, struct.pack(native + "Q", value))


t = threading.Thread(target=later, args=(42, 0.05))
t.start()
start = time.monotonic()
CHECK(m.wait(FLAG, 42, timeout=10) == 42, "wait for a value written later")
CHECK(time.monotonic() - start < 5, "wait returned late")
t.join()
t = threading.Thread(target=later, args=(1000, 0.02))
t.start()
CHECK(m.wait(FLAG, lambda v: v >= 100, timeout=10, spin=0) == 1000,
      "wait with a predicate returns the value seen")
t.join()
raises(TimeoutError, m.wait, FLAG, 7, timeout=0.05,
           match="was still 1000 after 0.05 s")
mem.put(BASE + FLAG, struct.pack(native + "I", 9) + b"\xa5" * 4)
CHECK(m.wait(FLAG, 9, width=4, timeout=1) == 9, "wait on 4 bytes")

m.close()
check.done()
