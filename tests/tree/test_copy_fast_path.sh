#!/bin/sh
# gdrmap_copy_to_mapping and gdrmap_copy_from_mapping serve the copies
# the mapping won by far inline, as gdr_copy_* serve every copy: in the
# built library, from each one's entry to its first indirect call (the
# copy routine), no direct call, and at most SLACK instructions more than
# the matching gdr_copy_*.  A helper the compiler stops inlining costs
# every small copy a call and its register saves: on an H200, 7-9 ns of a
# 70 ns write, when a check added to the inline lookup made GCC call it.
# The library is $GDRMAP_BUILD/lib/libgdrapi.so.2 (default build/).
# x86-64 only (the instruction names); 77 elsewhere or without objdump.
# Exit 0 pass, 1 fail, 77 skip.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
lib=${GDRMAP_BUILD:-$top/build}/lib/libgdrapi.so.2
# The best-path calls read the region's small_below and compare: a few.
SLACK=8
passed=0 failed=0

if ! command -v objdump >/dev/null 2>&1 || [ ! -f "$lib" ] ||
	! objdump -f "$lib" | grep -q 'x86-64'; then
	echo "0 passed, 0 failed, 1 skipped (no objdump, no $lib, or not x86-64)"
	exit 77
fi

# prologue FUNCTION: "N D": the instructions before the function's first
# indirect call, in address order, and how many of them are direct calls;
# "none" if it makes no indirect call.
prologue() {
	objdump -d --no-show-raw-insn --disassemble="$1" "$lib" |
		awk '/^ *[0-9a-f]+:\t/ {
			if ($0 ~ /\tcallq? +\*/) { print n, d; found = 1; exit }
			n++
			if ($0 ~ /\tcallq? /) d++
		}
		END { if (!found) print "none" }' n=0 d=0
}

for dir in to from; do
	best=$(prologue "gdrmap_copy_${dir}_mapping")
	base=$(prologue "gdr_copy_${dir}_mapping")
	if [ "$best" = none ] || [ "$base" = none ]; then
		failed=$((failed + 1))
		echo "FAIL: gdrmap_copy_${dir}_mapping ($best) or gdr_copy_${dir}_mapping ($base) calls no copy routine"
		continue
	fi
	n=${best% *} d=${best#* } base_n=${base% *}
	if [ "$d" != 0 ]; then
		failed=$((failed + 1))
		echo "FAIL: gdrmap_copy_${dir}_mapping makes $d direct call(s) before the copy routine: a helper of the inline path is not inlined"
	else
		passed=$((passed + 1))
	fi
	if [ "$n" -gt $((base_n + SLACK)) ]; then
		failed=$((failed + 1))
		echo "FAIL: gdrmap_copy_${dir}_mapping runs $n instructions before the copy routine, gdr_copy_${dir}_mapping $base_n (at most $SLACK more)"
	else
		passed=$((passed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
