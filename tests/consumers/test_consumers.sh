#!/bin/sh
# The consumer suite where there is no GPU (as in CI): every part skips
# with its reason and exit 77, and the latency summary judges "helps",
# "hurts" and "neutral" as its documentation says, on made-up runs.
# NCCL_GDR and GDRAPI name the built nccl_gdr and libgdrapi.so.2.
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/bench/consumers
NCCL_GDR=${NCCL_GDR:-build/bench/consumers/nccl_gdr}
GDRAPI=${GDRAPI:-build/lib/libgdrapi.so.2}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
passed=0 failed=0 skipped=0

expect() {
	what=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $what" >&2
	fi
}

# The machine must really lack a GPU for the skip cases to mean anything.
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	echo "SKIP: this machine has a GPU; run bench/consumers/run.sh there" >&2
	skipped=$((skipped + 1))
else
	for mode in check "check -s" lat; do
		# shellcheck disable=SC2086
		"$NCCL_GDR" $mode >"$OUT/n.out" 2>"$OUT/n.err"
		rc=$?
		expect "nccl_gdr $mode without a GPU exits 77 (got $rc)" [ $rc = 77 ]
		expect "nccl_gdr $mode says why" grep -q '^SKIP: no libcuda.so.1' "$OUT/n.err"
		expect "nccl_gdr $mode ends with the closing line" \
			grep -qx '0 passed, 0 failed, 1 skipped' "$OUT/n.out"
	done
	"$NCCL_GDR" bogus >/dev/null 2>&1
	expect "nccl_gdr with a bad mode exits 2" [ $? = 2 ]

	for extra in "" --default-allocator; do
		python3 "$here/torch_pin.py" "$GDRAPI" $extra >"$OUT/t.out" 2>&1
		rc=$?
		expect "torch_pin.py $extra without torch or a GPU exits 77 (got $rc)" [ $rc = 77 ]
		expect "torch_pin.py $extra says why" grep -q '^SKIP: ' "$OUT/t.out"
	done

	"$here/run.sh" "$OUT/run" >"$OUT/r.out" 2>&1
	rc=$?
	expect "run.sh without a GPU exits 77 (got $rc)" [ $rc = 77 ]
	expect "run.sh writes its summary" grep -q '^all *skip *no GPU' "$OUT/run/summary.txt"
	expect "run.sh ends with the closing line" \
		grep -qx '0 passed, 0 failed, 1 skipped' "$OUT/run/summary.txt"
fi

# Three runs per setting; per run, reps of one size.  8 B: gdrmap is
# faster by more than either spread; 16 B: slower; 32 B: the ranges
# overlap.
mkdir -p "$OUT/lat"
for k in 1 2 3; do
	for gdr in 0 1; do
		f=$OUT/lat/lat-socket-gdr$gdr-run$k.out
		echo "nccl 22809, 2 processes" >"$f"
		for rep in 0 1 2 3 4; do
			if [ $gdr = 1 ]; then
				a=$((20 + k)) b=$((40 + k)) c=$((30 + k))
			else
				a=$((30 + k)) b=$((30 + k)) c=$((31 + k))
			fi
			echo "allreduce,8,$rep,$a.$rep" >>"$f"
			echo "allreduce,16,$rep,$b.$rep" >>"$f"
			echo "allreduce,32,$rep,$c.$rep" >>"$f"
		done
	done
done
python3 "$here/summarize.py" "$OUT/lat" >"$OUT/sum.md"
expect "summarize.py exits 0" [ $? = 0 ]
expect "8 B: helps" grep -q '^| 8 | 32.20 (31.20-33.20) | 22.20 (21.20-23.20) | -31.1% | helps |$' "$OUT/sum.md"
expect "16 B: hurts" grep -q '^| 16 | .* | hurts |$' "$OUT/sum.md"
expect "32 B: neutral" grep -q '^| 32 | .* | neutral |$' "$OUT/sum.md"
expect "one verdict line" grep -qx 'socket: GDRCopy path helps at 1 sizes, hurts at 1, neutral at 1' "$OUT/sum.md"
rm "$OUT"/lat/lat-socket-gdr1-run*.out
python3 "$here/summarize.py" "$OUT/lat" >"$OUT/sum.md"
expect "sizes without a gdrmap run are reported missing" grep -q ', 3 missing$' "$OUT/sum.md"
python3 "$here/summarize.py" "$OUT/nothing" >/dev/null 2>&1
expect "summarize.py without runs exits 1" [ $? = 1 ]

# The UCX part: without a GPU it skips and says so; its summaries judge
# as documented, on made-up runs.
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	UCX_SRC=/nonexistent "$here/ucx.sh" "$OUT/ucx" >"$OUT/u.out" 2>&1
	rc=$?
	expect "ucx.sh without a GPU exits 77 (got $rc)" [ $rc = 77 ]
	expect "ucx.sh says why" grep -q '^ucx *skip *no GPU' "$OUT/ucx/ucx-summary.txt"
fi
{
	echo "test,mem,size,alloc,gdr_copy,run,typical_us,avg_us,bw_MBs"
	for run in 1 2 3; do
		echo "tag_lat,cuda-host,8,legacy,1,$run,8.$run,8.5,1"
		echo "tag_lat,cuda-host,8,legacy,0,$run,10.$run,10.5,1"
		echo "tag_lat,host-cuda,8,vmm,1,$run,20.$run,20.5,1"
		echo "tag_lat,host-cuda,8,vmm,0,$run,10.$run,10.5,1"
		echo "tag_bw,cuda-host,65536,vmm,1,$run,1,1,500$run"
		echo "tag_bw,cuda-host,65536,vmm,0,$run,1,1,500$run"
		echo "ucp_get,cuda-host,8,legacy,1,$run,,,"
		echo "ucp_get,cuda-host,8,legacy,0,$run,,,"
	done
} >"$OUT/p.csv"
python3 "$here/summarize_ucx.py" "$OUT/p.csv" >"$OUT/p.md"
expect "summarize_ucx.py exits 0" [ $? = 0 ]
expect "faster with gdr_copy" grep -q '^| tag_lat | cuda-host | 8 | cudaMalloc | 8.20 (8.10-8.30) us | 10.20 (10.10-10.30) us | 0.80 | faster |$' "$OUT/p.md"
expect "slower with gdr_copy" grep -q '^| tag_lat | host-cuda | 8 | cuMemCreate | .* | 1.98 | slower |$' "$OUT/p.md"
expect "bandwidth: same" grep -q '^| tag_bw | cuda-host | 65536 | cuMemCreate | .* | 1.00 | same |$' "$OUT/p.md"
expect "failed both ways: unsupported" grep -q '^| ucp_get | .* | unsupported |$' "$OUT/p.md"
mkdir -p "$OUT/mpi"
for gdr in 0 1; do
	printf '# buffers\n      8    %s.00     9.00\n# data checked both ways: right\n' \
		$((gdr ? 1 : 7)) >"$OUT/mpi/pingpong-DH-vmm-gdr$gdr-run1.txt"
done
python3 "$here/summarize_ucx.py" --mpi "$OUT/mpi" >"$OUT/m.md"
expect "summarize_ucx.py --mpi judges" grep -q '^| D,H | cuMemCreate | 8 | 1.00 (1.00-1.00) | 7.00 (7.00-7.00) | 0.14 | faster |$' "$OUT/m.md"
python3 "$here/summarize_ucx.py" "$OUT/nothing.csv" >/dev/null 2>&1
expect "summarize_ucx.py without runs exits non-zero" [ $? != 0 ]

# The calls part's counting shim (bench/probes/gdr_call_count.c) where
# libgdrapi comes in as UCX brings it: dlopened RTLD_LOCAL with a module,
# out of the shim's RTLD_NEXT (it crashed there before; UCX's signal
# handler turned that into a silent exit 1).
libdir=$(cd "$(dirname "$GDRAPI")" && pwd)
printf '%s\n' '#include <gdrapi.h>' \
	'int mod_pin(void) { gdr_mh_t h; return gdr_pin_buffer(0, 0, 0, 0, 0, &h); }' >"$OUT/mod.c"
printf '%s\n' '#include <dlfcn.h>' '#include <stdio.h>' \
	'int main(int c, char **v) { void *m = dlopen(v[1], RTLD_NOW | RTLD_LOCAL);' \
	'  int (*f)(void) = m ? (int (*)(void))dlsym(m, "mod_pin") : 0;' \
	'  if (!f) { puts(dlerror()); return 2; }' \
	'  return f() == 0;' '}' >"$OUT/main.c"
if ${CC:-cc} -O2 -shared -fPIC -I"$top/include" -o "$OUT/count.so" \
	"$top/bench/probes/gdr_call_count.c" -ldl &&
	${CC:-cc} -shared -fPIC -I"$top/include" -o "$OUT/mod.so" "$OUT/mod.c" \
		-L"$libdir" -l:libgdrapi.so.2 -Wl,-rpath,"$libdir" &&
	${CC:-cc} -o "$OUT/main" "$OUT/main.c" -ldl; then
	mkdir -p "$OUT/calls"
	GDR_CALL_COUNT_DIR=$OUT/calls LD_PRELOAD=$OUT/count.so "$OUT/main" "$OUT/mod.so" \
		>"$OUT/c.out" 2>&1
	rc=$?
	expect "gdr_call_count.so finds a libgdrapi dlopened RTLD_LOCAL (exit $rc: $(head -c 200 "$OUT/c.out"))" [ $rc = 0 ]
	expect "gdr_call_count.so counts the call made through it" \
		grep -qx 'gdr_pin_buffer calls 1 mean_ns [0-9]* sizes 1:1' "$OUT"/calls/gdr-calls.*
else
	expect "gdr_call_count.so and its test program build" false
fi

if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed = 0 ]
