#!/bin/sh
# On a GPU machine: does gdrmap_copy_* take the fastest path at every size?
# One `gdrmap copylat --paths` run from 8 B to 64 MiB, both ways: per size
# the p50 of gdr_copy_*, cuMemcpy, gdrmap_copy_* (with the path it took)
# and each of its paths forced (mapping, threads, dma); gdrmap_copy_*'s
# p50 over the fastest path's (the goal: 1.1 at most at every size) and
# over gdr_copy_*'s (small copies, up to 1 KiB, must not get slower); the
# sizes where the path changes.  The same at offset 3, and copybw at 64 MiB
# and 8 MiB with gdrmap_copy_* beside the mapping and cuMemcpy.
#
# usage: bench/copy-paths-run.sh OUTDIR            (from the top of the tree)
# Environment: BUILD (build directory, default /tmp/gdrmap-paths-build),
# GDRMAP_ARGS (added to every run, e.g. "-C 2-15").  Where the Vulkan
# loader is missing, put Debian's libvulkan1 and libglvnd .debs in .gl/,
# as for bench/gpu-run.sh.
#
# Writes OUTDIR/env.txt, build.log, doctor.txt, paths.txt and paths.json
# (two runs of the same measurement: the table to read, the document to
# check), paths-o3.json, copybw-64M.txt/.json, copybw-8M.json and
# summary.txt: the goal's verdict, from paths.json.
#
# How p50 is had: every copy is one call timed on its own (CLOCK_MONOTONIC
# around the call, ~30 ns of clock included).  Per size and call up to
# 1000 calls, fewer for large sizes: at most 256 MiB written or 64 MiB
# read per size and call, and never fewer than 10, so 10 calls at 32 and
# 64 MiB (a 64 MiB read through the mapping takes 70-80 ms on the H200).
# p50 is the nearest-rank median: the 500th fastest of 1000 calls, the
# 5th of 10.  gdrmap_copy_* is first called until the library has chosen
# the size's path, so its own measuring copies are not in the figures.
# Expected time on an H200 (estimated from its copylat figures of
# 2026-11-21, not yet timed): 10-25 s per copylat run, under 2 minutes in
# all, build included; each run is cut off at 100 s.
set -u
out=${1:?usage: $0 OUTDIR}
build=${BUILD:-/tmp/gdrmap-paths-build}
mkdir -p "$out"

# shellcheck source=scripts/gpu-machine-env.sh
. scripts/gpu-machine-env.sh

a=${GDRMAP_ARGS:-}
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader 2>&1
	grep -m1 'model name' /proc/cpuinfo
	echo "CPUs: $(nproc)"
	uname -r
	echo "commit: ${GDRMAP_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
	echo "GDRMAP_ARGS: $a"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

make -j"$(nproc)" O="$build" lib tools >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
g=$build/tools/gdrmap
jsonq=$build/tools/tests/jsonq
"$g" doctor >"$out/doctor.txt" 2>&1

status=0
# run NAME SECONDS ARGS...: stdout into OUTDIR/NAME, exit status noted.
run() {
	name=$1 secs=$2
	shift 2
	echo "== gdrmap $* $a"
	start=$(date +%s)
	# shellcheck disable=SC2086
	timeout "$secs" "$g" "$@" $a >"$out/$name" 2>"$out/$name.err"
	rc=$?
	echo "   exit $rc, $(( $(date +%s) - start )) s"
	[ $rc = 0 ] || { status=1; cat "$out/$name.err"; }
	[ -s "$out/$name.err" ] || rm -f "$out/$name.err"
}

run paths.txt 100 copylat --paths -m 8 -s 64M
cat "$out/paths.txt"
run paths.json 100 copylat --paths -m 8 -s 64M --json
run paths-o3.json 100 copylat --paths -m 8 -s 64M -o 3 --json
run copybw-64M.txt 60 copybw -s 64M
cat "$out/copybw-64M.txt"
run copybw-64M.json 60 copybw -s 64M --json
run copybw-8M.json 60 copybw -s 8M -r 20 --json

# The verdict, from the JSON: the goal at every size, and small copies.
verdict() {
	f=$out/$1
	"$jsonq" "$f" >/dev/null 2>&1 || { echo "$1: no document"; return; }
	if "$jsonq" "$f" .error >/dev/null 2>&1; then
		echo "$1: the run failed: $("$jsonq" "$f" .error)"
		return
	fi
	if [ "$("$jsonq" "$f" .paths 2>/dev/null)" != true ]; then
		echo "$1: no forced paths timed (a library without gdrmap_copy_*?)"
		return
	fi
	echo "$1 ($("$jsonq" "$f" .device.name), $("$jsonq" "$f" .backend) backend, offset $("$jsonq" "$f" .offset)):"
	for d in write read; do
		# shellcheck disable=SC2046
		set -- $("$jsonq" "$f" .goal.$d.within .goal.$d.sizes \
			.goal.$d.worst_ratio .goal.$d.worst_size \
			.small_copies.$d.worst_ratio .small_copies.$d.worst_size)
		met=no
		[ "$1" = "$2" ] && [ "$2" != 0 ] && met=yes
		small=$(awk -v r="$5" 'BEGIN { print (r <= 1.05) ? "yes" : "no" }')
		w=$(awk -v r="$3" 'BEGIN { printf "%.2f", r }')
		ws=$(awk -v r="$5" 'BEGIN { printf "%.2f", r }')
		echo "  $d: p50 within 1.1x of the fastest path at $1 of $2 sizes (worst ${w}x at $4): $met;" \
			"up to 1 KiB, worst ${ws}x gdr_copy_*'s p50 (at $6; 1.05 allowed for noise): $small"
		printf '  %s crossovers:' $d
		n=$("$jsonq" "$f" ".crossovers.$d#")
		i=0
		while [ "$i" -lt "$n" ]; do
			printf ' %s' "$("$jsonq" "$f" ".crossovers.${d}[$i].size" \
				".crossovers.${d}[$i].from" ".crossovers.${d}[$i].to" |
				tr '\n' ' ' | awk '{ printf "%s (%s -> %s)", $1, $2, $3 }')"
			i=$((i + 1))
		done
		[ "$n" = 0 ] && printf ' none'
		echo
	done
}
{
	verdict paths.json
	verdict paths-o3.json
} >"$out/summary.txt"
cat "$out/summary.txt"
echo "results in $out"
exit $status
