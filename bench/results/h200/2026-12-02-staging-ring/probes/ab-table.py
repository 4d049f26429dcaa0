#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Print an A/B of `gdrmap copylat --paths` text outputs side by side.

usage: ab-table.py DIR VARIANT[,VARIANT...] [COLUMN]

DIR holds VARIANT-ROUND.txt files.  For each direction and size, each
variant's COLUMN p50 (gdrmap, the default: gdrmap_copy_*; or mapping,
threads, dma, staged, async, cuMemcpy, gdr_copy) in each round, in us,
with cuMemcpy's p50 over it and, for gdrmap, the path taken."""
import collections
import glob
import os
import re
import sys

COLS = ['gdr_copy', 'cuMemcpy', 'gdrmap', 'mapping', 'threads', 'dma',
        'staged', 'async']


def us(tok, unit):
    return float(tok) * {'ns': 1e-3, 'us': 1.0, 'ms': 1e3}[unit]


def table(path, which):
    lines = open(path).read().split('\n')
    start = [k for k, l in enumerate(lines) if l.startswith(which + ':')][0]
    rows = {}
    for line in lines[start + 3:]:
        tok = line.split()
        if not tok:
            break
        vals, took, j = [], None, 1
        while j < len(tok):
            if j + 1 < len(tok) and tok[j + 1] in ('ns', 'us', 'ms'):
                vals.append(us(tok[j], tok[j + 1]))
                j += 2
            elif len(vals) == 3 and took is None:
                took = tok[j]
                j += 1
            else:
                j += 1
        row = dict(zip(COLS, vals))
        row['path'] = took
        rows[int(tok[0])] = row
    return rows


def main():
    d, variants = sys.argv[1], sys.argv[2].split(',')
    col = sys.argv[3] if len(sys.argv) > 3 else 'gdrmap'
    for which in ('reads', 'writes'):
        print(f'{which}: {col} p50 in us per round (cuMemcpy over it'
              + (', path taken' if col == 'gdrmap' else '') + ')')
        runs = collections.defaultdict(dict)
        for f in sorted(glob.glob(os.path.join(d, '*.txt'))):
            m = re.match(r'(\w+)-(\d+)\.txt$', os.path.basename(f))
            if m and m.group(1) in variants:
                runs[m.group(1)][int(m.group(2))] = table(f, which)
        first = runs[variants[0]]
        for size in sorted(first[min(first)]):
            out = f'{size >> 20:>4} MiB'
            for v in variants:
                cells = []
                for r in sorted(runs[v]):
                    c = runs[v][r][size]
                    cell = f'{c[col]:6.0f} ({c["cuMemcpy"] / c[col]:.2f}x'
                    if col == 'gdrmap':
                        cell += f' {c["path"]}'
                    cells.append(cell + ')')
                out += f' | {v}: ' + ', '.join(cells)
            print(out)
        print()


main()
