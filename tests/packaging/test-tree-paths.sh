#!/bin/sh
# Committed results and docs name the tree's files by paths relative to
# the tree, never by the absolute path of the checkout that made them
# (".../build/lib/libgdrapi.so.2.6" as one machine had it): the tree's
# build directory under any absolute prefix, other than /tmp (builds made
# outside the tree on purpose, BUILD=/tmp/...), is such a path.
# Exit 0 pass, 1 fail.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
pattern='/[A-Za-z0-9._/-]*/build(-[A-Za-z0-9]+)?/(lib|tools|python|tests|deb)/'
if [ -d .git ] && command -v git >/dev/null; then
	found=$(git grep -nIoE "$pattern" -- bench/results docs '*.md')
else
	found=$(grep -rnIoE "$pattern" bench/results docs README.md)
fi
found=$(printf '%s\n' "$found" | grep -v '^[^:]*:[0-9]*:/tmp/' | grep . || true)
if [ -n "$found" ]; then
	echo "FAIL: absolute paths of a checkout (make them relative to the tree):"
	echo "$found" | cut -c1-200 | sed 's/^/    /'
	echo "0 passed, 1 failed"
	exit 1
fi
echo "1 passed, 0 failed"
