#!/bin/sh
# On a GPU machine: every gdrmap subcommand, with JSON kept for
# bench/results/<machine>/ and bench/plot.sh, then the measuring
# commands' own check (tests/tools/test_measure.sh).
#
# usage: tools/gpu-run.sh OUTDIR          (from the top of the tree)
# Environment: BUILD (build directory, default /tmp/gdrmap-tools-build),
# GDRMAP_ARGS (added to every measuring command, e.g. "-C 2").
# Where the Vulkan loader is missing, put Debian's libvulkan1 (and
# libglvnd0) .deb files in .gl/ as for bench/gpu-run.sh.
set -u
out=${1:?usage: $0 OUTDIR}
build=${BUILD:-/tmp/gdrmap-tools-build}
mkdir -p "$out"

. scripts/gpu-machine-env.sh

make -j"$(nproc)" O="$build" lib tools >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
g=$build/tools/gdrmap
a=${GDRMAP_ARGS:-}
{
	date -u
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader 2>&1
	uname -r
	echo "commit: ${GDRMAP_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
	echo "GDRMAP_ARGS: $a"
} >"$out/env.txt"
cat "$out/env.txt"

status=0
# run NAME ARGS...: JSON into OUTDIR/NAME.json, exit status noted.
run() {
	name=$1
	shift
	echo "== gdrmap $* --json"
	# shellcheck disable=SC2086
	timeout 300 "$g" "$@" $a --json >"$out/$name.json" 2>"$out/$name.err"
	rc=$?
	echo "   exit $rc"
	[ $rc = 0 ] || { status=1; cat "$out/$name.err"; }
}

"$g" doctor | tee "$out/doctor.txt"
"$g" doctor --json >"$out/doctor.json"
run copylat copylat
run copylat-o3 copylat -o 3
run copylat-cold copylat --cold -s 1M
run copylat-paths copylat --paths -m 8 -s 64M
for t in 1 2 4 8 16; do
	run copybw-t$t copybw -t $t
done
run copybw-8M-read copybw -s 8M -r 20 -t 1
run apiperf-64K apiperf
run apiperf-64M apiperf -s 64M -n 200
run pplat pplat
# The text forms, for reading.
for c in "copylat" "copybw -t 2" "apiperf" "pplat"; do
	# shellcheck disable=SC2086
	timeout 300 "$g" $c $a >"$out/$(echo "$c" | tr ' ' '_').txt" 2>&1 || status=1
done
GDRMAP=$g JSONQ=$build/tests/tools/jsonq tests/tools/test_measure.sh \
	>"$out/test_measure.log" 2>&1 || status=1
tail -n 1 "$out/test_measure.log"
echo "results in $out (plot with: bench/plot.sh $out/*.json)"
exit $status
