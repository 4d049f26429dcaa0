# Probe: why staged reads in Python run slower than in copylat.
import ctypes, os, sys, time, random, statistics
sys.path.insert(0, "python")
NOTORCH = os.environ.get("NOTORCH") == "1"
import gdrmap
import numpy
if not NOTORCH:
    import torch
clock = time.perf_counter_ns
MAX = 64 << 20
def tasks():
    return len(os.listdir("/proc/self/task"))
print("threads at start", tasks(), "notorch", NOTORCH, flush=True)
libc = ctypes.CDLL(None)
libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
def memalign(n):
    p = ctypes.c_void_p()
    assert libc.posix_memalign(ctypes.byref(p), 4096, n) == 0
    ctypes.memset(p.value, 1, n)
    return memoryview((ctypes.c_char * n).from_address(p.value)).cast("B"), p.value
if not NOTORCH:
    torch.cuda.set_device(0)
ptr = gdrmap.mem_alloc(MAX, 0)
bufs = {}
a = numpy.empty(MAX, numpy.uint8); a.fill(3)
bufs["numpy"] = (memoryview(a), a.ctypes.data)
bufs["memalign"] = memalign(MAX)
if not NOTORCH:
    t = torch.empty(MAX, dtype=torch.uint8); t.fill_(5)
    bufs["tensor"] = (memoryview((ctypes.c_char * MAX).from_address(t.data_ptr())).cast("B"), t.data_ptr())
def thp(addr):
    # AnonHugePages of the mapping holding addr
    cur = None
    for line in open("/proc/self/smaps"):
        if not line[0].isupper() or ":" not in line.split()[0]:
            lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
            cur = lo <= addr < hi
        elif cur and line.startswith("AnonHugePages"):
            return line.split()[1] + " kB"
    return "?"
for k, (v, addr) in bufs.items():
    print("buf", k, hex(addr), "THP", thp(addr), flush=True)
def p50(f, n=40, between=None):
    for _ in range(3):
        f()
    s = []
    for _ in range(n):
        if between:
            between()
        t0 = clock(); f(); s.append(clock() - t0)
    s.sort()
    return s[len(s) // 2] / 1e3, s[0] / 1e3
with gdrmap.Mapping(ptr, MAX) as m:
    if not NOTORCH:
        class D:
            def __init__(s):
                s.__cuda_array_interface__ = {"shape": (MAX,), "typestr": "|u1", "data": (ptr, False), "version": 3}
        dev = torch.as_tensor(D(), device="cuda:0")
    for size in (1 << 20, 4 << 20, 16 << 20, 64 << 20):
        for k, (v, addr) in bufs.items():
            h = v[:size]
            for _ in range(30):
                m.readinto(h)
            row = []
            row.append(("auto", p50(lambda: m.readinto(h))))
            row.append(("staged", p50(lambda: m.readinto(h, path="staged"))))
            row.append(("sleep1ms", p50(lambda: m.readinto(h, path="staged"), between=lambda: time.sleep(0.001))))
            row.append(("after-dma", p50(lambda: m.readinto(h, path="staged"), between=lambda: m.readinto(h, path="dma"))))
            if size <= (4 << 20):
                row.append(("after-mapping", p50(lambda: m.readinto(h, path="staged"), n=20, between=lambda: m.readinto(h, path="mapping"))))
            row.append(("after-threads", p50(lambda: m.readinto(h, path="staged"), n=20, between=lambda: m.readinto(h, path="threads"))))
            if not NOTORCH:
                ht = torch.from_numpy(numpy.frombuffer(h, numpy.uint8))
                row.append(("after-torchcopy", p50(lambda: m.readinto(h, path="staged"), between=lambda: (ht.copy_(dev[:size], non_blocking=True), torch.cuda.synchronize()))))
                row.append(("after-cpu", p50(lambda: m.readinto(h, path="staged"), between=lambda: dev[:size].cpu())))
                row.append(("torchcopy", p50(lambda: (ht.copy_(dev[:size], non_blocking=True), torch.cuda.synchronize()))))
            print("%5d MiB %-9s " % (size >> 20, k) + "  ".join("%s %.0f/%.0f" % (n, a, b) for n, (a, b) in row), flush=True)
print("threads at end", tasks(), flush=True)
