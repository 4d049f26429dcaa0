# Probe: why PyTorch's pinned reads of 256K-1M gain more than ours from
# following one of their own.  Same GPU memory (gdrmap.mem_alloc), same
# pinned tensor; cells: torch copy_ + torch.cuda.synchronize, torch copy_ +
# stream sync, raw cuMemcpyDtoHAsync on stream 0 / a non-blocking stream /
# a blocking stream (+ cuStreamSynchronize), Mapping.readinto(path=dma),
# Mapping.readinto (auto).  Both turns: one call and paired.
import ctypes, gc, os, random, sys, time
sys.path.insert(0, "python")
import gdrmap, torch
clock = time.perf_counter_ns
MAX = 4 << 20
cu = ctypes.CDLL("libcuda.so.1")
torch.cuda.set_device(0)
torch.zeros(1, device="cuda")
ptr = gdrmap.mem_alloc(MAX, 0)
class Device:
    def __init__(self, ptr, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False), "version": 3}
d = torch.as_tensor(Device(ptr, MAX), device="cuda:0")
tdev = torch.empty(MAX, dtype=torch.uint8, device="cuda")  # torch's own memory
h = torch.empty(MAX, dtype=torch.uint8).pin_memory(); h.zero_()
hv = memoryview((ctypes.c_char * MAX).from_address(h.data_ptr())).cast("B")
s_nb = ctypes.c_void_p(); s_bl = ctypes.c_void_p()
assert cu.cuStreamCreate(ctypes.byref(s_nb), 1) == 0
assert cu.cuStreamCreate(ctypes.byref(s_bl), 0) == 0
cu.cuMemcpyDtoHAsync_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
cu.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
ts = torch.cuda.current_stream()
def raw(stream, src):
    def f(n):
        cu.cuMemcpyDtoHAsync_v2(h.data_ptr(), src, n, stream); cu.cuStreamSynchronize(stream)
    return f
def run(turn_paired, n, m, secs=0.15):
    hn = h[:n]; dn = d[:n]; tn = tdev[:n]; hvn = hv[:n]
    cells = {
        "torch copy_+dev sync": lambda: (hn.copy_(dn, non_blocking=True), torch.cuda.synchronize()),
        "torch copy_+stream sync": lambda: (hn.copy_(dn, non_blocking=True), ts.synchronize()),
        "torch copy_ torchmem+dev sync": lambda: (hn.copy_(tn, non_blocking=True), torch.cuda.synchronize()),
        "raw stream0": lambda: raw(None, ptr)(n),
        "raw nonblocking": lambda: raw(s_nb, ptr)(n),
        "raw blocking": lambda: raw(s_bl, ptr)(n),
        "raw nonblocking torchmem": lambda: raw(s_nb, tdev.data_ptr())(n),
        "Mapping dma": lambda: m.readinto(hvn, path="dma"),
        "Mapping auto": lambda: m.readinto(hvn),
        "ctypes via dma": lambda: via(m._pin.handle, h.data_ptr(), m._cpu, n, 3),
        "ctypes raw cuda one call": lambda: cu.cuMemcpyDtoH_v2(h.data_ptr(), ptr, n),
    }
    fns = list(cells.items())
    for _, f in fns:
        for _ in range(5): f()
    samp = [[] for _ in fns]
    order = list(range(len(fns)))
    rnd = random.Random(1)
    gc.disable()
    end = clock() + int(secs * len(fns) * 1e9); r = 0
    while r < 5 or (clock() < end and r < 20000):
        rnd.shuffle(order)
        for j in order:
            if turn_paired: fns[j][1]()
            t0 = clock(); fns[j][1](); samp[j].append(clock() - t0)
        r += 1
    gc.enable()
    out = []
    for (name, _), s in zip(fns, samp):
        s.sort(); out.append("%s %.2f" % (name, s[len(s) // 2] / 1e3))
    return out
print("helper:", gdrmap.helper_path(), flush=True)
cu.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
with gdrmap.Mapping(ptr, MAX) as m:
    via = getattr(m._lib, "gdrmap_copy_from_mapping_via")
    for rep in range(2):
        for paired in (False, True):
            for n in (32 << 10, 256 << 10, 512 << 10, 1 << 20):
                print("rep%d %-6s %5d KiB | " % (rep, "paired" if paired else "one", n >> 10) + " | ".join(run(paired, n, m)), flush=True)
torch.cuda.synchronize()
gdrmap.mem_free(ptr)
