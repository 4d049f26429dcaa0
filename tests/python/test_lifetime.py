# SPDX-License-Identifier: MIT
"""Lifetime: one library instance per process; close by `with`, close()
(idempotent), garbage collection and interpreter exit, always unmapping
before unpinning; every use after close refused; close failing; close
racing copies in other threads; fork."""

import errno
import gc
import os
import subprocess
import sys
import threading

import check
from check import check as CHECK, raises

check.use_mock()
import gdrmap	# noqa: E402
from gdrmap import GdrmapError, Mapping	# noqa: E402
from fakes import DeviceMemory, FakeCAI, Mock, pattern	# noqa: E402

mock = Mock()
mem = DeviceMemory(1 << 20)
mock.events()

# One instance for every Mapping of the process.
a, b = Mapping(mem.ptr, 64), Mapping(FakeCAI(mem.ptr + 65536, (64,)))
CHECK(mock.live() == (1, 2, 2), "live %r" % (mock.live(),))
CHECK(mock.events() == ["open", "pin", "map", "pin", "map"], "one open")

# close(): unmap, then unpin, once.
a.close()
a.close()
CHECK(a.closed and mock.events() == ["unmap", "unpin"], "close twice")
# with: closed on the way out, also by an exception.
try:
    with b as m:
        CHECK(m is b and not m.closed, "with returns the Mapping")
        raise KeyError("inside")
except KeyError:
    pass
CHECK(b.closed and mock.events() == ["unmap", "unpin"], "with")
raises(ValueError, b.__enter__, match="closed")

# Every use after close is refused, and says so.
calls = {
    "read": lambda: b.read(8), "read 0": lambda: b.read(0),
    "readinto": lambda: b.readinto(bytearray(8)),
    "write": lambda: b.write(b"x"), "load_u32": lambda: b.load_u32(0),
    "load_u64": lambda: b.load_u64(8), "store_u32": lambda: b.store_u32(0, 1),
    "store_u64": lambda: b.store_u64(0, 1), "wait": lambda: b.wait(0, 1),
    "big read": lambda: b.read(64),
}
for name, call in calls.items():
    raises(ValueError, call, match="the Mapping is closed")
CHECK(b.obj is None, "the object is let go at close")

# Garbage collection closes, in order; so does a reference cycle.
m = Mapping(mem.ptr, 64)
del m
gc.collect()
c = Mapping(mem.ptr, 64)
c.me = c
del c
gc.collect()
CHECK(mock.events() == ["pin", "map", "unmap", "unpin"] * 2,
      "garbage collection")
CHECK(mock.live() == (1, 0, 0), "live after collection %r" % (mock.live(),))

# close() failing: the error is raised, the Mapping is closed anyway.
m = Mapping(mem.ptr, 64)
mock.fail("unmap", errno.EIO, "mock: the unmap failed")
e = raises(GdrmapError, m.close, match="gdr_unmap: mock: the unmap failed")
CHECK(e is not None and e.errno == errno.EIO, "errno of a failed close")
CHECK(m.closed, "closed after a failed close")
m.close()
raises(ValueError, m.load_u64, 0, match="closed")

# Flag offsets used before close (their addresses are remembered) are
# refused after it all the same.
m = Mapping(mem.ptr, 64)
m.store_u64(8, 99)
m.store_u32(4, 7)
CHECK(m.load_u64(8) == 99 and m.load_u32(4) == 7, "flags before close")
m.close()
for name, call in (("load_u64", lambda: m.load_u64(8)),
                   ("store_u64", lambda: m.store_u64(8, 1)),
                   ("load_u32", lambda: m.load_u32(4)),
                   ("store_u32", lambda: m.store_u32(4, 1))):
    raises(ValueError, call, match="the Mapping is closed")
CHECK(mem.get(8, 8) == (99).to_bytes(8, "little"),
      "no store reached the memory after close")

# close() while other threads copy: each copy either completes with the
# right bytes or is refused as closed; none touches an unmapped page.
SIZE = 256 << 10
mem.put(0, pattern(SIZE))
m = Mapping(mem.ptr, SIZE)
outcomes = {"ok": 0, "closed": 0, "wrong": []}
lock = threading.Lock()
started = threading.Barrier(3)


def copier(n):
    started.wait()
    while True:
        try:
            data = m.read(n) if n > 8 else m.load_u64(0).to_bytes(8, "little")
        except ValueError as e:
            with lock:
                if "closed" in str(e):
                    outcomes["closed"] += 1
                else:
                    outcomes["wrong"].append(repr(e))
            return
        except Exception as e:
            with lock:
                outcomes["wrong"].append(repr(e))
            return
        with lock:
            if data == pattern(SIZE)[:len(data)] or n == 8:
                outcomes["ok"] += 1
            else:
                outcomes["wrong"].append("wrong bytes")


threads = [threading.Thread(target=copier, args=(n,)) for n in (SIZE, 8)]
for t in threads:
    t.start()
started.wait()
while outcomes["ok"] < 20 and all(t.is_alive() for t in threads):
    threading.Event().wait(0.001)
m.close()
for t in threads:
    t.join(30)
CHECK(not any(t.is_alive() for t in threads), "a copier hangs")
CHECK(outcomes["closed"] == 2 and not outcomes["wrong"], repr(outcomes))

# Interpreter exit: what is still open is closed (unmap before unpin),
# then the instance; nothing printed, exit status 0.
SCRIPT = r"""
import atexit, sys
sys.path[:0] = %r
import check
check.use_mock()
from fakes import DeviceMemory, Mock
mock = Mock()
atexit.register(lambda: print("at exit", mock.live(), mock.events()))
import gdrmap
mem = DeviceMemory(1 << 18)
closed = gdrmap.Mapping(mem.ptr, 64)
closed.close()
kept = gdrmap.Mapping(mem.ptr + 65536, 64)
cycle = gdrmap.Mapping(mem.ptr + 2 * 65536, 64)
cycle.me = cycle
mock.events()
""" % ([os.path.dirname(os.path.abspath(__file__)), check.PYTHON_DIR],)
done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True,
                      text=True, timeout=60)
CHECK(done.returncode == 0 and done.stderr == "", done.stderr)
CHECK("at exit (0, 0, 0) ['unmap', 'unpin', 'unmap', 'unpin', 'close']"
      in done.stdout, done.stdout)

# fork(): the child cannot use the parent's Mappings (and does not unpin
# them), makes its own, and closes only those at exit; the parent's keep
# working.
m = Mapping(mem.ptr, 64)
m.store_u64(0, 77)
mock.events()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    report = []
    try:
        m.load_u64(0)
        report.append("the parent's Mapping worked in the child")
    except ValueError as e:
        if "made by the parent process before fork()" not in str(e):
            report.append("wrong refusal: %s" % e)
    mine = Mapping(mem.ptr + 65536, 64)
    mine.store_u64(0, 5)
    if mine.load_u64(0) != 5:
        report.append("the child's own Mapping failed")
    gdrmap._lib._at_exit()
    if mock.events() != ["open", "pin", "map", "unmap", "unpin", "close"]:
        report.append("child's events: %r" % mock.events(False))
    os.write(w, ("\n".join(report) or "ok").encode())
    os._exit(0)
os.close(w)
with os.fdopen(r) as f:
    child = f.read()
os.waitpid(pid, 0)
CHECK(child == "ok", child)
CHECK(m.load_u64(0) == 77 and mock.events() == [], "the parent after fork")
m.close()

check.done()
