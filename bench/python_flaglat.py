# SPDX-License-Identifier: MIT
"""Latency of reading and writing an 8-byte flag in GPU memory from Python,
through gdrmap's mapping against PyTorch's ways, in one run, on every GPU:

  read:  Mapping.load_u64 (through the compiled helper, gdrmap._fastflag,
         when the package has one), the same through ctypes (the class's
         method, Mapping.load_u64(m, 0): what every load cost before the
         helper, and still costs without it), Mapping.read(8),
         tensor.item(), tensor.cpu()
  write: Mapping.store_u64 (helper), the same through ctypes,
         Mapping.write(8 bytes), tensor.fill_(v) (a kernel launch: returns
         before the GPU has written), fill_ + torch.cuda.synchronize()
         (written), copy_ from pinned host memory (non_blocking) +
         synchronize
  floor: the library's copy through ctypes with nothing around it, the
         helper's bare access (_fastflag.load/store: fence and access, no
         checks), and time.perf_counter_ns() itself (included in every
         figure)

and Mapping.load_u64 while the stream is busy with a long kernel, next to
one tensor.item(), which waits for that kernel.  Each call is timed alone
(perf_counter_ns before and after), ITERS times after a warm-up, with the
garbage collector off; p50, p99, min and mean in nanoseconds.

usage: python_flaglat.py OUTDIR [ITERS]  (from the top of the tree; run it
pinned to one CPU, as bench/python-gpu-run.sh does).  Writes
OUTDIR/python_flaglat.json and python_flaglat.txt.  The helper used is
gdrmap.helper_path() (GDRMAP_FASTFLAG picks it; how it was built is
$GDRMAP_HELPER_BUILT, which python-gpu-run.sh sets).
"""

import ctypes
import gc
import json
import os
import platform
import subprocess
import sys
import time

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "python"))
import gdrmap	# noqa: E402
import torch	# noqa: E402

out_dir = sys.argv[1]
ITERS = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
clock = time.perf_counter_ns


def timed(fn, iters=ITERS, warmup=200):
    for _ in range(warmup):
        fn()
    samples = [0] * iters
    gc.disable()
    try:
        for i in range(iters):
            t0 = clock()
            fn()
            samples[i] = clock() - t0
    finally:
        gc.enable()
    samples.sort()
    return {"p50": samples[iters // 2], "p99": samples[iters * 99 // 100],
            "min": samples[0], "mean": sum(samples) / iters, "n": iters}


TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tree_relative(path):
    """A path inside the tree as relative to it: results name no checkout's
    absolute path (they are committed, and compared between machines)."""
    if path and os.path.realpath(path).startswith(
            os.path.realpath(TOP) + os.sep):
        return os.path.relpath(os.path.realpath(path), os.path.realpath(TOP))
    return path


def machine():
    def cmd(*args):
        try:
            return subprocess.run(args, capture_output=True, text=True,
                                  timeout=60).stdout.strip()
        except OSError:
            return None
    cpu = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "gpus": cmd("nvidia-smi", "--query-gpu=index,name,driver_version,"
                    "pci.bus_id", "--format=csv,noheader"),
        "cpu": cpu,
        "cpu_affinity": sorted(os.sched_getaffinity(0)),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gdrmap_library": tree_relative(gdrmap.library_path()),
        "flag_helper": tree_relative(gdrmap.helper_path()),
        "flag_helper_built": os.environ.get("GDRMAP_HELPER_BUILT"),
        "backend": gdrmap.backend(),
        "commit": os.environ.get("GDRMAP_COMMIT") or cmd(
            "git", "rev-parse", "HEAD"),
        "iters": ITERS,
    }


def run_device(dev):
    name = "cuda:%d" % dev
    torch.cuda.set_device(dev)
    flag = torch.zeros(8, dtype=torch.int64, device=name)
    one = flag[:1]
    torch.cuda.synchronize()
    r = {}
    with gdrmap.Mapping(flag) as m:
        lib = m._lib
        value = ctypes.c_uint64()
        args = (m._hbox, ctypes.byref(value), ctypes.c_void_p(m._cpu),
                ctypes.c_size_t(8))
        held = lib.copy_from_held
        fast = gdrmap._helper.helper() if m.fast_flags else None
        load, store = gdrmap.Mapping.load_u64, gdrmap.Mapping.store_u64
        cpu = m._cpu
        r["clock"] = timed(lambda: None)
        r["read: ctypes floor"] = timed(lambda: held(*args))
        if fast:
            fast_load = fast.load
            r["read: helper floor (_fastflag.load)"] = timed(
                lambda: fast_load(cpu, 8))
        r["read: Mapping.load_u64"] = timed(lambda: m.load_u64(0))
        r["read: Mapping.load_u64 through ctypes"] = timed(
            lambda: load(m, 0))
        r["read: Mapping.read(8)"] = timed(lambda: m.read(8))
        r["read: tensor.item()"] = timed(lambda: one.item())
        r["read: tensor.cpu()"] = timed(lambda: one.cpu())
        if fast:
            fast_store = fast.store
            r["write: helper floor (_fastflag.store)"] = timed(
                lambda: fast_store(cpu, 8, 5))
        r["write: Mapping.store_u64"] = timed(lambda: m.store_u64(0, 5))
        r["write: Mapping.store_u64 through ctypes"] = timed(
            lambda: store(m, 0, 5))
        eight = b"\x05\0\0\0\0\0\0\0"
        r["write: Mapping.write(8 bytes)"] = timed(lambda: m.write(eight))
        r["write: tensor.fill_() (launch only)"] = timed(
            lambda: one.fill_(5))
        torch.cuda.synchronize()

        def fill_sync():
            one.fill_(5)
            torch.cuda.synchronize()
        r["write: tensor.fill_() + synchronize"] = timed(fill_sync)
        src = torch.full((1,), 5, dtype=torch.int64).pin_memory()

        def copy_sync():
            one.copy_(src, non_blocking=True)
            torch.cuda.synchronize()
        r["write: tensor.copy_(pinned) + synchronize"] = timed(copy_sync)
        # Every write above wrote 5: the GPU has it.
        assert flag[0].item() == 5 and m.load_u64(0) == 5

        # The stream busy with a kernel of 2e9 GPU cycles (~1 s): the
        # mapping does not wait for it.
        torch.cuda._sleep(2000000000)
        busy = timed(lambda: m.load_u64(0), iters=min(ITERS, 5000),
                     warmup=10)
        still_busy = not torch.cuda.current_stream().query()
        t0 = clock()
        one.item()
        wait_ns = clock() - t0
        r["read while a kernel runs: Mapping.load_u64"] = busy
        r["read while a kernel runs: tensor.item() (one call)"] = {
            "p50": wait_ns, "p99": wait_ns, "min": wait_ns, "mean": wait_ns,
            "n": 1}
        r["stream still busy after the mapped reads"] = still_busy
        r["flags through the helper"] = m.fast_flags
    return r


results = {"machine": machine(), "devices": {}}
for dev in range(torch.cuda.device_count()):
    results["devices"][str(dev)] = run_device(dev)

os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "python_flaglat.json"), "w") as f:
    json.dump(results, f, indent=2)
lines = ["%s: %s" % kv for kv in results["machine"].items()]
for dev, r in results["devices"].items():
    lines.append("")
    lines.append("  %-48s %9s %9s %9s %9s" % ("GPU %s, ns per call" % dev,
                                               "p50", "p99", "min", "mean"))
    for name, s in r.items():
        if isinstance(s, dict):
            lines.append("  %-48s %9d %9d %9d %9.0f" % (
                name, s["p50"], s["p99"], s["min"], s["mean"]))
        else:
            lines.append("  %-48s %s" % (name, s))
    read = r["read: Mapping.load_u64"]["p50"]
    write = r["write: Mapping.store_u64"]["p50"]
    lines.append("  target: read <= 2000 ns: %s (p50 %d); write <= 1000 ns: "
                 "%s (p50 %d)" % ("met" if read <= 2000 else "NOT met", read,
                                  "met" if write <= 1000 else "NOT met",
                                  write))
    # What Mapping's checks add to the helper's bare access (about
    # nothing), and what ctypes adds.
    floor = {k: r[k]["p50"] for k in ("read: helper floor (_fastflag.load)",
                                      "write: helper floor (_fastflag.store)")
             if k in r}
    if floor:
        lines.append(
            "  over the helper's bare access, p50: load_u64 %+d ns (through "
            "ctypes %+d ns), store_u64 %+d ns (through ctypes %+d ns)" % (
                read - floor["read: helper floor (_fastflag.load)"],
                r["read: Mapping.load_u64 through ctypes"]["p50"] -
                floor["read: helper floor (_fastflag.load)"],
                write - floor["write: helper floor (_fastflag.store)"],
                r["write: Mapping.store_u64 through ctypes"]["p50"] -
                floor["write: helper floor (_fastflag.store)"]))
    else:
        lines.append("  no flag helper: load_u64/store_u64 went through "
                     "ctypes")
text = "\n".join(lines) + "\n"
with open(os.path.join(out_dir, "python_flaglat.txt"), "w") as f:
    f.write(text)
print(text, end="")
