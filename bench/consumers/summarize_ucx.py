#!/usr/bin/env python3
"""Tables of the UCX part of the consumer suite (bench/consumers/ucx.sh).

usage: summarize_ucx.py perftest.csv      ucx_perftest runs
       summarize_ucx.py --mpi DIR         mpi_pingpong-*.txt runs

For each pairing (test, memory types, size, allocator), the median over
runs with gdr_copy in UCX_TLS and without it, the range of the runs, and
their ratio: latency tests compare the typical (median) latency, the
bandwidth tests the average bandwidth.  A pairing is "faster" with
gdr_copy when it takes under 0.9x the time without it, "slower" over
1.1x, "same" between (runs vary by a few percent).  The MPI table does
the same for mpi_pingpong's p50 one-way latency per size.

Exit 0 when there was something to summarize, 1 otherwise.
"""
import csv
import glob
import os
import re
import statistics
import sys


def verdict(ratio):
    if ratio < 0.9:
        return "faster"
    if ratio > 1.1:
        return "slower"
    return "same"


def cell(values, fmt):
    if not values:
        return "failed", None
    med = statistics.median(values)
    return "%s (%s-%s)" % (fmt % med, fmt % min(values), fmt % max(values)), med


def perftest(path):
    runs = {}
    failed = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["test"], row["mem"], int(row["size"]), row["alloc"])
            is_bw = row["test"].endswith("_bw")
            value = row["bw_MBs"] if is_bw else row["typical_us"]
            runs.setdefault(key, {"1": [], "0": []})
            if value:
                runs[key][row["gdr_copy"]].append(float(value))
            else:
                failed[key] = failed.get(key, 0) + 1
    if not runs:
        return 1
    print("| test | memory (send,recv) | size | GPU memory | with gdr_copy | without | with/without | gdr_copy |")
    print("|---|---|---:|---|---:|---:|---:|---|")
    for key in sorted(runs):
        test, mem, size, alloc = key
        is_bw = test.endswith("_bw")
        unit, fmt = ("MB/s", "%.0f") if is_bw else ("us", "%.2f")
        on, mon = cell(runs[key]["1"], fmt)
        off, moff = cell(runs[key]["0"], fmt)
        if mon is None or moff is None:
            ratio, word = "-", "unsupported" if mon is None and moff is None else "failed"
        else:
            # Time taken with over without: for bandwidth, the inverse.
            r = (moff / mon) if is_bw else (mon / moff)
            ratio, word = "%.2f" % r, verdict(r)
        alloc_name = "cudaMalloc" if alloc == "legacy" else "cuMemCreate"
        print("| %s | %s | %d | %s | %s %s | %s %s | %s | %s |" %
              (test, mem, size, alloc_name, on, unit, off, unit, ratio, word))
    return 0


def mpi(directory):
    runs = {}
    for path in glob.glob(os.path.join(directory, "pingpong-*.txt")):
        m = re.match(r"pingpong-(\w\w)-(\w+)-gdr(\d)-run\d+\.txt$", os.path.basename(path))
        if not m:
            continue
        bufs, alloc, gdr = m.groups()
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) == 3 and fields[0].isdigit():
                    key = (bufs, alloc, int(fields[0]))
                    runs.setdefault(key, {"1": [], "0": []})[gdr].append(float(fields[1]))
    if not runs:
        return 1
    print("| buffers (rank 0, rank 1) | GPU memory | size | with gdr_copy, p50 us | without | with/without | gdr_copy |")
    print("|---|---|---:|---:|---:|---:|---|")
    for key in sorted(runs):
        bufs, alloc, size = key
        on, mon = cell(runs[key]["1"], "%.2f")
        off, moff = cell(runs[key]["0"], "%.2f")
        if mon is None or moff is None:
            ratio, word = "-", "failed"
        else:
            ratio, word = "%.2f" % (mon / moff), verdict(mon / moff)
        alloc_name = "cuMemAlloc" if alloc == "legacy" else "cuMemCreate"
        print("| %s,%s | %s | %d | %s | %s | %s | %s |" %
              (bufs[0], bufs[1], alloc_name, size, on, off, ratio, word))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--mpi":
        sys.exit(mpi(sys.argv[2]))
    if len(sys.argv) == 2:
        try:
            sys.exit(perftest(sys.argv[1]))
        except OSError as e:
            print("summarize_ucx.py: %s" % e, file=sys.stderr)
            sys.exit(1)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
