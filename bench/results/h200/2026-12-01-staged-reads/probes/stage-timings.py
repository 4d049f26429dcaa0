#!/usr/bin/env python3
"""Summarize a staged-read probe file (stage-prof.patch, GDR_STAGE_PROF).

usage: stage-timings.py FILE.prof [SIZE]     (SIZE default 4194304)

Each line of a probe file is one staged read: its size, the parts the
caller copied itself / all parts, then (newer probe only) S<helpers asleep
at the start> G<us since the last staged read ended>, then the intervals
in us: queueing every buffer's first chunk, then per chunk the wait for
its event and its CPU copy (and, between chunks, queueing the next), the
final drain, and "T" the whole copy.  Printed: the p50 of each interval,
and (newer probe) the means split by whether the helpers were asleep.
"""
import statistics
import sys

path = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 4 << 20
rows = []
for line in open(path):
    f = line.split()
    if int(f[0]) != size:
        continue
    asleep = None
    k = 2
    if f[2].startswith("S"):
        asleep = int(f[2][1:]) > 0
        k = 4
    iv = [float(x) for x in f[k:f.index("T")]]
    rows.append((asleep, iv, float(f[-1])))
if not rows:
    sys.exit("no staged reads of %d bytes in %s" % (size, path))
n = min(len(r[1]) for r in rows)
p50 = [statistics.median(r[1][i] for r in rows) for i in range(n)]
print("%s: %d reads of %d bytes, p50 T %.1f us, p0 T %.1f us" %
      (path, len(rows), size, statistics.median(r[2] for r in rows),
       min(r[2] for r in rows)))
print("  p50 per interval: " + " ".join("%.1f" % x for x in p50))
for mode in (True, False):
    sel = [r for r in rows if r[0] is mode]
    if not sel:
        continue
    first = statistics.mean(r[1][0] + r[1][1] for r in sel)
    mean = [statistics.mean(r[1][i] for r in sel) for i in range(n)]
    print("  helpers %s (%d): first chunk in %.1f us (queue %.1f + wait "
          "%.1f); then copy/wait: %s; T %.1f" %
          ("asleep" if mode else "awake ", len(sel), first, mean[0],
           mean[1], " ".join("%.1f" % x for x in mean[2:]),
           statistics.mean(r[2] for r in sel)))
