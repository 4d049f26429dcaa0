# SPDX-License-Identifier: MIT
"""PyTorch tensors on every GPU (allocated with expandable segments):
pinned through __cuda_array_interface__ and through DLPack, read and
written through the mapping with poisoned data, every byte checked against
torch's own copies; views at offsets; flags written by the GPU; tensors
that cannot be mapped refused with a reason; and, in a process without
expandable segments, what the error says about PyTorch's allocator."""

import errno
import os
import subprocess
import sys

import gpu_env
from gpu_env import DLPackOnly, check, expect_bytes, gdrmap, pattern

torch = gpu_env.need_torch()
import numpy	# noqa: E402	(torch.Tensor.numpy)

check.check("expandable_segments:True" in
            os.environ["PYTORCH_CUDA_ALLOC_CONF"], "allocator setting")
BACKEND = gpu_env.backend()
N = 256 << 10		# small-pool tensors stay in one 2 MiB segment page


def host_bytes(t):
    """The tensor's bytes as torch copies them (cudaMemcpy, synchronised)."""
    return t.view(torch.uint8).cpu().numpy().tobytes()


for dev in range(torch.cuda.device_count()):
    torch.cuda.set_device(dev)
    name = "cuda:%d" % dev
    # Allocated first, so that it starts a segment page.
    t = torch.empty(N, dtype=torch.uint8, device=name)
    for how, obj in (("CAI", t), ("DLPack", DLPackOnly(t))):
        what = "%s %s" % (name, how)
        with gdrmap.Mapping(obj) as m:
            check.check(m.ptr == t.data_ptr() and m.size == N and
                        m.device == dev, "%s: %r" % (what, m))
            # Reads: torch writes a pattern, the mapping reads it.
            want = pattern(N, dev + len(how))
            t.copy_(torch.frombuffer(bytearray(want), dtype=torch.uint8))
            torch.cuda.synchronize(dev)
            expect_bytes(m.read(N), want, what + " read")
            dst = numpy.full(N, 0x3C, dtype=numpy.uint8)
            m.readinto(dst)
            expect_bytes(dst.tobytes(), want, what + " readinto")
            for off, n in ((0, 1), (3, 61), (4093, 4099), (N - 7, 7)):
                expect_bytes(m.read(n, off), want[off:off + n],
                             "%s read %d at %d" % (what, n, off))
            # Writes: poison by torch, write through the mapping, every
            # byte of the tensor checked by torch's copy.
            for off, n in ((0, N), (5, 1), (64, 64), (1000, 5000),
                           (N - 3, 3)):
                t.fill_(0xA5)
                torch.cuda.synchronize(dev)
                data = pattern(n, off)
                m.write(data, off)
                want = b"\xa5" * off + data + b"\xa5" * (N - off - n)
                expect_bytes(host_bytes(t), want,
                             "%s write %d at %d" % (what, n, off))
        check.check(m.closed and m.obj is None, what + " closed")

    # A view at an offset: its own address, bytes only there.
    t.fill_(0xA5)
    v = t[70000:70000 + 9000]
    torch.cuda.synchronize(dev)
    with gdrmap.Mapping(v) as m:
        check.check(m.ptr == t.data_ptr() + 70000 and m.size == 9000,
                    repr(m))
        m.write(pattern(9000, 7))
    want = b"\xa5" * 70000 + pattern(9000, 7) + b"\xa5" * (N - 79000)
    expect_bytes(host_bytes(t), want, name + " view")

    # Flags: the GPU writes, the mapping reads; the mapping writes, the
    # GPU reads; wide types and 2-D shapes give their sizes.
    flags = torch.zeros(8, dtype=torch.int64, device=name)
    with gdrmap.Mapping(flags) as m:
        check.check(m.size == 64, "int64 flags: %d bytes" % m.size)
        flags[3] = 0x1234567890
        torch.cuda.synchronize(dev)
        check.check(m.load_u64(24) == 0x1234567890, name + " load_u64")
        m.store_u64(40, 0xA5A5000012345678)
        m.store_u32(8, 77)
        check.check(flags[5].item() == 0xA5A5000012345678 - (1 << 64) and
                    flags[1].item() == 77, name + " store_u64/u32")
    f32 = torch.ones((16, 32), dtype=torch.float32, device=name)
    with gdrmap.Mapping(f32) as m:
        check.check(m.size == 16 * 32 * 4, "2-D float32 size")
    bf = torch.ones(100, dtype=torch.bfloat16, device=name)
    with gdrmap.Mapping(bf) as m:	# no CAI for bfloat16: DLPack
        check.check(m.size == 200 and m.read(2) == bf[:1].view(
            torch.uint8).cpu().numpy().tobytes(), "bfloat16 via DLPack")

    # Refused, with the reason.
    check.raises(ValueError, gdrmap.Mapping, t.view(512, -1)[:, ::2],
                 match="not contiguous")
    grad = torch.ones(8, device=name, requires_grad=True)
    check.raises(TypeError, gdrmap.Mapping, grad, match="grad")
    check.raises(ValueError, gdrmap.Mapping, torch.ones(8),
                 match="host memory")
    check.raises(ValueError, gdrmap.Mapping, t, device=dev + 1,
                 match="the memory is on device %d" % dev)

    # A large tensor: expandable segments build it from several CUDA
    # allocations, and a mapping covers one: mapped, or under the vulkan
    # backend pinned copy-only; either way the bytes are right.
    big = torch.empty(64 << 20, dtype=torch.uint8, device=name)
    try:
        with gdrmap.Mapping(big) as m:
            big.fill_(3)
            torch.cuda.synchronize(dev)
            expect_bytes(m.read(4096, (64 << 20) - 4096), b"\x03" * 4096,
                         name + " 64 MiB tensor")
            print("%s: a 64 MiB tensor: %s" % (name, m.mapping_type))
    except gdrmap.GdrmapError as e:
        check.check(False, "a 64 MiB tensor: %s" % e)
    del big

# Without expandable segments PyTorch allocates with cudaMalloc: gdrdrv
# maps that; the vulkan backend pins it copy-only (and, with
# GDRMAP_COPY_ONLY=0, refuses it, saying what to set).
CODE = r"""
import os, sys
sys.path[:0] = %r
os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
import torch, gdrmap
t = torch.zeros(1024, device="cuda")
try:
    with gdrmap.Mapping(t) as m:
        t.fill_(5)
        torch.cuda.synchronize()
        print("mapped", m.size, m.mapping_type, m.read(8) == b"\x00\x00\xa0@" * 2)
except gdrmap.GdrmapError as e:
    print("errno", e.errno)
    print(e)
""" % ([check.PYTHON_DIR],)
env = dict(os.environ)
env.pop("PYTORCH_CUDA_ALLOC_CONF")
for copy_only in ("1", "0"):
    env["GDRMAP_COPY_ONLY"] = copy_only
    done = subprocess.run([sys.executable, "-c", CODE], env=env,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    print("cudaMalloc memory, GDRMAP_COPY_ONLY=%s:" % copy_only, out.strip())
    if BACKEND != "vulkan":
        check.check("mapped 4096" in out and "True" in out, out)
    elif copy_only == "1":
        check.check("mapped 4096 copy-only True" in out, out)
    else:
        check.check("errno %d" % errno.EINVAL in out and
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in out
                    and "GDRMAP_COPY_ONLY=0" in out, out)

check.done()
