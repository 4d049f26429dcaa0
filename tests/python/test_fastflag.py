# SPDX-License-Identifier: MIT
"""The compiled flag helper (gdrmap/_fastflag.c) against ordinary memory:
its loads and stores at every width and aligned offset change exactly the
bytes asked for, with poisoned neighbours; a Window serves in-range,
aligned plain ints itself and hands everything else (out of range,
misaligned, negative, too wide, not an int, keywords, read-only, closed,
in a fork child) to its fallbacks untouched; its fences are the
library's (lib/isa/fence.h, linked as gdrmap/fence.h)."""

import ctypes
import os
import re
import struct
import sys

import check
from check import check as CHECK, raises

if os.environ.get("GDRMAP_FASTFLAG") == "0":
    check.skip("GDRMAP_FASTFLAG=0: no helper to test")
    check.done()
if not check.HELPER:
    print("the helper is not built for this Python: make python-tests",
          file=sys.stderr)
    sys.exit(1)
from gdrmap import _helper	# noqa: E402

os.environ["GDRMAP_FASTFLAG"] = check.HELPER
ff = _helper.helper()
CHECK(ff is not None and _helper.path() == os.path.realpath(check.HELPER),
      "the helper loads: %r" % (_helper.path(),))

POISON = 0xA5
SIZE = 256
buf = (ctypes.c_ubyte * (SIZE + 64))()
# 64-byte aligned, so that offsets are alignments.
BASE = (ctypes.addressof(buf) + 63) & ~63
NATIVE = "<" if sys.byteorder == "little" else ">"
FMT = {1: "B", 2: "H", 4: "I", 8: "Q"}


def poison():
    ctypes.memset(BASE, POISON, SIZE)


def memory():
    return ctypes.string_at(BASE, SIZE)


def value_for(width, off):
    """A value with no zero and no poison byte, different per offset."""
    v = 0
    for i in range(width):
        b = (off * 7 + i * 13 + 1) % 250 + 1
        v |= (0x5A if b == POISON else b) << (8 * i)
    return v


# Raw stores and loads at every width and aligned offset.
bad = []
for width in (1, 2, 4, 8):
    for off in range(0, SIZE - width + 1, width):
        v = value_for(width, off)
        packed = struct.pack(NATIVE + FMT[width], v)
        poison()
        ff.store(BASE + off, width, v)
        want = bytes([POISON]) * off + packed + \
            bytes([POISON]) * (SIZE - off - width)
        if memory() != want:
            bad.append("store width %d at %d" % (width, off))
        poison()
        ctypes.memmove(BASE + off, packed, width)
        if ff.load(BASE + off, width) != v:
            bad.append("load width %d at %d" % (width, off))
        if memory() != want:
            bad.append("load width %d at %d wrote" % (width, off))
CHECK(not bad, "raw accesses: %s" % bad[:5])

# The raw functions refuse what they cannot do, and change nothing.
poison()
raises(ValueError, ff.load, BASE + 1, 2, match="aligned")
raises(ValueError, ff.load, BASE, 3, match="width")
raises(ValueError, ff.load, 0, 8, match="non-zero")
raises(ValueError, ff.store, BASE + 4, 8, 1, match="aligned")
raises(ValueError, ff.store, BASE, 1, 256, match="does not fit")
raises(OverflowError, ff.store, BASE, 8, -1)
raises(TypeError, ff.store, BASE, 8)
CHECK(memory() == bytes([POISON]) * SIZE, "a refused raw access wrote")


# A Window over [BASE + 8, +64): what it serves, and what it hands on.
calls = []


def fallback(name):
    def call(*args, **kwargs):
        calls.append((name, args, kwargs))
        return "fallback"
    return call


NAMES = ("load_u32", "load_u64", "store_u32", "store_u64")
FALLBACKS = tuple(fallback(n) for n in NAMES)
W0, WSIZE = BASE + 8, 64
w = ff.Window(W0, WSIZE, False, FALLBACKS)
CHECK(not w.closed, "a new Window is open")

bad = []
for width, load, store in ((4, w.load_u32, w.store_u32),
                           (8, w.load_u64, w.store_u64)):
    for off in range(0, WSIZE - width + 1, width):
        v = value_for(width, off + 1000)
        packed = struct.pack(NATIVE + FMT[width], v)
        poison()
        if store(off, v) is not None:
            bad.append("store returned")
        want = bytes([POISON]) * (8 + off) + packed + \
            bytes([POISON]) * (SIZE - 8 - off - width)
        if memory() != want:
            bad.append("Window store width %d at %d" % (width, off))
        if load(off) != v:
            bad.append("Window load width %d at %d" % (width, off))
CHECK(not bad and not calls, "Window accesses: %s %s" % (bad[:5], calls))
# The greatest values, and offset 0 by default.
poison()
w.store_u64(0, (1 << 64) - 1)
w.store_u32(8, (1 << 32) - 1)
CHECK(w.load_u64() == (1 << 64) - 1 and w.load_u32(8) == (1 << 32) - 1 and
      memory()[8:24] == b"\xff" * 12 + bytes([POISON]) * 4,
      "greatest values: %r" % memory()[:32])
CHECK(not calls, "served by the Window: %r" % calls)


class Index:
    """An integer that is not an int (as numpy.int64)."""

    def __index__(self):
        return 8


# Handed on, with the arguments as they came, and nothing touched.
HANDED = [
    ("load_u64", (WSIZE - 4,), {}), ("load_u64", (WSIZE,), {}),
    ("load_u64", (-8,), {}), ("load_u64", (1 << 70,), {}),
    ("load_u64", (4,), {}), ("load_u32", (2,), {}),
    ("load_u64", (True,), {}), ("load_u64", (Index(),), {}),
    ("load_u64", (8.0,), {}), ("load_u64", (), {"offset": 8}),
    ("load_u64", (8, 9), {}),
    ("store_u64", (4, 1), {}), ("store_u64", (WSIZE, 1), {}),
    ("store_u32", (0, 1 << 32), {}), ("store_u64", (0, 1 << 64), {}),
    ("store_u64", (0, -1), {}), ("store_u64", (0, True), {}),
    ("store_u64", (0, 1.0), {}), ("store_u64", (0,), {}),
    ("store_u64", (0,), {"value": 1}), ("store_u64", (Index(), 1), {}),
]
poison()
for name, args, kwargs in HANDED:
    del calls[:]
    result = getattr(w, name)(*args, **kwargs)
    CHECK(result == "fallback" and len(calls) == 1 and
          calls[0][0] == name and calls[0][2] == kwargs and
          len(calls[0][1]) == len(args) and
          all(a is b for a, b in zip(calls[0][1], args)),
          "%s%r %r: %r" % (name, args, kwargs, calls))
CHECK(memory() == bytes([POISON]) * SIZE, "a handed-on call wrote")

# A fallback's exception comes through as it is.


def refuse(*args):
    raise KeyError("refused: %r" % (args,))


r = ff.Window(W0, WSIZE, False, (refuse,) * 4)
raises(KeyError, r.load_u64, 3, match="refused: (3,)")

# Read-only: loads served, every store handed on.
ro = ff.Window(W0, WSIZE, True, FALLBACKS)
poison()
del calls[:]
ctypes.memmove(W0 + 16, struct.pack(NATIVE + "Q", 77), 8)
CHECK(ro.load_u64(16) == 77 and not calls, "read-only load")
CHECK(ro.store_u64(16, 1) == "fallback" and calls[0][0] == "store_u64",
      "read-only store handed on")
CHECK(ff.load(W0 + 16, 8) == 77, "a read-only store wrote")

# A Window smaller than the value, and one at a misaligned base.
small = ff.Window(W0, 4, False, FALLBACKS)
del calls[:]
CHECK(small.load_u64(0) == "fallback" and small.load_u64() == "fallback",
      "a 4-byte window reads no 8-byte value")
CHECK(small.load_u32(0) == ctypes.c_uint32.from_address(W0).value,
      "a 4-byte window reads 4 bytes")
odd = ff.Window(W0 + 1, 16, False, FALLBACKS)
CHECK(odd.load_u64(7) == ctypes.c_uint64.from_address(W0 + 8).value and
      odd.load_u64(0) == "fallback" and odd.load_u64() == "fallback",
      "alignment is of the address, not of the offset")

# Closed: everything handed on, for good.
w.close()
w.close()
del calls[:]
poison()
CHECK(w.closed and w.load_u64(0) == "fallback" and
      w.store_u64(0, 1) == "fallback" and len(calls) == 2,
      "a closed Window: %r" % calls)
CHECK(memory() == bytes([POISON]) * SIZE, "a closed Window wrote")

# A fork child (os.fork, or a plain fork() from C: the pthread_atfork
# count) has no Window of its parent's.
live = ff.Window(W0, WSIZE, False, FALLBACKS)
libc = ctypes.CDLL(None, use_errno=True)
for how, fork in (("os.fork", os.fork), ("fork()", libc.fork)):
    r, wfd = os.pipe()
    pid = fork()
    if pid == 0:
        try:
            del calls[:]
            ok = live.closed and live.load_u64(0) == "fallback" and \
                live.store_u64(0, 5) == "fallback" and len(calls) == 2
            mine = ff.Window(W0, WSIZE, False, FALLBACKS)
            mine.store_u64(0, 6)
            ok = ok and mine.load_u64(0) == 6 and not mine.closed
            os.write(wfd, b"ok" if ok else repr(calls).encode())
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(r) as f:
        child = f.read()
    os.waitpid(pid, 0)
    CHECK(child == "ok", "%s: the child %s" % (how, child))
del calls[:]
live.store_u64(0, 9)
CHECK(not live.closed and live.load_u64(0) == 9 and not calls,
      "the parent's Window after fork")

# Wrong construction.
raises(ValueError, ff.Window, 0, 8, False, FALLBACKS, match="range")
raises(ValueError, ff.Window, W0, 0, False, FALLBACKS, match="range")
raises(TypeError, ff.Window, W0, 8, False, FALLBACKS[:3], match="4")
raises(TypeError, ff.Window, W0, 8, False, (1, 2, 3, 4), match="callable")

# The fences are the library's: the helper includes gdrmap/fence.h, a
# link to lib/isa/fence.h, so there is no copy to drift.
FENCE_H = os.path.join(check.PYTHON_DIR, "gdrmap", "fence.h")
if os.path.isfile(os.path.join(check.TOP, "lib", "isa", "fence.h")):
    CHECK(os.path.islink(FENCE_H) and os.path.samefile(
        FENCE_H, os.path.join(check.TOP, "lib", "isa", "fence.h")),
        "python/gdrmap/fence.h is not a link to lib/isa/fence.h")
else:
    check.skip("no lib/isa/fence.h here")
check.done()
