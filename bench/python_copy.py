# SPDX-License-Identifier: MIT
"""Moving an array's bytes between GPU memory and pinned host memory from
Python, at every size from 8 bytes to 64 MiB, through gdrmap's Mapping
against PyTorch's copies, in one run, on every GPU:

  read:  Mapping.readinto(host) (the library's fastest path for the size,
         gdrmap_copy_from_mapping), the same by each path named
         (path='mapping', 'threads', 'dma'), host.copy_(dev,
         non_blocking=True) + torch.cuda.synchronize(), dev.cpu()
  write: Mapping.write(host) (gdrmap_copy_to_mapping), path='mapping' and
         'dma', dev.copy_(host, non_blocking=True) + synchronize

with the path Mapping.copy_path(n) says the library takes.  The GPU memory
is one gdrmap.mem_alloc allocation (cuMemCreate: every backend maps it),
seen by PyTorch through __cuda_array_interface__ (no copy); the host
buffer is PyTorch's pinned memory.  Each cell is timed call by call for
about SECONDS (default 0.2) after a warm-up (which also lets the library
finish timing its paths for that size), all cells of a size interleaved
(one call of each per round, in a shuffled order); p50 in microseconds
and GB/s.

usage: python_copy.py OUTDIR [SECONDS]  (from the top of the tree, pinned
to one CPU as bench/python-gpu-run.sh runs it; the threads path uses more
CPUs where the process may).  Writes OUTDIR/python_copy.json and .txt.
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

out_dir = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
SIZES = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 2 << 20, 16 << 20,
         64 << 20]
MAX = SIZES[-1]
clock = time.perf_counter_ns
# Seeded: a rerun shuffles the same way.
shuffle = random.Random(1).shuffle


def timed_together(cells):
    """Time every fn of cells ({name: fn}) call by call, interleaved: one
    call of each per round, in an order shuffled anew each round, so that
    drift (clocks, the copy engines' state) and what ran just before
    (posted writes through the mapping still draining, helper threads
    still spinning) hit them all alike.  Timed one block after another, a
    cell could be several microseconds slower than the same call timed
    first; in a fixed rotation each cell would always follow the same
    one.  Rounds for about SECONDS per cell, at least 5, at most 20000."""
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
        while r < 5 or (clock() < end and r < 20000):
            shuffle(order)
            for j in order:
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


def run_device(dev):
    torch.cuda.set_device(dev)
    ptr = gdrmap.mem_alloc(MAX, dev)
    try:
        return measure(ptr, dev)
    finally:
        torch.cuda.synchronize()
        gdrmap.mem_free(ptr)


def measure(ptr, dev):
    r = {}
    dev_t = torch.as_tensor(Device(ptr, MAX), device="cuda:%d" % dev)
    host_t = torch.empty(MAX, dtype=torch.uint8).pin_memory()
    host = memoryview((ctypes.c_char * MAX).from_address(
        host_t.data_ptr())).cast("B")
    with gdrmap.Mapping(ptr, MAX) as m:
        # The bytes arrive, both ways (a pattern, not zeros).
        pattern = bytes((i * 7 + 1) % 251 + 1 for i in range(4096))
        m.write(pattern * (MAX // 4096))
        torch.cuda.synchronize()
        assert bytes(dev_t[-4096:].cpu().tolist()) == pattern
        for n in SIZES:
            cell = {"read path": m.copy_path(n),
                    "write path": m.copy_path(n, write=True)}
            h, d = host[:n], dev_t[:n]
            ht = host_t[:n]
            fns = {"read: Mapping.readinto": lambda: m.readinto(h)}
            for path in ("mapping", "threads", "dma"):
                try:
                    m.readinto(h, path=path)
                except gdrmap.GdrmapError as e:
                    fns["read: path=%s" % path] = "refused: %s" % e
                    continue
                fns["read: path=%s" % path] = \
                    lambda path=path: m.readinto(h, path=path)

            def torch_read():
                ht.copy_(d, non_blocking=True)
                torch.cuda.synchronize()
            fns["read: host.copy_(dev) + synchronize"] = torch_read
            fns["read: dev.cpu()"] = lambda: d.cpu()
            fns["write: Mapping.write"] = lambda: m.write(h)
            for path in ("mapping", "dma"):
                try:
                    m.write(h, path=path)
                except gdrmap.GdrmapError as e:
                    fns["write: path=%s" % path] = "refused: %s" % e
                    continue
                fns["write: path=%s" % path] = \
                    lambda path=path: m.write(h, path=path)

            def torch_write():
                d.copy_(ht, non_blocking=True)
                torch.cuda.synchronize()
            fns["write: dev.copy_(host) + synchronize"] = torch_write
            # In fns' order (the table's columns); refusals as they are.
            times = timed_together({k: f for k, f in fns.items()
                                    if not isinstance(f, str)})
            cell.update((k, times.get(k, f)) for k, f in fns.items())
            # After every path: still the bytes written.
            m.write(pattern[:min(n, 4096)])
            got = bytearray(min(n, 4096))
            m.readinto(got)
            assert bytes(got) == pattern[:len(got)], "size %d" % n
            cell["read path after"] = m.copy_path(n)
            cell["write path after"] = m.copy_path(n, write=True)
            r[str(n)] = cell
    return r


def size_name(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


results = {"machine": {
    "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    "gpus": [torch.cuda.get_device_name(i)
             for i in range(torch.cuda.device_count())],
    "cpu_affinity": sorted(os.sched_getaffinity(0)),
    "python": sys.version.split()[0], "torch": torch.__version__,
    "backend": gdrmap.backend(),
    "library_has_gdrmap_copy": gdrmap._lib.library().gdrmap_copy_from_mapping
    is not None,
    "commit": os.environ.get("GDRMAP_COMMIT"), "seconds_per_cell": SECONDS,
}, "devices": {}}
for dev in range(torch.cuda.device_count()):
    results["devices"][str(dev)] = run_device(dev)

os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "python_copy.json"), "w") as f:
    json.dump(results, f, indent=2)
lines = ["%s: %s" % kv for kv in results["machine"].items()]
for dev, r in results["devices"].items():
    for way in ("read", "write"):
        names = [k[len(way) + 2:] for k in r[str(SIZES[0])]
                 if k.startswith(way + ": ")]
        lines.append("")
        lines.append("GPU %s, %ss, p50 us (GB/s); path: what Mapping took" %
                     (dev, way))
        lines.append("  %-8s %-8s" % ("size", "path") +
                     "".join(" %22s" % n[:22] for n in names) +
                     "  Mapping fastest?")
        for n in SIZES:
            cell = r[str(n)]
            row, best, auto = "", None, None
            for name in names:
                s = cell[way + ": " + name]
                if isinstance(s, str):
                    row += " %22s" % "refused"
                    continue
                us = s["p50_ns"] / 1e3
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
text = "\n".join(lines) + "\n"
with open(os.path.join(out_dir, "python_copy.txt"), "w") as f:
    f.write(text)
print(text, end="")
