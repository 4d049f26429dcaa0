#!/bin/sh
# On a GPU machine: does gdrmap_copy_* take the fastest way of moving the
# bytes for every kind of host buffer?  For each kind, pinned
# (cuMemAllocHost), registered (page-aligned memory pinned with
# cuMemHostRegister) and pageable (page-aligned malloc memory, touched,
# never pinned), one `gdrmap copylat --paths --host KIND` run from 8 B to
# 64 MiB, both ways, twice: with the GPU's local CPUs (copylat's default)
# and with the process allowed one CPU (taskset -c N, and -C N so that
# copylat does not widen it again: the library then starts no helper
# threads, and threads and staged are n/a).  Per size the p50 of
# gdr_copy_*, cuMemcpy, cuMemcpy*Async on a private stream + sync,
# gdrmap_copy_* (with the path it took) and each of its paths forced
# (mapping, threads, dma, staged), all timed in turns in the same rounds.
#
# The targets, checked in summary.txt from the JSON:
# gdrmap_copy_*'s p50 at most 1.1x the fastest other way's (any forced
# path, gdr_copy_*, cuMemcpy, cuMemcpy*Async) at every size, for every
# kind, with all CPUs and with one; from and to pageable memory at 4 MiB
# and above, at least 2x cuMemcpy's throughput, and how far the 64 MiB
# copy is from the pinned-memory DMA floor (the pinned run's fastest
# 64 MiB copy); small copies (up to 1 KiB) no slower than gdr_copy_*.
#
# usage: bench/copy-paths-run.sh OUTDIR            (from the top of the tree)
# Environment: BUILD (build directory, default /tmp/gdrmap-paths-build),
# GDRMAP_ARGS (added to every run, e.g. "-d 1"; a -C there is overridden
# in the one-CPU runs), ONE_CPU (the CPU of the one-CPU runs; default the
# CPU the all-CPU pinned run measured on), ITERS (calls per size and
# method, default 300).  Where the Vulkan loader is missing, put Debian's
# libvulkan1 and libglvnd .debs in .gl/, as for bench/gpu-run.sh.
#
# Writes OUTDIR/env.txt, build.log, doctor.txt; per KIND paths-KIND.txt
# and paths-KIND.json (all CPUs: the table to read, the document to
# check; two runs of the same measurement) and paths-KIND-1cpu.json (one
# CPU); copybw-64M.json (pinned, gdrmap_copy_* beside the mapping and
# cuMemcpy); summary.txt: the verdicts, from the JSON documents alone
# (bench/copy-paths-summary.sh OUTDIR writes it again).
#
# How p50 is had: every copy is one call timed on its own (CLOCK_MONOTONIC
# around the call, ~30 ns of clock included).  Per size and method up to
# ITERS calls, fewer for large sizes: at most 256 MiB written or 64 MiB
# read per size and method, never fewer than 20 (so 20 calls for reads
# from 4 MiB, for writes from 16 MiB).  p50 is the nearest-rank median.
# gdrmap_copy_* is first called until the library has chosen the size's
# path for the buffer's kind, so its own measuring copies are not in the
# figures.
# Time on an H200 (2026-12-02, ITERS=200): 27-41 s per copylat run, most
# of it reads through the mapping at ~1 GB/s and checking 32 and 64 MiB
# of every path byte by byte; nine runs and copybw, 280-310 s in all,
# build included.  Each run is cut off at 90 s.
set -u
out=${1:?usage: $0 OUTDIR}
build=${BUILD:-/tmp/gdrmap-paths-build}
iters=${ITERS:-300}
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
	echo "ITERS: $iters"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

make -j"$(nproc)" O="$build" lib tools >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
g=$build/tools/gdrmap
jsonq=$build/tests/tools/jsonq
"$g" doctor >"$out/doctor.txt" 2>&1

status=0
pre='' post=''
# run NAME SECONDS ARGS...: stdout into OUTDIR/NAME, exit status noted;
# $pre before the command (taskset), $post after every argument (-C N).
run() {
	name=$1 secs=$2
	shift 2
	echo "== $pre gdrmap $* $a $post"
	start=$(date +%s)
	# shellcheck disable=SC2086
	timeout "$secs" $pre "$g" "$@" $a $post >"$out/$name" 2>"$out/$name.err"
	rc=$?
	echo "   exit $rc, $(( $(date +%s) - start )) s"
	[ $rc = 0 ] || { status=1; cat "$out/$name.err"; }
	[ -s "$out/$name.err" ] || rm -f "$out/$name.err"
}

p="copylat --paths -m 8 -s 64M -w $iters -r $iters"
for kind in pinned registered pageable; do
	# shellcheck disable=SC2086
	run "paths-$kind.json" 90 $p --host $kind --json
	# shellcheck disable=SC2086
	run "paths-$kind.txt" 90 $p --host $kind
	cat "$out/paths-$kind.txt"
done

cpu=${ONE_CPU:-$("$jsonq" "$out/paths-pinned.json" .cpus.measuring_cpu 2>/dev/null)}
case $cpu in ''|null|*[!0-9]*) cpu=0 ;; esac
pre="taskset -c $cpu" post="-C $cpu"
for kind in pinned registered pageable; do
	# shellcheck disable=SC2086
	run "paths-$kind-1cpu.json" 90 $p --host $kind --json
done
pre='' post=''
run copybw-64M.json 60 copybw -s 64M --json

sh bench/copy-paths-summary.sh "$out" >"$out/summary.txt"
cat "$out/summary.txt"
echo "results in $out"
exit $status
