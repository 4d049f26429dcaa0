# SPDX-License-Identifier: MIT
"""Mapping's flags through the compiled helper (over the mock library):
used when built, with the same bytes and values as the ctypes path;
refused after close (a method taken before close included) and in a
fork child (os.fork, and a plain fork() that Python's fork hooks never
see), nothing written; never for a copy-only pin; and the ctypes path
when there is no helper: GDRMAP_FASTFLAG=0, the helper missing, or
GDRMAP_FASTFLAG naming a file that cannot load (an error)."""

import ctypes
import os
import struct
import subprocess
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
import gdrmap	# noqa: E402
from gdrmap import GdrmapError, Mapping, _helper	# noqa: E402
from fakes import DeviceMemory	# noqa: E402

POISON = 0xA5
mem = DeviceMemory(1 << 18)
NATIVE = "<" if sys.byteorder == "little" else ">"

CHECK(gdrmap.helper_path() == os.path.realpath(check.HELPER),
      "helper_path() %r" % gdrmap.helper_path())
m = Mapping(mem.ptr + 64, 4096)
CHECK(m.fast_flags, "the Mapping uses the helper")
CHECK(type(m.load_u64).__name__ == "builtin_function_or_method",
      "load_u64 is the Window's: %r" % m.load_u64)


def only(start, data):
    whole = mem.get(0, mem.size)
    end = start + len(data)
    return whole[start:end] == data and \
        whole[:start] == bytes([POISON]) * start and \
        whole[end:] == bytes([POISON]) * (mem.size - end)


# The helper and the ctypes path (the class's methods) write and read the
# same bytes, at every aligned offset of the first lines.
bad = []
for width, fmt in ((4, "I"), (8, "Q")):
    fast_store = getattr(m, "store_u%d" % (8 * width))
    fast_load = getattr(m, "load_u%d" % (8 * width))
    slow_store = getattr(Mapping, "store_u%d" % (8 * width))
    slow_load = getattr(Mapping, "load_u%d" % (8 * width))
    for off in range(0, 256, width):
        v = (0x0102030405060708 * (off + 3)) & ((1 << (8 * width)) - 1) | 1
        packed = struct.pack(NATIVE + fmt, v)
        for how, store in (("helper", fast_store),
                           ("ctypes", lambda o, x: slow_store(m, o, x))):
            mem.poison(POISON)
            store(off, v)
            if not only(64 + off, packed):
                bad.append("%s store_u%d(%d)" % (how, 8 * width, off))
        mem.poison(POISON)
        mem.put(64 + off, packed)
        if fast_load(off) != v or slow_load(m, off) != v:
            bad.append("load_u%d(%d)" % (8 * width, off))
CHECK(not bad, "flags: %s" % bad[:5])

# Errors are the ctypes path's, raised through the helper.
mem.poison(POISON)
raises(ValueError, m.load_u64, 4, match="is not a multiple of 8")
raises(ValueError, m.load_u64, 4096, match="not inside the mapping")
raises(TypeError, m.load_u64, "8", match="offset must be an integer")
raises(ValueError, m.store_u32, 0, 1 << 32, match="does not fit in 32")
raises(ValueError, m.store_u64, 0, -1, match="does not fit")
raises(TypeError, m.store_u64, 0, 1.5, match="value must be an integer")
CHECK(mem.get(0, mem.size) == bytes([POISON]) * mem.size,
      "a refused flag wrote")
# wait() polls through it.
mem.put(64 + 16, struct.pack(NATIVE + "Q", 41))
CHECK(m.wait(16, 41, timeout=1) == 41, "wait through the helper")

# Closed: refused, also through a method taken before close; nothing
# written.
load, store = m.load_u64, m.store_u64
m.close()
mem.poison(POISON)
for name, call in (("load_u64", lambda: m.load_u64(8)),
                   ("store_u64", lambda: m.store_u64(8, 1)),
                   ("load_u32", lambda: m.load_u32(8)),
                   ("store_u32", lambda: m.store_u32(8, 1)),
                   ("taken load", lambda: load(8)),
                   ("taken store", lambda: store(8, 1)),
                   ("wait", lambda: m.wait(8, 1))):
    raises(ValueError, call, match="the Mapping is closed")
CHECK(mem.get(0, mem.size) == bytes([POISON]) * mem.size,
      "a closed Mapping wrote")
# A method that outlives its Mapping.
m = Mapping(mem.ptr + 64, 64)
load = m.load_u64
del m
raises(ValueError, load, 0, match="the Mapping is closed")

# fork: the child cannot use the parent's Mapping through the helper,
# whether Python's fork hooks ran (os.fork) or not (fork() from C).
m = Mapping(mem.ptr + 64, 64)
m.store_u64(0, 77)
libc = ctypes.CDLL(None)
for how, fork, refusal, words in (
        ("os.fork", os.fork, ValueError,
         "made by the parent process before fork()"),
        ("fork()", libc.fork, GdrmapError, "parent process")):
    r, w = os.pipe()
    pid = fork()
    if pid == 0:
        report = []
        try:
            for call in (lambda: m.load_u64(0), lambda: m.store_u64(0, 5)):
                try:
                    call()
                    report.append("the parent's Mapping worked")
                except refusal as e:
                    if words not in str(e):
                        report.append("refused with %r" % str(e))
            if mem.get(64, 8) != struct.pack(NATIVE + "Q", 77):
                report.append("the child's store arrived")
        except BaseException as e:
            report.append(repr(e))
        finally:
            os.write(w, ("\n".join(report) or "ok").encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        child = f.read()
    os.waitpid(pid, 0)
    CHECK(child == "ok", "%s: %s" % (how, child))
CHECK(m.load_u64(0) == 77 and m.fast_flags, "the parent after fork")
m.store_u64(0, 78)
CHECK(mem.get(64, 8) == struct.pack(NATIVE + "Q", 78), "parent's store")
m.close()


# Copy-only pins (type 0) are never read by the CPU: no Window.
class Pin:
    type_code, cpu = 0, mem.ptr

    class src:
        size, readonly = 64, False


CHECK(_helper.window(object(), Pin, (None,) * 4) is None,
      "a Window for a copy-only pin")
Pin.type_code = 1
CHECK(_helper.window(Pin, Pin, (len,) * 4) is not None,
      "no Window for a write-combined pin")

# No helper: the class's methods (ctypes), the same results.
saved = _helper.helper
_helper.helper = lambda: None
try:
    m = Mapping(mem.ptr + 64, 64)
    CHECK(not m.fast_flags and "load_u64" not in vars(m),
          "without the helper the Mapping has its class's methods")
    mem.poison(POISON)
    m.store_u64(8, 0x1122334455667788)
    CHECK(only(72, struct.pack(NATIVE + "Q", 0x1122334455667788)) and
          m.load_u64(8) == 0x1122334455667788, "ctypes flags")
    m.close()
    raises(ValueError, m.load_u64, 8, match="the Mapping is closed")
finally:
    _helper.helper = saved

SCRIPT = r"""
import sys
sys.path[:0] = %r
import check
check.use_mock()
from fakes import DeviceMemory, Mock
import gdrmap
mem = DeviceMemory(1 << 16)
try:
    m = gdrmap.Mapping(mem.ptr, 64)
except gdrmap.GdrmapError as e:
    print("error", e)
    print("pins", Mock().live()[1])
else:
    m.store_u64(8, 5)
    print("fast", m.fast_flags, m.load_u64(8))
print("helper", gdrmap.helper_path())
""" % ([os.path.dirname(os.path.abspath(__file__)), check.PYTHON_DIR],)


def run(value):
    env = dict(os.environ, GDRMAP_FASTFLAG=value)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env,
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


rc, out = run("0")
CHECK(rc == 0 and "helper None" in out and "fast False 5" in out,
      "GDRMAP_FASTFLAG=0: %s" % out)
rc, out = run("/nonexistent/_fastflag.abi3.so")
CHECK(rc != 0 and "GDRMAP_FASTFLAG=/nonexistent/_fastflag.abi3.so cannot "
      "be used" in out and "to 0 for none" in out and "pins 0" in out,
      "GDRMAP_FASTFLAG naming no file (refused before pinning): %s" % out)
rc, out = run(check.MOCK_LIBRARY)	# a shared object, not the helper
CHECK(rc != 0 and "cannot be used" in out, "GDRMAP_FASTFLAG naming "
      "another library: %s" % out)

check.done()
