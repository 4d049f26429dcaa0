"""Where a bulk copy's time goes from Python, layer by layer, for the
sizes where the library takes the DMA path: the same copy as
Mapping.write/readinto (the compiled helper), as Mapping.write/readinto
with path='dma' (ctypes), as one ctypes call of gdrmap_copy_to/
from_mapping, as a bare cuMemcpyHtoDAsync/DtoHAsync on a non-blocking
stream plus cuStreamSynchronize through ctypes, and as PyTorch's
copy_(non_blocking=True) plus torch.cuda.synchronize().  Every method runs
once per round, in an order shuffled anew each round, so drift and
what ran just before hit them alike; p50 and min of all rounds.  Host memory: PyTorch's pinned
memory.  The data is checked after the rounds.

usage: python3 bench/probes/py_copy_probe.py [ROUNDS]  (GPU machine, top
of the tree; pin it with taskset as bench/python-gpu-run.sh does)
"""

import ctypes
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
import gdrmap	# noqa: E402
import torch	# noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
SIZES = [256 << 10, 2 << 20, 16 << 20]
MAX = SIZES[-1]
clock = time.perf_counter_ns
shuffle = random.Random(1).shuffle


class Device:
    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {
            "shape": (size,), "typestr": "|u1", "data": (ptr, False),
            "version": 3}


def cuda_calls():
    cu = ctypes.CDLL("libcuda.so.1")
    stream = ctypes.c_void_p()
    if cu.cuStreamCreate(ctypes.byref(stream), 1):	# non-blocking
        raise SystemExit("cuStreamCreate failed")
    u64, sz = ctypes.c_uint64, ctypes.c_size_t
    htod, dtoh = cu.cuMemcpyHtoDAsync_v2, cu.cuMemcpyDtoHAsync_v2
    htod.argtypes = [u64, ctypes.c_void_p, sz, ctypes.c_void_p]
    dtoh.argtypes = [ctypes.c_void_p, u64, sz, ctypes.c_void_p]
    sync = cu.cuStreamSynchronize
    sync.argtypes = [ctypes.c_void_p]
    return htod, dtoh, sync, stream


def main():
    torch.cuda.init()
    dev_ptr = gdrmap.mem_alloc(MAX, 0)
    dev_t = torch.as_tensor(Device(dev_ptr, MAX), device="cuda:0")
    host_t = torch.empty(MAX, dtype=torch.uint8).pin_memory()
    host_addr = host_t.data_ptr()
    host = memoryview((ctypes.c_char * MAX).from_address(host_addr)).cast("B")
    htod, dtoh, sync, stream = cuda_calls()
    lib = gdrmap._lib.library()
    print("# %s, torch %s, %d rounds, p50 us (min)" %
          (torch.cuda.get_device_name(0), torch.__version__, ROUNDS))
    with gdrmap.Mapping(dev_ptr, MAX) as m:
        print("# compiled helper: %s" % (gdrmap.helper_path() or "none"))
        handle, cpu = m._hbox.value, m._cpu
        to_fn, from_fn = lib.gdrmap_copy_to_mapping, lib.gdrmap_copy_from_mapping
        for n in SIZES:
            h, d, ht = host[:n], dev_t[:n], host_t[:n]
            pattern = bytes((i * 13 + 5) % 251 + 1 for i in range(4096))
            host_t[:n].copy_(torch.frombuffer(bytearray(
                pattern * (n // 4096)), dtype=torch.uint8))

            def t_write():
                d.copy_(ht, non_blocking=True)
                torch.cuda.synchronize()

            def t_read():
                ht.copy_(d, non_blocking=True)
                torch.cuda.synchronize()

            def raw_write():
                htod(dev_ptr, host_addr, n, stream)
                sync(stream)

            def raw_read():
                dtoh(host_addr, dev_ptr, n, stream)
                sync(stream)

            methods = [
                ("write Mapping.write", lambda: m.write(h)),
                ("write path=dma", lambda: m.write(h, path="dma")),
                ("write ctypes gdrmap_copy_to_mapping",
                 lambda: to_fn(handle, cpu, host_addr, n)),
                ("write ctypes cuMemcpyHtoDAsync+sync", raw_write),
                ("write torch copy_+sync", t_write),
                ("read Mapping.readinto", lambda: m.readinto(h)),
                ("read ctypes gdrmap_copy_from_mapping",
                 lambda: from_fn(handle, host_addr, cpu, n)),
                ("read ctypes cuMemcpyDtoHAsync+sync", raw_read),
                ("read torch copy_+sync", t_read),
            ]
            for _, fn in methods:
                for _ in range(5):
                    fn()
            samples = [[] for _ in methods]
            order = list(range(len(methods)))
            for _ in range(ROUNDS):
                shuffle(order)
                for j in order:
                    t0 = clock()
                    methods[j][1]()
                    samples[j].append(clock() - t0)
            # The bytes are where they belong (reads leave host = device).
            m.write(h)
            got = bytearray(n)
            m.readinto(got)
            assert bytes(got) == bytes(h), "size %d" % n
            for (name, _), s in zip(methods, samples):
                s.sort()
                print("%-9d %-40s %9.2f (%8.2f)" % (
                    n, name, s[len(s) // 2] / 1e3, s[0] / 1e3))
    torch.cuda.synchronize()
    gdrmap.mem_free(dev_ptr)


main()
