#!/bin/sh
# On a GPU machine: build, run the GPU tests and the copy benchmark, and
# leave everything under OUTDIR (default ./gpu-run-out): env.txt (date,
# GPU, driver, CPU, kernel, commit), gpu-tests.log, h200_copy.txt/.csv.
#
# Where the Vulkan loader is missing (the H200 machine), put Debian's
# libvulkan1 and libglvnd0 packages (.deb) in .gl/ at the top of the tree:
# they are unpacked into / first.  GDRCOPY_LIB may name a GDRCopy 2.6
# libgdrapi.so to time its routines alongside.
set -u
out=${1:-${OUTDIR:-gpu-run-out}}
build=${BUILD:-/tmp/gdrmap-gpu-build}
cpu=${BENCH_CPU:-2}
mkdir -p "$out"

. scripts/gpu-machine-env.sh

{
	date -u
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total \
		--format=csv 2>&1
	grep -m1 'model name' /proc/cpuinfo
	grep -m1 -o 'avx512f\|movdir64b' /proc/cpuinfo | sort -u | tr '\n' ' '
	echo
	uname -r
	echo "commit: ${GDRMAP_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
	echo "benchmark pinned to CPU $cpu"
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

make -j"$(nproc)" O="$build" lib gpu-tests bench >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
VERBOSE=1 GDRCOPY_ENABLE_LOGGING=1 tests/run-tests.sh -t 120 \
	"$build"/tests/gpu/test_gpu_* >"$out/gpu-tests.log" 2>&1
tests_rc=$?
tail -n 1 "$out/gpu-tests.log"
timeout 300 taskset -c "$cpu" "$build/bench/h200_copy" "$out/h200_copy.csv" \
	>"$out/h200_copy.txt" 2>&1
bench_rc=$?
cat "$out/h200_copy.txt"
[ $tests_rc = 0 ] && [ $bench_rc = 0 ]
