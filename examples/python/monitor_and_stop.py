# SPDX-License-Identifier: MIT
"""A GPU loop that Python watches and stops through a CPU mapping, without
ever synchronising the stream it runs on.

A persistent kernel (CuPy RawKernel) works in a loop and publishes its
progress in a control block of GPU memory:

    word 0  steps done        (the GPU writes, Python reads)
    word 1  stop              (Python writes, the GPU reads)
    word 2  a parameter       (Python writes, the GPU reads)
    word 3  the parameter the GPU last used (the GPU writes)

Python maps the control block with gdrmap, prints the progress a few
times a second (each read is one PCIe round trip, about a microsecond),
changes the parameter on the fly, and stops the kernel by writing the
stop word; tensor.item() or cupy.asnumpy() would instead wait for the
stream, which here never drains until told to stop.

The kernel is a CuPy RawKernel, so CuPy is needed whichever --alloc is
chosen; --alloc torch puts the control block in a PyTorch tensor (and
needs PyTorch too), --alloc cupy in CuPy memory.

Which memory can be mapped:
  - with the gdrdrv kernel module loaded (sudo modprobe gdrdrv), any GPU
    memory, CuPy's and PyTorch's default allocators included;
  - without it (containers, clouds, signed-modules-only hosts), memory
    from cuMemCreate that can be exported: a PyTorch tensor when the
    process starts with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
    or CuPy memory from gdrmap.cupy_memory_pool() (--alloc cupy).

usage: python3 examples/python/monitor_and_stop.py [--alloc torch|cupy]
                                                   [--seconds S]
(from the top of a built gdrmap tree, or with the gdrmap package and
libgdrapi installed; a GPU, CuPy, and PyTorch for --alloc torch).
"""

import argparse
import importlib.util
import os
import sys
import time

# Before PyTorch is imported: its allocator reads the setting at its
# first CUDA allocation.  With it, tensors are cuMemCreate memory that
# every gdrmap backend can map.
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))

import gdrmap	# noqa: E402

STEPS, STOP, PARAM, USED = 0, 8, 16, 24	# byte offsets in the block

KERNEL_SOURCE = r"""
extern "C" __global__ void work(unsigned long long *ctl, float *data, int n)
{
	volatile unsigned long long *c = ctl;
	unsigned long long step = 0;

	while (c[1] == 0) {
		float scale = (float)c[2];

		for (int i = threadIdx.x; i < n; i += blockDim.x)
			data[i] = data[i] * 0.5f + scale;
		__syncthreads();
		if (threadIdx.x == 0) {
			c[3] = (unsigned long long)scale;
			c[0] = ++step;
			__threadfence_system();
		}
		__syncthreads();
	}
}
"""
cupy = None


def need(module, why):
    """Import module, or exit saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        sys.exit("this example needs %s %s (%s): pip install %s" % (
            module, why, e, "cupy-cuda12x (or cupy-cuda13x, matching your "
            "CUDA)" if module == "cupy" else "torch"))


def control_block(alloc):
    """Four zeroed 64-bit words the GPU kernel and the mapping share."""
    if alloc == "torch":
        torch = need("torch", "for --alloc torch")
        t = torch.zeros(4, dtype=torch.int64, device="cuda")
        torch.cuda.synchronize()
        return t, cupy.asarray(t).view(cupy.uint64)
    pool = gdrmap.cupy_memory_pool()
    with cupy.cuda.using_allocator(pool.malloc):
        words = cupy.zeros(4, dtype=cupy.uint64)
    cupy.cuda.Device().synchronize()
    return words, words


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--alloc", choices=("torch", "cupy"), default=None,
                    help="where the control block lives (default: a "
                    "PyTorch tensor if PyTorch is installed); the kernel "
                    "needs CuPy either way")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    if args.alloc is None:
        args.alloc = "torch" if importlib.util.find_spec("torch") else "cupy"
    global cupy
    cupy = need("cupy", "for its GPU kernel (a CuPy RawKernel)")
    kernel = cupy.RawKernel(KERNEL_SOURCE, "work")

    owner, words = control_block(args.alloc)
    data = cupy.ones(1 << 16, dtype=cupy.float32)
    try:
        m = gdrmap.Mapping(owner)
    except gdrmap.GdrmapError as e:
        # The message says why, and what to change (allocator or module).
        sys.exit("cannot map the control block: %s" % e)
    print("mapped %d bytes on GPU %s (backend %s, %s)" %
          (m.size, m.device, gdrmap.backend(), m.mapping_type))

    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        kernel((1,), (256,), (words, data, cupy.int32(data.size)))
    try:
        m.store_u64(PARAM, 1)
        m.wait(USED, 1, timeout=10)	# the kernel runs and reads us
        end = time.monotonic() + args.seconds
        scale = 1
        while time.monotonic() < end:
            time.sleep(0.25)
            scale += 1
            m.store_u64(PARAM, scale)
            print("steps %10d  scale in use %3d  stream busy: %s" % (
                m.load_u64(STEPS), m.load_u64(USED), not stream.done))
    finally:
        m.store_u64(STOP, 1)		# the kernel ends its loop
    stream.synchronize()
    print("stopped after %d steps; data[0] = %g (scale %d)" % (
        m.load_u64(STEPS), float(data[0].get()), scale))
    m.close()


if __name__ == "__main__":
    main()
