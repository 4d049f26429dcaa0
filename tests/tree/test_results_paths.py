#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Every measurement the tree cites is in the tree: each path into
bench/results/ that a tracked file names (docs, READMEs, man pages, code
comments, scripts; "{h100,h200}" and "h{100,200}" stand for each of their
expansions, and a path broken across two lines of prose is read whole; MACHINE and
the like are placeholders)
is a file or folder of bench/results/, and each relative link of a
record's Markdown ("[x](../2026-11-23-container/)") resolves.  Each
record folder (bench/results/MACHINE/DATE-TOPIC/) has its README.md: the
date, machine, driver, CPU, commit, commands and the figures (bench/README.md);
a record's raw captures sit in its raw.tar.xz or raw.tar.gz.
Exit 0 pass, 1 fail."""

import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
RESULTS = 'bench/results/'
PATH = re.compile(r'bench/results/[A-Za-z0-9_.{},*/-]*')
LINK = re.compile(r'\]\(([^)#\s]+)\)')
BINARY = ('.png', '.svg', '.gz', '.xz', '.tgz', '.json', '.csv', '.log')


def tracked():
    try:
        out = subprocess.run(['git', 'ls-files'], cwd=TOP, check=True,
                             capture_output=True, text=True).stdout
        files = out.split()
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, subs, names in os.walk(TOP):
        subs[:] = [s for s in subs if s != '.git' and
                   not s.startswith('build')]
        files += [os.path.relpath(os.path.join(d, n), TOP) for n in names]
    return files


def expand(path):
    """"h{100,200}/x" -> ["h100/x", "h200/x"]."""
    m = re.search(r'\{([^{}]*)\}', path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(','):
        out += expand(path[:m.start()] + alt + path[m.end():])
    return out


def cited(text):
    """The bench/results paths a text names, a path whose line ends in
    '/' joined with the next line's first word."""
    lines = text.split('\n')
    for i, line in enumerate(lines):
        for m in PATH.finditer(line):
            p = m.group(0)
            if p.endswith('/') and m.end() == len(line.rstrip()) and \
                    i + 1 < len(lines):
                nxt = re.match(r'\s*([A-Za-z0-9_.{},/-]+)', lines[i + 1])
                if nxt and re.match(r'\d{4}-\d\d-\d\d', nxt.group(1)):
                    p += nxt.group(1)
            p = p.rstrip('.,;:')
            if '*' in p or p == RESULTS.rstrip('/') or p == RESULTS:
                continue
            # A placeholder (bench/results/MACHINE/...) names no file.
            if re.search(r'/[A-Z][A-Z_-]*(/|$)', p):
                continue
            yield i + 1, p


def main():
    os.chdir(TOP)
    files = tracked()
    failed = []
    checked = 0
    for f in files:
        if f.endswith(BINARY) or not os.path.isfile(f):
            continue
        if f.startswith(RESULTS) and not f.endswith('.md'):
            continue
        try:
            text = open(f, encoding='utf-8', errors='replace').read()
        except OSError:
            continue
        for line, p in cited(text):
            for q in expand(p):
                checked += 1
                if not os.path.exists(q.rstrip('/')):
                    failed.append(f'{f}:{line}: {q} is not in the tree')
        if f.startswith(RESULTS) and f.endswith('.md'):
            for n, text_line in enumerate(text.split('\n'), 1):
                for m in LINK.finditer(text_line):
                    target = m.group(1)
                    if re.match(r'[a-z]+:', target):
                        continue
                    checked += 1
                    q = os.path.normpath(os.path.join(os.path.dirname(f),
                                                      target))
                    if not os.path.exists(q):
                        failed.append(f'{f}:{n}: link {target} is not in '
                                      'the tree')
    # Records: bench/results/MACHINE/DATE-TOPIC/ with a README.md.
    records = sorted({'/'.join(f.split('/')[:4]) for f in files
                      if f.startswith(RESULTS) and f.count('/') >= 4})
    for r in records:
        checked += 1
        if not os.path.isfile(r + '/README.md'):
            failed.append(f'{r}/: a record without its README.md')
    for msg in failed:
        print('FAIL: ' + msg)
    print(f'{checked - len(failed)} passed, {len(failed)} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
