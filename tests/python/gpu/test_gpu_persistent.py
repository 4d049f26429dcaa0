# SPDX-License-Identifier: MIT
"""A persistent kernel on every GPU (a CuPy RawKernel on its own stream)
counts and echoes a parameter until told to stop, all in four 64-bit
words of GPU memory; Python, through the mapping, with the stream still
running: waits for the counter to reach a value, sees it never go
backwards, sends parameters and waits for their echo, then stops the
kernel by writing the stop word.  The words live in a PyTorch tensor
(expandable segments) where PyTorch is installed, and in memory from
gdrmap.cupy_memory_pool()."""

import time

import gpu_env
from gpu_env import check, gdrmap

cupy = gpu_env.need_cupy()
try:
    import torch
    if not torch.cuda.is_available():
        torch = None
except ImportError:
    torch = None

COUNTER, STOP, PARAM, ECHO = 0, 8, 16, 24	# byte offsets of the words
SOURCE = r"""
extern "C" __global__ void persist(unsigned long long *words)
{
	volatile unsigned long long *w = words;
	unsigned long long n = 0;

	while (w[1] == 0) {	/* STOP, written by the CPU */
		w[3] = w[2];	/* ECHO = PARAM */
		w[0] = ++n;	/* COUNTER */
		__threadfence_system();
	}
	w[0] = ++n;
}
"""
KERNEL = cupy.RawKernel(SOURCE, "persist")
gpu_env.backend()


def run(words, m, where):
    """Drive the kernel on `words` (a CuPy view of 4 uint64, zeroed) with
    the Mapping m over them."""
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        KERNEL((1,), (1,), (words,))
    try:
        seen = m.wait(COUNTER, lambda v: v >= 10000, timeout=60)
        check.check(seen >= 10000 and not stream.done,
                    "%s: counter %d, stream done %s" % (where, seen,
                                                        stream.done))
        values = [m.load_u64(COUNTER) for _ in range(2000)]
        check.check(all(b >= a for a, b in zip(values, values[1:])),
                    "%s: the counter went backwards" % where)
        check.check(values[-1] > values[0], "%s: the counter did not move"
                    % where)
        rtt = []
        for v in range(1, 201):
            t0 = time.perf_counter()
            m.store_u64(PARAM, v * 1000003)
            m.wait(ECHO, v * 1000003, timeout=10, spin=1)
            rtt.append(time.perf_counter() - t0)
        rtt.sort()
        print("%s: parameter -> echo round trip through the running kernel:"
              " p50 %.2f us, max %.2f us" % (where, rtt[100] * 1e6,
                                              rtt[-1] * 1e6))
        check.check(not stream.done, "%s: the kernel ended early" % where)
    finally:
        m.store_u64(STOP, 1)
        deadline = time.monotonic() + 30
        while not stream.done and time.monotonic() < deadline:
            time.sleep(0.001)
    if not check.check(stream.done, "%s: the kernel did not stop" % where):
        check.done()	# it holds the GPU: nothing more can be trusted
    final = cupy.asnumpy(words)
    check.check(final[1] == 1 and m.load_u64(COUNTER) == int(final[0]) and
                final[0] > values[-1], "%s: after the stop: %r" %
                (where, final))


for dev in range(cupy.cuda.runtime.getDeviceCount()):
    with cupy.cuda.Device(dev):
        pool = gdrmap.cupy_memory_pool()
        with cupy.cuda.using_allocator(pool.malloc):
            words = cupy.zeros(4, dtype=cupy.uint64)
        cupy.cuda.Device().synchronize()
        with gdrmap.Mapping(words) as m:
            run(words, m, "GPU %d, gdrmap pool" % dev)
        del words
        pool.free_all_blocks()

        if torch is None:
            check.skip("no PyTorch: the tensor case is not run")
            continue
        t = torch.zeros(4, dtype=torch.int64, device="cuda:%d" % dev)
        torch.cuda.synchronize(dev)
        with gdrmap.Mapping(t) as m:
            run(cupy.asarray(t).view(cupy.uint64), m,
                "GPU %d, PyTorch tensor" % dev)

check.done()
