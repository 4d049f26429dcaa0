# Probe: staged reads after various neighbours, numpy destination only.
import os, sys, time
sys.path.insert(0, "python")
import gdrmap, numpy
clock = time.perf_counter_ns
MAX = 64 << 20
ptr = gdrmap.mem_alloc(MAX, 0)
a = numpy.empty(MAX, numpy.uint8); a.fill(3)
def p50(f, n=30, between=None):
    for _ in range(3):
        f()
    s = []
    for _ in range(n):
        if between:
            between()
        t0 = clock(); f(); s.append(clock() - t0)
    s.sort()
    return s[len(s) // 2] / 1e3
tag = sys.argv[1]
with gdrmap.Mapping(ptr, MAX) as m:
    for size in (1 << 20, 4 << 20, 16 << 20, 64 << 20):
        h = memoryview(a)[:size]
        v = a[:size]
        st = lambda: m.readinto(h, path="staged")
        for _ in range(20):
            st()
        row = [("tight", p50(st)),
               ("sleep1ms", p50(st, between=lambda: time.sleep(0.001))),
               ("after-dma", p50(st, between=lambda: m.readinto(h, path="dma"))),
               ("after-memset", p50(st, between=lambda: v.fill(9))),
               ("after-readdest", p50(st, between=lambda: int(v[::64].sum()))),
               ("after-twrite", p50(st, n=20, between=lambda: m.write(h, path="threads"))),
               ("after-threads", p50(st, n=20, between=lambda: m.readinto(h, path="threads")))]
        if size <= (4 << 20):
            row.append(("after-mapping", p50(st, n=20, between=lambda: m.readinto(h, path="mapping"))))
        print("%-12s %2d MiB " % (tag, size >> 20) + " ".join("%s %.0f" % x for x in row), flush=True)
