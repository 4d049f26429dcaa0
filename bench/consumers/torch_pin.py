#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch tensors through gdrmap, with ctypes against libgdrapi.so.2.

On every GPU: a tensor allocated by PyTorch's expandable-segments allocator
(cuMemCreate memory, which the module-free backends can map) is pinned and
mapped with gdr_pin_buffer and gdr_map, read and written through the
mapping with gdr_copy_from/to_mapping, every byte checked against what
torch sees, outputs poisoned first.  Each GPU's tensor is used from the
main thread, from a new thread with no CUDA context, and from a thread
whose current device is another GPU; the thread's current CUDA context
must be the same after every library call.

  torch_pin.py LIB                      the cases above
  torch_pin.py LIB --default-allocator  the same with tensors of
                                        PyTorch's default caching
                                        allocator (cuMemAlloc memory):
                                        mapped by gdrdrv and the rm
                                        backend; the vulkan backend pins
                                        it copy-only (gdr_get_info says
                                        there is no CPU mapping) and every
                                        byte still moves right

Prints "N passed, N failed[, N skipped]"; exit 0, 1, or 77 (no torch,
no GPU, or no usable gdrmap backend).
"""
import ctypes
import os
import sys
import threading

DEFAULT = "--default-allocator" in sys.argv[2:]
if DEFAULT:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
else:
    # Read when torch first touches CUDA: set before importing it.
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

passed = failed = skipped = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, flush=True)
    return ok


def done(code=None):
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    print(line, flush=True)
    if code is None:
        code = 1 if failed else (77 if skipped and not passed else 0)
    sys.exit(code)


def skip(why):
    global skipped
    skipped += 1
    print("SKIP:", why, flush=True)
    done()


if len(sys.argv) < 2:
    print("usage: torch_pin.py /path/to/libgdrapi.so.2 [--default-allocator]",
          file=sys.stderr)
    sys.exit(2)

try:
    import torch
except ImportError as e:
    skip("no PyTorch here (%s)" % e)
if not torch.cuda.is_available() or torch.cuda.device_count() < 1:
    skip("PyTorch sees no GPU")


class MH(ctypes.Structure):
    _fields_ = [("h", ctypes.c_ulong)]


class Info(ctypes.Structure):
    _fields_ = [("va", ctypes.c_uint64), ("mapped_size", ctypes.c_uint64),
                ("page_size", ctypes.c_uint32),
                ("tm_cycles", ctypes.c_uint64),
                ("cycles_per_ms", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("mapping_type", ctypes.c_int)]


gdr = ctypes.CDLL(sys.argv[1])
gdr.gdrmap_open.restype = ctypes.c_void_p
gdr.gdr_close.argtypes = [ctypes.c_void_p]
gdr.gdr_pin_buffer.argtypes = [ctypes.c_void_p, ctypes.c_ulong,
                               ctypes.c_size_t, ctypes.c_uint64,
                               ctypes.c_uint32, ctypes.POINTER(MH)]
gdr.gdr_unpin_buffer.argtypes = [ctypes.c_void_p, MH]
gdr.gdr_map.argtypes = [ctypes.c_void_p, MH,
                        ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
gdr.gdr_unmap.argtypes = [ctypes.c_void_p, MH, ctypes.c_void_p,
                          ctypes.c_size_t]
gdr.gdr_get_info_v2.argtypes = [ctypes.c_void_p, MH, ctypes.POINTER(Info)]
gdr.gdr_copy_to_mapping.argtypes = [MH, ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_size_t]
gdr.gdr_copy_from_mapping.argtypes = [MH, ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_size_t]
gdr.gdr_get_attribute.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                  ctypes.POINTER(ctypes.c_int)]
gdr.gdrmap_last_error.restype = ctypes.c_char_p

# The thread's current CUDA context, as the driver sees it.
cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
cuda.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
# Per thread: the context each library call is made under, where a case
# needs one that torch's own calls in between would not leave current.
case = threading.local()


def current_ctx():
    c = ctypes.c_void_p()
    cuda.cuCtxGetCurrent(ctypes.byref(c))
    return c.value


def last_error():
    return gdr.gdrmap_last_error().decode(errors="replace")


def lib(call, *args, want=0, where=""):
    """A library call: it returns want and keeps the current context."""
    if hasattr(case, "ctx"):
        cuda.cuCtxSetCurrent(case.ctx)
    before = current_ctx()
    ret = call(*args)
    check(ret == want, "%s%s returned %d, want %d: %s"
          % (where, call.__name__, ret, want, last_error()))
    check(current_ctx() == before,
          "%s%s changed the current CUDA context" % (where, call.__name__))
    return ret


g = gdr.gdrmap_open()
if not g:
    skip("gdrmap_open failed: " + last_error())
backend = ctypes.c_int(0)
gdr.gdr_get_attribute(g, 0x10001, ctypes.byref(backend))  # GDRMAP_ATTR_BACKEND
backend = {1: "gdrdrv", 2: "dmabuf", 3: "vulkan", 4: "rm"}.get(backend.value, "?")
print("backend:", backend, "; GPUs:", torch.cuda.device_count(), flush=True)


def host_bytes(t):
    torch.cuda.synchronize(t.device)
    return t.cpu().numpy().tobytes()


def pin_and_copy(dev, where):
    """Pin, map, read and write a tensor of GPU dev; every byte checked."""
    n = 1 << 18                                 # 1 MiB of int32
    gen = torch.Generator(device="cuda:%d" % dev).manual_seed(1000 + dev)
    t = torch.full((n,), 0x5a5a5a5a, dtype=torch.int32,
                   device="cuda:%d" % dev)
    nbytes = t.numel() * t.element_size()
    mh = MH()
    if lib(gdr.gdr_pin_buffer, g, t.data_ptr(), nbytes, 0, 0,
           ctypes.byref(mh), where=where):
        return
    va = ctypes.c_void_p()
    info = Info()
    lib(gdr.gdr_map, g, mh, ctypes.byref(va), nbytes, where=where)
    lib(gdr.gdr_get_info_v2, g, mh, ctypes.byref(info), where=where)
    p = va.value + (t.data_ptr() - info.va)

    # GPU -> CPU: torch writes random data, read through the mapping.
    t.random_(0, 1 << 31, generator=gen)
    want = host_bytes(t)
    buf = ctypes.create_string_buffer(b"\xc3" * nbytes, nbytes)
    lib(gdr.gdr_copy_from_mapping, mh, buf, p, nbytes, where=where)
    check(buf.raw == want, "%sGPU %d: read through the mapping differs from the tensor" % (where, dev))

    # CPU -> GPU: an odd range written through the mapping; the tensor
    # has it and keeps its poison around it.
    t.fill_(0x5a5a5a5a)
    torch.cuda.synchronize(dev)
    off, length = 4099, 300001
    data = bytes((i * 131 + dev * 7 + 1) % 251 + 1 for i in range(length))
    src = ctypes.create_string_buffer(data, length)
    lib(gdr.gdr_copy_to_mapping, mh, p + off, src, length, where=where)
    got = host_bytes(t)
    check(got[off:off + length] == data,
          "%sGPU %d: the tensor differs from what the mapping wrote" % (where, dev))
    check(got[:off] == b"\x5a" * off and
          got[off + length:] == b"\x5a" * (nbytes - off - length),
          "%sGPU %d: bytes outside the write lost their poison" % (where, dev))

    if DEFAULT:
        copy_only = backend == "vulkan"
        check((info.mapping_type == 0) == copy_only,
              "%sGPU %d: mapping type %d, %s" % (
                  where, dev, info.mapping_type,
                  "want 0 (copy-only)" if copy_only else "want a CPU mapping"))
    lib(gdr.gdr_unmap, g, mh, va, nbytes, where=where)
    lib(gdr.gdr_unpin_buffer, g, mh, where=where)


def in_thread(fn):
    """Run fn in a new thread; exceptions count as failures."""
    err = []

    def body():
        try:
            fn()
        except Exception as e:          # reported, not swallowed
            err.append(e)
    th = threading.Thread(target=body)
    th.start()
    th.join()
    check(not err, "thread raised %r" % (err[0] if err else None))


ndev = torch.cuda.device_count()
for dev in range(ndev):
    torch.cuda.set_device(dev)
    pin_and_copy(dev, "main thread on GPU %d: " % dev)
    print("ok GPU %d from the main thread" % dev, flush=True)

    def no_context(d=dev):
        check(current_ctx() is None, "a new thread starts with no context")
        case.ctx = None      # torch makes one current: undone before each call
        pin_and_copy(d, "thread with no context: ")
    in_thread(no_context)
    print("ok GPU %d from a thread with no CUDA context" % dev, flush=True)

    if ndev < 2:
        skipped += 1
        print("SKIP: GPU %d from a thread on another GPU: one GPU here" % dev)
        continue

    def other_gpu(d=dev):
        other = (d + 1) % ndev
        torch.cuda.set_device(other)
        torch.empty(1, device="cuda:%d" % other)   # its context current
        case.ctx = current_ctx()
        check(case.ctx is not None, "the thread has a context")
        pin_and_copy(d, "thread on GPU %d: " % other)
        check(torch.cuda.current_device() == other,
              "the thread's current device stayed GPU %d" % other)
    in_thread(other_gpu)
    print("ok GPU %d from a thread whose current device is GPU %d"
          % (dev, (dev + 1) % ndev), flush=True)

gdr.gdr_close(g)
done()
