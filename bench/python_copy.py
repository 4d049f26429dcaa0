# SPDX-License-Identifier: MIT
"""Moving an array's bytes between GPU memory and host memory from Python,
at every size from 8 bytes to 64 MiB, through gdrmap's Mapping against
PyTorch's copies, in one run, on every GPU, for each kind of host buffer:

  pinned tensor     torch.empty(...).pin_memory() (CUDA's pinned memory)
  pageable tensor   torch.empty(...) on the CPU, touched
  pageable numpy    numpy.empty(...), touched (PyTorch copies it through
                    torch.from_numpy, the same memory)

Per kind, from and to that buffer:

  read:  Mapping.readinto(host) (the library's fastest path for the size
         and the buffer's kind, gdrmap_copy_from_mapping), the same by
         each path named (path='mapping', 'threads', 'dma', 'staged'; a
         path that cannot serve is shown refused, with why),
         host.copy_(dev, non_blocking=True) + torch.cuda.synchronize();
         for the pageable tensor also dev.cpu()
  write: Mapping.write(host) (gdrmap_copy_to_mapping), each path named,
         dev.copy_(host, non_blocking=True) + synchronize

with the path Mapping.copy_path(n, host=...) says the library takes for
that buffer.  The header names the compiled helper Mapping's calls go
through (gdrmap.helper_path()); without one they go through ctypes and
each pays several microseconds more, so run it as
bench/python-gpu-run.sh does, with the helper.  The GPU memory is one
gdrmap.mem_alloc allocation
(cuMemCreate: every backend maps it), seen by PyTorch through
__cuda_array_interface__ (no copy).  Each cell is timed call by call for
about SECONDS (default 0.1), 20 rounds at least, after a warm-up (which also lets the library
finish timing its paths for that size and kind), all cells of a size and
kind interleaved: rounds in a shuffled order, each cell's turn in a
round one timed call (--paired: an untimed call, then a timed one, as
`gdrmap copylat --paths` times them); p50 in microseconds and GB/s.  After each size the bytes are checked both
ways through the same host buffer, by the path Mapping takes.

The targets, in the summary lines: from the pinned tensor, Mapping's p50
at most 1.1x PyTorch's copy_(non_blocking=True) + synchronize at every
size; from and to pageable memory at 4 MiB and above, at least 2x
PyTorch's throughput from the same buffer.

usage: python_copy.py OUTDIR [SECONDS] [--paired]  (from the top of the tree; not
pinned: the threads and staged paths use the process's other CPUs).
Writes OUTDIR/python_copy.json and .txt.  About 3 x 10 sizes x 12 cells
x SECONDS per GPU, twice (a pass of rounds not counted before the one
timed: the library's watch then sees its paths interleaved), plus the
warm-ups and the checks: about two minutes per GPU at the default (an
estimate).
"""

import ctypes
import gc
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "python"))
import gdrmap	# noqa: E402
import torch	# noqa: E402
try:
    import numpy
except ImportError:	# the numpy kind is then left out
    numpy = None

PAIRED = "--paired" in sys.argv[1:]
args = [a for a in sys.argv[1:] if a != "--paired"]
out_dir = args[0]
SECONDS = float(args[1]) if len(args) > 1 else 0.1
SIZES = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20,
         16 << 20, 64 << 20]
MAX = SIZES[-1]
PATHS = ("mapping", "threads", "dma", "staged")
# The targets: pinned, Mapping within 1.1x of PyTorch's p50; pageable,
# from 4 MiB, at least 2x PyTorch's throughput.
PINNED_RATIO, PAGEABLE_SPEEDUP, PAGEABLE_FROM = 1.1, 2.0, 4 << 20
clock = time.perf_counter_ns
# Without the compiled helper (gdrmap/_fastflag), each Mapping call goes
# through ctypes: on an H200's host, 5-10 us more per call than with it,
# enough to put DMA-sized copies past PyTorch's.
NO_HELPER = ("none: every Mapping call goes through ctypes (several us "
             "more each); build it (make python-helper) or set "
             "GDRMAP_FASTFLAG")
# Seeded: a rerun shuffles the same way.
shuffle = random.Random(1).shuffle


# The fewest rounds a cell gets, as copylat --paths's fewest calls: the
# 64 MiB cells' rounds take about 0.16 s on an H200, so SECONDS gives them
# a handful, and a median of nine calls, each after a shuffled neighbour
# (a 64 MiB write through the mapping still draining, or not), put a
# pinned 64 MiB DMA write at 2.24 ms where the same path forced in the
# same rounds took 1.31.
MIN_ROUNDS = 20


def timed_together(cells):
    """Time every fn of cells ({name: fn}) call by call, interleaved: each
    cell takes a turn per round, in an order shuffled anew each round, so
    that drift (clocks, the copy engines' state) and what ran just before
    hit them all alike; in a fixed rotation each cell would always follow
    the same one.  A turn is one timed call, which pays for what the cell
    before it left behind: posted writes through the mapping still
    draining, the host buffer dirty in other cores' caches, helper threads
    gone to sleep during a slow cell.  Measured on an H200, a 4 MiB staged
    read took 140-180 us after one of its own, 200-250 after a 1 ms sleep
    and 280-320 after a threaded read of the same buffer.  With PAIRED, a
    turn is an untimed call and a timed one, so that every timed call
    follows one of its own, as copylat --paths times them.  Rounds for
    about SECONDS per cell, at least MIN_ROUNDS, at most 20000."""
    fns = list(cells.items())
    for _, fn in fns:
        for _ in range(5):
            fn()
    samples = [[] for _ in fns]
    k = len(fns)
    gc.disable()
    try:
        end = clock() + int(SECONDS * k * 1e9)
        r = 0
        order = list(range(k))
        while r < MIN_ROUNDS or (clock() < end and r < 20000):
            shuffle(order)
            for j in order:
                if PAIRED:
                    fns[j][1]()
                t0 = clock()
                fns[j][1]()
                samples[j].append(clock() - t0)
            r += 1
    finally:
        gc.enable()
    out = {}
    for (name, _), s in zip(fns, samples):
        s.sort()
        out[name] = {"p50_ns": s[len(s) // 2], "min_ns": s[0], "n": len(s)}
    return out


class Device:
    """A device pointer as __cuda_array_interface__, for torch.as_tensor."""

    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {
            "shape": (size,), "typestr": "|u1", "data": (ptr, False),
            "version": 3}


def host_buffers():
    """{kind: (tensor PyTorch copies, memoryview Mapping copies, its
    address)}, each MAX bytes, every page touched."""
    pinned = torch.empty(MAX, dtype=torch.uint8).pin_memory()
    pageable = torch.empty(MAX, dtype=torch.uint8)
    pinned.zero_()
    pageable.zero_()
    out = {}
    for kind, t in (("pinned tensor", pinned), ("pageable tensor", pageable)):
        view = memoryview((ctypes.c_char * MAX).from_address(
            t.data_ptr())).cast("B")
        out[kind] = (t, view, t.data_ptr())
    if numpy is not None:
        array = numpy.zeros(MAX, dtype=numpy.uint8)
        array.fill(0)
        out["pageable numpy"] = (torch.from_numpy(array), memoryview(array),
                                 array.ctypes.data)
    return out


def run_device(dev):
    torch.cuda.set_device(dev)
    ptr = gdrmap.mem_alloc(MAX, dev)
    try:
        return measure(ptr, dev)
    finally:
        torch.cuda.synchronize()
        gdrmap.mem_free(ptr)


def cells_of(m, h, ht, d, kind):
    """The calls of one size and kind, by name ("way: what"); a path that
    cannot serve maps to its refusal (a str)."""
    fns = {}
    for way, call, copy in (
            ("read", m.readinto, lambda: ht.copy_(d, non_blocking=True)),
            ("write", m.write, lambda: d.copy_(ht, non_blocking=True))):
        fns["%s: Mapping.%s" % (way, call.__name__)] = \
            lambda call=call: call(h)
        for path in PATHS:
            name = "%s: path=%s" % (way, path)
            try:
                call(h, path=path)
            except gdrmap.GdrmapError as e:
                fns[name] = "refused: %s" % e
                continue
            fns[name] = lambda call=call, path=path: call(h, path=path)

        def torch_copy(copy=copy):
            copy()
            torch.cuda.synchronize()
        fns["%s: PyTorch copy_ + sync" % way] = torch_copy
        if way == "read" and kind == "pageable tensor":
            fns["read: dev.cpu()"] = lambda: d.cpu()
    return fns


def check(m, h, addr, d, n, want):
    """The bytes arrive both ways through h (at addr), by the path Mapping
    takes, and PyTorch sees them on the GPU (d: the device tensor)."""
    h[:n] = want[:n]
    m.write(h[:n])
    k = min(n, 4096)
    assert bytes(d[:k].cpu().tolist()) == bytes(want[:k]), \
        "size %d: PyTorch does not see the bytes written" % n
    ctypes.memset(addr, 0, n)
    m.readinto(h[:n])
    same = h[:n] == want[:n] if numpy is None else numpy.array_equal(
        numpy.frombuffer(h, numpy.uint8, n),
        numpy.frombuffer(want, numpy.uint8, n))
    assert same, "size %d: the bytes read back differ" % n


def settle(m, host, n, addr):
    """Copy n bytes both ways until the library has chosen the paths for
    their size and this kind of host buffer (copy_path no longer 'auto'),
    at most 100 calls each: its measuring copies (a 64 MiB read through
    the mapping among them, 90 ms) are then not in the figures."""
    for write in (False, True):
        for _ in range(100):
            if m.copy_path(n, write=write, host=addr) != "auto":
                break
            if write:
                m.write(host)
            else:
                m.readinto(host)


def measure(ptr, dev):
    r = {}
    dev_t = torch.as_tensor(Device(ptr, MAX), device="cuda:%d" % dev)
    pattern = bytes((i * 7 + 1) % 251 + 1 for i in range(4096))
    want = memoryview(pattern * (MAX // 4096))
    with gdrmap.Mapping(ptr, MAX) as m:
        for kind, (host_t, host, addr) in host_buffers().items():
            r[kind] = {}
            for n in SIZES:
                settle(m, host[:n], n, addr)
                fns = cells_of(m, host[:n], host_t[:n], dev_t[:n], kind)
                live = {k: f for k, f in fns.items() if not isinstance(f, str)}
                # A pass not counted: the library's choice was made in
                # back-to-back calls (settle); its watch sees its paths in
                # the rounds' pattern here, as a caller's pattern over its
                # own first copies (on an H200, 16 MiB pageable writes by
                # the staged path: 0.46 ms back to back, 0.83 in rounds,
                # where threads took 0.60).
                timed_together(live)
                cell = {"read path": m.copy_path(n, host=addr),
                        "write path": m.copy_path(n, write=True, host=addr)}
                # In fns' order (the table's columns); refusals as they are.
                times = timed_together(live)
                cell.update((k, times.get(k, f)) for k, f in fns.items())
                check(m, host, addr, dev_t, n, want)
                cell["read path after"] = m.copy_path(n, host=addr)
                cell["write path after"] = m.copy_path(n, write=True,
                                                       host=addr)
                r[kind][str(n)] = cell
    return r


def size_name(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def p50_us(cell, name):
    s = cell.get(name)
    return None if s is None or isinstance(s, str) else s["p50_ns"] / 1e3


def table(lines, dev, kind, r, way):
    names = [k[len(way) + 2:] for k in r[str(SIZES[0])]
             if k.startswith(way + ": ")]
    lines.append("")
    lines.append("GPU %s, %s, %ss, p50 us (GB/s); path: what Mapping took" %
                 (dev, kind, way))
    lines.append("  %-8s %-8s" % ("size", "path") +
                 "".join(" %22s" % n[:22] for n in names) +
                 "  Mapping fastest?")
    for n in SIZES:
        cell = r[str(n)]
        row, best, auto = "", None, None
        for name in names:
            us = p50_us(cell, way + ": " + name)
            if us is None:
                row += " %22s" % "refused"
                continue
            row += " %12.2f (%6.2f)" % (us, n / us / 1e3)
            best = us if best is None else min(best, us)
            if name.startswith("Mapping"):
                auto = us
        if auto is None:
            verdict = "-"
        elif auto <= best * 1.1:
            verdict = "yes"
        else:
            verdict = "no (%.0f%% over)" % (100 * (auto / best - 1))
        lines.append("  %-8s %-8s" % (size_name(n),
                                      cell["%s path after" % way]) +
                     row + "  " + verdict)


def targets(kind, r, way):
    """The target line of a kind and way, and whether it was met."""
    auto = "%s: Mapping.%s" % (way, "readinto" if way == "read" else "write")
    torch_ = "%s: PyTorch copy_ + sync" % way
    pairs = [(n, p50_us(r[str(n)], auto), p50_us(r[str(n)], torch_))
             for n in SIZES]
    pairs = [(n, a, t) for n, a, t in pairs if a and t]
    if not pairs:
        return "%s %ss: nothing to compare" % (kind, way), False
    if kind.startswith("pinned"):
        worst = max(pairs, key=lambda x: x[1] / x[2])
        ok = all(a / t <= PINNED_RATIO for _, a, t in pairs)
        return ("%s %ss: Mapping's p50 at most %.1fx PyTorch's at every "
                "size: %s (worst %.2fx at %s)" %
                (kind, way, PINNED_RATIO, "yes" if ok else "no",
                 worst[1] / worst[2], size_name(worst[0]))), ok
    big = [(n, a, t) for n, a, t in pairs if n >= PAGEABLE_FROM]
    if not big:
        return "%s %ss: no size from %s" % (kind, way,
                                            size_name(PAGEABLE_FROM)), False
    worst = min(big, key=lambda x: x[2] / x[1])
    ok = all(t / a >= PAGEABLE_SPEEDUP for _, a, t in big)
    return ("%s %ss from %s: Mapping's throughput at least %.0fx "
            "PyTorch's: %s (worst %.2fx at %s)" %
            (kind, way, size_name(PAGEABLE_FROM), PAGEABLE_SPEEDUP,
             "yes" if ok else "no", worst[2] / worst[1],
             size_name(worst[0]))), ok


lib = gdrmap._lib.library()
results = {"machine": {
    "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    "gpus": [torch.cuda.get_device_name(i)
             for i in range(torch.cuda.device_count())],
    "cpu_affinity": sorted(os.sched_getaffinity(0)),
    "python": sys.version.split()[0], "torch": torch.__version__,
    "numpy": numpy and numpy.__version__, "backend": gdrmap.backend(),
    "library_has_gdrmap_copy": lib.gdrmap_copy_from_mapping is not None,
    "library_has_gdrmap_copy_path_host":
        lib.gdrmap_copy_path_host is not None,
    "commit": os.environ.get("GDRMAP_COMMIT"), "seconds_per_cell": SECONDS,
    "turn": "an untimed call, then a timed one" if PAIRED else "one call",
    "flag_helper": gdrmap.helper_path() or NO_HELPER,
}, "devices": {}}
for dev in range(torch.cuda.device_count()):
    results["devices"][str(dev)] = run_device(dev)

lines = ["%s: %s" % kv for kv in results["machine"].items()]
summary = []
for dev, by_kind in results["devices"].items():
    for kind, r in by_kind.items():
        for way in ("read", "write"):
            table(lines, dev, kind, r, way)
            text, ok = targets(kind, r, way)
            summary.append("GPU %s, %s" % (dev, text))
results["targets"] = summary
lines += [""] + summary
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "python_copy.json"), "w") as f:
    json.dump(results, f, indent=2)
text = "\n".join(lines) + "\n"
with open(os.path.join(out_dir, "python_copy.txt"), "w") as f:
    f.write(text)
print(text, end="")
