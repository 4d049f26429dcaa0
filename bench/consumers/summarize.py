#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""NCCL all-reduce latency with and without gdrmap, from nccl_gdr's CSVs.

usage: summarize.py DIR     (DIR holds lat-TRANSPORT-gdrG-runK.out files,
                             G 1 with gdrmap, 0 without; lines
                             "allreduce,BYTES,REP,US")

Per transport and size: each run's median over its repetitions, then
the median and range of those run medians with and without gdrmap.  The
GDRCopy path helps (or hurts) at a size when the medians differ by more
than the wider of the two ranges, else it is neutral.  Prints a
Markdown table per transport and a one-line verdict for each.
"""
import collections
import glob
import os
import re
import statistics
import sys

NAME = re.compile(r"lat-(?P<transport>[a-z0-9]+)-gdr(?P<gdr>[01])-run(?P<run>\d+)\.out$")


def load(directory):
    """{transport: {gdr: {bytes: [run medians]}}}"""
    runs = collections.defaultdict(
        lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
    for path in sorted(glob.glob(os.path.join(directory, "lat-*.out"))):
        m = NAME.search(os.path.basename(path))
        if not m:
            continue
        per_size = collections.defaultdict(list)
        with open(path) as f:
            for line in f:
                parts = line.strip().split(",")
                if len(parts) == 4 and parts[0] == "allreduce":
                    per_size[int(parts[1])].append(float(parts[3]))
        for size, values in per_size.items():
            runs[m["transport"]][int(m["gdr"])][size].append(
                statistics.median(values))
    return runs


def verdict(with_gdr, without):
    """'helps', 'hurts' or 'neutral', and the change in percent."""
    on, off = statistics.median(with_gdr), statistics.median(without)
    spread = max(max(with_gdr) - min(with_gdr), max(without) - min(without))
    change = (on - off) / off * 100 if off else 0.0
    if off - on > spread:
        return "helps", change
    if on - off > spread:
        return "hurts", change
    return "neutral", change


def fmt(values):
    return "%.2f (%.2f-%.2f)" % (statistics.median(values), min(values),
                                 max(values))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    runs = load(sys.argv[1])
    if not runs:
        print("no latency runs in %s" % sys.argv[1])
        return 1
    for transport in sorted(runs):
        by_gdr = runs[transport]
        print("### all-reduce latency over %s, µs per call" % transport)
        print()
        print("median of the runs' medians (range of the run medians); %d run(s) "
              "with gdrmap, %d without"
              % (max((len(v) for v in by_gdr[1].values()), default=0),
                 max((len(v) for v in by_gdr[0].values()), default=0)))
        print()
        print("| bytes | without gdrmap | with gdrmap | change | GDRCopy path |")
        print("|---:|---:|---:|---:|---|")
        counts = collections.Counter()
        for size in sorted(set(by_gdr[0]) | set(by_gdr[1])):
            on, off = by_gdr[1].get(size), by_gdr[0].get(size)
            if not on or not off:
                print("| %d | %s | %s | | missing |"
                      % (size, fmt(off) if off else "-", fmt(on) if on else "-"))
                counts["missing"] += 1
                continue
            v, change = verdict(on, off)
            counts[v] += 1
            print("| %d | %s | %s | %+.1f%% | %s |"
                  % (size, fmt(off), fmt(on), change, v))
        print()
        print("%s: GDRCopy path helps at %d sizes, hurts at %d, neutral at %d%s"
              % (transport, counts["helps"], counts["hurts"],
                 counts["neutral"],
                 ", %d missing" % counts["missing"] if counts["missing"] else ""))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
