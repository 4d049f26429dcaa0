# SPDX-License-Identifier: MIT
"""CuPy arrays on every GPU: CuPy's default pool (cudaMalloc: gdrdrv maps
it, the vulkan backend pins it copy-only, moved by DMA),
gdrmap.cupy_memory_pool() (pinnable by every backend) and
gdrmap.mem_alloc; reads and writes through the mapping with poisoned data,
every byte checked against CuPy's copies; views, Fortran order, DLPack;
and what cudaMallocAsync memory (MemoryAsyncPool) gives, reported."""

import errno
import os

import gpu_env
from gpu_env import DLPackOnly, check, expect_bytes, gdrmap, pattern

cupy = gpu_env.need_cupy()
import numpy	# noqa: E402

BACKEND = gpu_env.backend()
N = 300000


def host_bytes(a):
    return cupy.asnumpy(a).tobytes()


def round_trips(a, what):
    """Read and write the whole of a (uint8, contiguous) both ways."""
    n = a.nbytes
    with gdrmap.Mapping(a) as m:
        check.check(m.ptr == a.data.ptr and m.size == n, "%s: %r" % (what, m))
        want = pattern(n, 3)
        a.set(numpy.frombuffer(want, dtype=numpy.uint8))
        cupy.cuda.Device().synchronize()
        expect_bytes(m.read(n), want, what + " read")
        for off, k in ((0, n), (1, 1), (63, 130), (n - 9, 9)):
            a.fill(0xA5)
            cupy.cuda.Device().synchronize()
            m.write(pattern(k, off), off)
            expect_bytes(host_bytes(a), b"\xa5" * off + pattern(k, off) +
                         b"\xa5" * (n - off - k),
                         "%s write %d at %d" % (what, k, off))


for dev in range(cupy.cuda.runtime.getDeviceCount()):
    with cupy.cuda.Device(dev):
        name = "GPU %d" % dev
        # CuPy's default pool: cudaMalloc memory, copy-only under vulkan.
        legacy = cupy.zeros(N, dtype=cupy.uint8)
        round_trips(legacy, name + " default pool")
        with gdrmap.Mapping(legacy) as m:
            check.check(m.copy_only == (BACKEND == "vulkan") and
                        m.device == dev, "%s: cudaMalloc memory on %s: %s" %
                        (name, BACKEND, m.mapping_type))
            print("%s, CuPy's default pool: %s" % (name, m.mapping_type))
        # Copy-only pins are off with GDRMAP_COPY_ONLY=0: refused, the
        # reason and the fix named.
        if BACKEND == "vulkan":
            os.environ["GDRMAP_COPY_ONLY"] = "0"
            try:
                gdrmap.Mapping(legacy)
                check.check(False, "GDRMAP_COPY_ONLY=0 still pins")
            except gdrmap.GdrmapError as e:
                check.check(e.errno == errno.EINVAL and
                            "gdrmap.cupy_memory_pool()" in str(e) and
                            "GDRMAP_COPY_ONLY=0" in str(e), str(e))
            del os.environ["GDRMAP_COPY_ONLY"]

        # gdrmap's pool: every backend pins it.
        pool = gdrmap.cupy_memory_pool()
        with cupy.cuda.using_allocator(pool.malloc):
            a = cupy.empty(N, dtype=cupy.uint8)
            round_trips(a, name + " pool")
            round_trips(a[1000:1000 + 70000], name + " pool view")
            with gdrmap.Mapping(DLPackOnly(a)) as m:
                check.check(m.ptr == a.data.ptr and m.size == N and
                            m.device == dev, "DLPack %r" % m)
                a.fill(7)
                cupy.cuda.Device().synchronize()
                expect_bytes(m.read(N), b"\x07" * N, name + " DLPack read")
            f = cupy.asfortranarray(cupy.arange(12 * 7, dtype=cupy.float32)
                                    .reshape(12, 7))
            with gdrmap.Mapping(f) as m:
                expect_bytes(m.read(m.size),
                             cupy.asnumpy(f).tobytes(order="F"),
                             name + " Fortran order, in memory order")
            check.raises(ValueError, gdrmap.Mapping, a[::2],
                         match="not contiguous")
            del a, f, m
        pool.free_all_blocks()

        # gdrmap.mem_alloc, wrapped for CuPy by hand.
        ptr = gdrmap.mem_alloc(1 << 20, dev)
        mem = cupy.cuda.UnownedMemory(ptr, 1 << 20, owner=None,
                                      device_id=dev)
        b = cupy.ndarray((1 << 20,), cupy.uint8, cupy.cuda.MemoryPointer(mem,
                                                                         0))
        round_trips(b[4096:4096 + 8192], name + " mem_alloc")
        del b, mem
        gdrmap.mem_free(ptr)

        # cudaMallocAsync memory: reported, not required.
        try:
            with cupy.cuda.using_allocator(cupy.cuda.MemoryAsyncPool().malloc):
                c = cupy.zeros(4096, dtype=cupy.uint8)
                cupy.cuda.Device().synchronize()
            with gdrmap.Mapping(c) as m:
                c.fill(9)
                cupy.cuda.Device().synchronize()
                expect_bytes(m.read(4096), b"\x09" * 4096,
                             name + " MemoryAsyncPool")
                print("%s, MemoryAsyncPool: mapped" % name)
        except gdrmap.GdrmapError as e:
            check.check(e.errno and str(e), "an unexplained refusal")
            print("%s, MemoryAsyncPool: refused: %s" % (name, e))

check.done()
