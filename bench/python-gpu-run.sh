#!/bin/sh
# On a GPU machine, everything the Python package needs a GPU for, from a
# fresh checkout (run from the top of the tree):
#
#   bench/python-gpu-run.sh OUTDIR
#
# builds the library, the gdrmap command, the tests' mock libraries and
# the package's compiled flag helper for this Python (see below), then
# leaves in OUTDIR: env.txt (date, GPUs, driver, CPU, kernel, commit,
# Python, PyTorch, CuPy, which flag helper), build.log, doctor.txt/.json,
# gpu-tests.log (tests/python/gpu: PyTorch and CuPy arrays on every GPU, a
# persistent kernel driven through the mapping), host-tests.log
# (tests/python with this Python), python_flaglat.txt/.json
# (bench/python_flaglat.py: flag read/write latency through the helper
# and through ctypes against tensor.item()/cpu()/fill_()/copy_(), pinned
# to CPU $BENCH_CPU), python_copy.txt/.json (bench/python_copy.py: reads
# and writes of 8 B to 64 MiB through Mapping, by every path, against
# PyTorch's copies; not pinned, the threads path uses several CPUs),
# example.log (examples/python), summary.txt.  Exit status 0 when every
# part passed; 77 on a machine without a GPU (the tests skip, the
# benchmarks and the example are not run).
#
# The flag helper (python/gdrmap/_fastflag.c) is made for PYTHON by the
# first of these that works, and env.txt and summary.txt say which:
#   1. built here with PYTHON's own headers (sysconfig's include dir);
#   2. built here for the stable ABI (abi3, Python 3.11 and later) with
#      another Python's headers: /usr/bin/python3, python3.1x;
#   3. the abi3 build carried from the build machine:
#      $GDRMAP_HELPER_PREBUILT, default build/python/gdrmap/_fastflag.abi3.so
#      of this tree (make python-helper there; it is an ignored path);
#   4. none: the flags go through ctypes (GDRMAP_FASTFLAG=0), and the
#      benchmark says so.
#
# Environment: PYTHON (default /opt/torch/.venv/bin/python3, else python3),
# BUILD (default /tmp/gdrmap-python-build), BENCH_CPU (default 2),
# GDRMAP_HELPER_PREBUILT.  Where the Vulkan loader is missing, Debian's
# libvulkan1 and libglvnd0 .debs in .gl/ are unpacked first
# (scripts/gpu-machine-env.sh).
set -u
out=${1:?usage: $0 OUTDIR}
build=${BUILD:-/tmp/gdrmap-python-build}
cpu=${BENCH_CPU:-2}
py=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
mkdir -p "$out"
out=$(cd "$out" && pwd)

. scripts/gpu-machine-env.sh

export GDRMAP_BUILD="$build" GDRMAP_LIBRARY="$build/lib/libgdrapi.so.2"
export GDRMAP_COMMIT="${GDRMAP_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
export PYTHONDONTWRITEBYTECODE=1
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,memory.total \
		--format=csv 2>&1
	grep -m1 'model name' /proc/cpuinfo
	echo "cpus: $(nproc); benchmark pinned to CPU $cpu"
	uname -r
	echo "commit: $GDRMAP_COMMIT"
	"$py" -c 'import sys; print("python", sys.version.split()[0], sys.executable)'
	for m in torch cupy numpy; do
		"$py" -c "import $m; print('$m', $m.__version__)" 2>&1 | tail -n 1
	done
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

make -j"$(nproc)" O="$build" lib tools python-mocks >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }

# The flag helper, by the first way that works (see the top).
helper_dir=$build/python/gdrmap
prebuilt=${GDRMAP_HELPER_PREBUILT:-build/python/gdrmap/_fastflag.abi3.so}
rm -f "$helper_dir"/_fastflag*.so
helper=
abi3=$("$py" -c 'import sys; print(int(sys.version_info >= (3, 11)))')
echo "== flag helper for $py" >>"$out/build.log"
if make O="$build" PYTHON="$py" python-helper >>"$out/build.log" 2>&1; then
	helper="built here with $py's headers ($("$py" -c \
		'import sysconfig; print(sysconfig.get_paths()["include"])'))"
elif [ "$abi3" = 1 ]; then
	for other in /usr/bin/python3 /usr/bin/python3.1[1-9] /usr/local/bin/python3.1[1-9]; do
		[ -x "$other" ] && [ "$other" != "$py" ] || continue
		"$other" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
			continue
		if make O="$build" PYTHON="$other" python-helper >>"$out/build.log" 2>&1; then
			helper="built here for the stable ABI (abi3) with $other's headers"
			break
		fi
	done
	if [ -z "$helper" ] && [ -f "$prebuilt" ]; then
		mkdir -p "$helper_dir"
		cp "$prebuilt" "$helper_dir/_fastflag.abi3.so"
		helper="the abi3 build carried from the build machine ($prebuilt)"
	fi
fi
so=$(ls "$helper_dir"/_fastflag*.so 2>/dev/null | head -n 1)
if [ -n "$helper" ] && GDRMAP_FASTFLAG=$so PYTHONPATH=python "$py" -c \
	'import gdrmap, sys; sys.exit(not gdrmap.helper_path())' >>"$out/build.log" 2>&1; then
	export GDRMAP_FASTFLAG="$so"
else
	[ -n "$helper" ] && helper="$helper, but $py cannot load it (build.log)"
	helper="${helper:-none: $py has no Python.h and no other way worked}; flags through ctypes"
	export GDRMAP_FASTFLAG=0
	rm -f "$helper_dir"/_fastflag*.so
fi
export GDRMAP_HELPER_BUILT="$helper"
echo "flag helper: $helper" | tee -a "$out/env.txt"
"$build/tools/gdrmap" doctor >"$out/doctor.txt" 2>&1
"$build/tools/gdrmap" doctor --json >"$out/doctor.json" 2>/dev/null

# step NAME LOG COMMAND...: run, keep the log, note the exit status.
status=0
step() {
	name=$1 log=$2
	shift 2
	echo "== $name"
	"$@" >"$out/$log" 2>&1
	rc=$?
	tail -n 1 "$out/$log"
	echo "$name: exit $rc" >>"$out/summary.txt"
	[ $rc = 0 ] || status=1
}
: >"$out/summary.txt"
echo "flag helper: $helper" >>"$out/summary.txt"
step "GPU tests" gpu-tests.log env VERBOSE=1 tests/run-tests.sh -t 600 \
	-w "$py" tests/python/gpu/test_gpu_*.py
step "host tests" host-tests.log env VERBOSE=1 tests/run-tests.sh -t 600 \
	-w "$py" tests/python/test_*.py
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no GPU here: the benchmark and the example were not run" |
		tee -a "$out/summary.txt"
	[ $status = 0 ] && exit 77
	exit 1
fi
step "benchmark" bench.log timeout 600 taskset -c "$cpu" "$py" \
	bench/python_flaglat.py "$out"
step "copy benchmark" copy-bench.log timeout 300 "$py" bench/python_copy.py "$out"
step "example" example.log sh -c "timeout 120 '$py' \
	examples/python/monitor_and_stop.py --alloc torch --seconds 2 &&
	timeout 120 '$py' examples/python/monitor_and_stop.py --alloc cupy --seconds 2"
cat "$out/python_flaglat.txt" "$out/python_copy.txt" 2>/dev/null
cat "$out/summary.txt"
exit $status
