#!/bin/sh
# No source file of the product (lib/, tools/, kernel/, include/, common/,
# python/gdrmap/), of the simulator (sim/) or of the tests (tests/) grows
# past 600 lines unless tests/tree/long-files names it with the reason its
# size is earned: a file that long usually holds two jobs.  A file named there that is no
# longer long (or no longer exists) must leave the list.
# Exit 0 pass, 1 fail.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
limit=600
list=tests/tree/long-files
passed=0 failed=0

# Tracked files only: what a build or a test left in the tree is not source.
files=$(git ls-files lib tools kernel include common python/gdrmap sim tests 2>/dev/null |
	grep -E '\.(c|h|py|sh)$') || true
if [ -z "$files" ]; then
	files=$(find lib tools kernel include common python/gdrmap sim tests -type f \
		\( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.sh' \) | sort)
fi
listed() { grep -v '^#' "$list" | awk '{ print $1 }' | grep -qx "$1"; }

for f in $files; do
	n=$(wc -l <"$f")
	if [ "$n" -le $limit ] || listed "$f"; then
		passed=$((passed + 1))
		continue
	fi
	failed=$((failed + 1))
	echo "FAIL: $f has $n lines (more than $limit): split it by job, or name it in $list with the reason its size is earned"
done
for f in $(grep -v '^#' "$list" | awk 'NF { print $1 }'); do
	if [ -f "$f" ] && [ "$(wc -l <"$f")" -gt $limit ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $list names $f, which is not over $limit lines (any more): take it off the list"
	fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
