#!/bin/sh
# On a GPU machine, everything the Python package needs a GPU for, from a
# fresh checkout (run from the top of the tree):
#
#   bench/python-gpu-run.sh OUTDIR
#
# builds the library, the gdrmap command and the tests' mock library, then
# leaves in OUTDIR: env.txt (date, GPUs, driver, CPU, kernel, commit,
# Python, PyTorch, CuPy), build.log, doctor.txt/.json, gpu-tests.log
# (python/tests/gpu: PyTorch and CuPy arrays on every GPU, a persistent
# kernel driven through the mapping), host-tests.log (python/tests with
# this Python), python_flaglat.txt/.json (bench/python_flaglat.py: flag
# read/write latency against tensor.item()/cpu()/fill_()/copy_(), pinned
# to CPU $BENCH_CPU), example.log (examples/python), summary.txt.
# Exit status 0 when every part passed; 77 on a machine without a GPU
# (the tests skip, the benchmark and the example are not run).
#
# Environment: PYTHON (default /opt/torch/.venv/bin/python3, else python3),
# BUILD (default /tmp/gdrmap-python-build), BENCH_CPU (default 2).  Where
# the Vulkan loader is missing, Debian's libvulkan1 and libglvnd0 .debs in
# .gl/ are unpacked first (scripts/gpu-machine-env.sh).
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

make -j"$(nproc)" O="$build" lib tools python-tests >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
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
step "GPU tests" gpu-tests.log env VERBOSE=1 tests/run-tests.sh -t 600 \
	-w "$py" python/tests/gpu/test_gpu_*.py
step "host tests" host-tests.log env VERBOSE=1 tests/run-tests.sh -t 600 \
	-w "$py" python/tests/test_*.py
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no GPU here: the benchmark and the example were not run" |
		tee -a "$out/summary.txt"
	[ $status = 0 ] && exit 77
	exit 1
fi
step "benchmark" bench.log timeout 600 taskset -c "$cpu" "$py" \
	bench/python_flaglat.py "$out"
step "example" example.log sh -c "timeout 120 '$py' \
	examples/python/monitor_and_stop.py --alloc torch --seconds 2 &&
	timeout 120 '$py' examples/python/monitor_and_stop.py --alloc cupy --seconds 2"
cat "$out/python_flaglat.txt" 2>/dev/null
cat "$out/summary.txt"
exit $status
