#!/bin/bash
# The consumer suite, on a GPU machine, in one go: what really loads
# libgdrapi, on every GPU of the machine (bench/consumers/README.md).
#
# usage: bench/consumers/run.sh OUTDIR        (from a checkout, as root)
#
#   build     the library, the gdrmap command, tests/gpu, nccl_gdr
#   torch     PyTorch tensors (expandable segments) pinned, mapped, read
#             and written on every GPU through ctypes; the default
#             allocator's tensors refused with the fix named
#   nccl      NCCL (PyTorch's pip libnccl.so.2) through gdrmap on two GPUs,
#             NVLink and the socket transport: GDRCopy enabled (NCCL's
#             log), collectives checked, all-reduce latency 8 B..64 KiB
#             with and without gdrmap; skipped with fewer than two GPUs
#   gputests  tests/gpu, every test on every GPU
#   gdrmap    gdrmap doctor, copylat, copybw, apiperf, pplat with -d N
#             for every GPU
#   ucx, mpi  UCX built from UCX_SRC over gdrmap, ucx_perftest with and
#             without gdr_copy, and Open MPI (MPI_DEBS) over it
#             (bench/consumers/ucx.sh); skipped without UCX_SRC
#
# Everything lands in OUTDIR (made if missing): summary.txt (one line per
# part, then "N passed, N failed, N skipped"), env.txt, and a directory
# per part.  Exit 0 if every part passed or was skipped with at least one
# passing, 1 if one failed, 77 without a GPU.
# Environment: BUILD (build directory, default /tmp/gdrmap-consumers-build),
# CONSUMERS_PARTS (the parts to run, default all, in the order above),
# LAT_RUNS (latency runs per transport and setting, default 3),
# NCCL_LIB (the libnccl.so.2 to use; default PyTorch's),
# CONSUMERS_GDRMAP_BACKEND (GDRMAP_BACKEND for NCCL's runs with gdrmap;
# unset by default: gdr_open's own choice).
set -u
out=${1:?usage: bench/consumers/run.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
build=${BUILD:-/tmp/gdrmap-consumers-build}
parts=${CONSUMERS_PARTS:-build torch nccl gputests gdrmap ucx mpi}
lat_runs=${LAT_RUNS:-3}
python=$(command -v python3 || echo python3)

# No NVLink multicast anywhere (it is not lent on these machines).
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
unset GDRCOPY_ENABLE_LOGGING GDRCOPY_LOG_LEVEL GDRMAP_BACKEND

: >"$out/summary.txt"
npass=0 nfail=0 nskip=0
# note PART STATUS TEXT: one line of summary.txt, counted.
note() {
	printf '%-9s %-4s %s\n' "$1" "$2" "$3" | tee -a "$out/summary.txt"
	case $2 in
	pass) npass=$((npass + 1)) ;;
	fail) nfail=$((nfail + 1)) ;;
	*) nskip=$((nskip + 1)) ;;
	esac
}
finish() {
	echo "$npass passed, $nfail failed, $nskip skipped" | tee -a "$out/summary.txt"
	[ $nfail -gt 0 ] && exit 1
	[ $npass = 0 ] && exit 77
	exit 0
}
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
# status PART RC TEXT: pass for 0, skip for 77, fail otherwise.
status() {
	case $2 in
	0) note "$1" pass "$3" ;;
	77) note "$1" skip "$3" ;;
	*) note "$1" fail "$3 (exit $2)" ;;
	esac
}

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "$ngpu" = 0 ]; then
	note all skip "no GPU: nvidia-smi lists none; this suite runs on the GPU machines"
	finish
fi

. scripts/gpu-machine-env.sh
{
	date -u
	nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,memory.total \
		--format=csv 2>&1
	nvidia-smi topo -m 2>&1
	grep -m1 'model name' /proc/cpuinfo
	uname -r
	echo "commit: ${GDRMAP_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
	echo "python: $python"
	"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
	env | grep -e ^NCCL_ -e ^NVSHMEM_ -e ^TORCH_ -e ^VK_ | sort
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

lib=$build/lib
if want build; then
	if make -j"$(nproc)" O="$build" lib tools gpu-tests consumers \
		>"$out/build.log" 2>&1; then
		note build pass "library, gdrmap, tests/gpu, nccl_gdr in $build"
	else
		tail -30 "$out/build.log"
		note build fail "make failed: build.log"
		finish
	fi
fi

if want torch; then
	d=$out/torch
	mkdir -p "$d"
	timeout 300 "$python" bench/consumers/torch_pin.py "$lib/libgdrapi.so.2" \
		>"$d/expandable.txt" 2>&1
	rc=$?
	status torch $rc "expandable segments, $ngpu GPU(s): $(tail -n 1 "$d/expandable.txt")"
	timeout 300 "$python" bench/consumers/torch_pin.py "$lib/libgdrapi.so.2" \
		--default-allocator >"$d/default-allocator.txt" 2>&1
	rc=$?
	status torch $rc "default allocator: $(tail -n 1 "$d/default-allocator.txt")"
fi

# nccl_run NAME GDR TRANSPORT ARGS...: one nccl_gdr run, output in
# $out/nccl/NAME.{out,err}, NCCL's log in NAME.*.log; rc in $rc.
nccl_run() {
	local name=$1 gdr=$2 transport=$3
	shift 3
	(
		export NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$out/nccl/$name.%h.%p.log"
		export NCCL_LIB="$nccl_lib"
		if [ "$transport" = socket ]; then
			export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket
		fi
		if [ "$gdr" = 1 ]; then
			export NCCL_GDRCOPY_ENABLE=1
			export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
			# gdr_open's own choice, as a user gets it (CONSUMERS_
			# GDRMAP_BACKEND names one, e.g. "any" for the vulkan
			# backend where the rm backend cannot serve).
			if [ -n "${CONSUMERS_GDRMAP_BACKEND:-}" ]; then
				export GDRMAP_BACKEND=$CONSUMERS_GDRMAP_BACKEND
			else
				unset GDRMAP_BACKEND
			fi
			# gdrmap's own log: its backend and every pin.
			export GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1
		else
			export NCCL_GDRCOPY_ENABLE=0
		fi
		exec timeout 300 "$build/bench/consumers/nccl_gdr" "$@"
	) >"$out/nccl/$name.out" 2>"$out/nccl/$name.err"
	rc=$?
}

# nccl_check NAME GDR TRANSPORT ARGS...: a checking run, judged.
nccl_check() {
	local name=$1 gdr=$2 transport=$3 what pins
	nccl_run "$@"
	what="$name: $(tail -n 1 "$out/nccl/$name.out")"
	if [ $rc = 0 ] && [ "$gdr" = 1 ]; then
		if ! cat "$out/nccl/$name".*.log 2>/dev/null |
			grep -q 'GDRCOPY enabled library'; then
			rc=1
			what="$what; NCCL's log lacks 'GDRCOPY enabled library'"
		elif ! grep -q 'using the [a-z]* backend' "$out/nccl/$name.err"; then
			rc=1
			what="$what; NCCL did not load gdrmap's libgdrapi"
		else
			pins=$(grep -c ': pinned \[' "$out/nccl/$name.err")
			what="$what; $(cat "$out/nccl/$name".*.log | grep -m1 -o 'GDRCOPY enabled.*'); gdrmap: $(grep -m1 -o 'using the [a-z]* backend' "$out/nccl/$name.err"), $pins pins"
			# The network transport keeps its sync words in pinned
			# GPU memory; NVLink (P2P) uses none.
			if [ "$transport" = socket ] && [ "$pins" = 0 ]; then
				rc=1
				what="$what: none over the socket transport"
			fi
		fi
	fi
	status nccl "$rc" "$what"
}

if want nccl; then
	mkdir -p "$out/nccl"
	nccl_lib=${NCCL_LIB:-$("$python" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)}
	[ -f "$nccl_lib" ] || nccl_lib=libnccl.so.2
	echo "libnccl: $nccl_lib" >>"$out/env.txt"
	if [ "$ngpu" -lt 2 ]; then
		note nccl skip "NCCL between GPUs needs 2 GPUs; this machine has $ngpu"
	else
		nccl_check check-socket-gdr 1 socket check
		nccl_check check-nvlink-gdr 1 nvlink check
		nccl_check check-socket-gdr-1proc 1 socket check -s
		nccl_check check-socket-nogdr 0 socket check
		for k in $(seq 1 "$lat_runs"); do
			for t in socket nvlink; do
				for gdr in 1 0; do
					nccl_run "lat-$t-gdr$gdr-run$k" $gdr $t lat
					[ $rc = 0 ] || status nccl $rc "lat-$t-gdr$gdr-run$k"
				done
			done
		done
		"$python" bench/consumers/summarize.py "$out/nccl" \
			>"$out/nccl/latency.md" 2>&1
		rc=$?
		status nccl $rc "latency: $(grep -h ': GDRCopy path' "$out/nccl/latency.md" | tr '\n' ';')"
	fi
fi

if want gputests; then
	VERBOSE=1 tests/run-tests.sh -t 300 "$build"/tests/gpu/test_gpu_* \
		>"$out/gpu-tests.log" 2>&1
	rc=$?
	status gputests $rc "tests/gpu on $ngpu GPU(s): $(tail -n 1 "$out/gpu-tests.log")"
fi

if want gdrmap; then
	d=$out/gdrmap
	mkdir -p "$d"
	g=$build/tools/gdrmap
	timeout 120 "$g" doctor >"$d/doctor.txt" 2>&1
	rc=$?
	status gdrmap $rc "doctor, every GPU: $(grep -m1 -o -e 'gdr_open uses [a-z]*' -e 'gdr_open (the GDRCopy API: UCX, MPI, NCCL) steps aside' "$d/doctor.txt")"
	for i in $(seq 0 $((ngpu - 1))); do
		timeout 120 "$g" doctor -d "$i" --json >"$d/doctor-d$i.json" 2>"$d/doctor-d$i.err"
		rc=$?
		status gdrmap $rc "doctor -d $i"
		for c in copylat copybw apiperf pplat; do
			timeout 120 "$g" $c -d "$i" --json >"$d/$c-d$i.json" 2>"$d/$c-d$i.err"
			rc=$?
			status gdrmap $rc "$c -d $i"
		done
	done
fi
uparts=
want ucx && uparts=ucx
want mpi && uparts="$uparts mpi"
if [ -n "$uparts" ]; then
	# shellcheck disable=SC2086
	BUILD="$build" bench/consumers/ucx.sh "$out/ucx" $uparts >"$out/ucx.log" 2>&1
	rc=$?
	status ucx $rc "$uparts: $(tail -n 1 "$out/ucx/ucx-summary.txt" 2>/dev/null)"
fi
finish
