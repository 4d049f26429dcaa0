#!/bin/bash
# UCX and CUDA-aware MPI over gdrmap, on a GPU machine (the "ucx" and
# "mpi" parts of bench/consumers/run.sh; bench/consumers/README.md).
#
# usage: bench/consumers/ucx.sh OUTDIR [ucx|mpi]...     (as root, from a checkout)
#
#   ucx  builds UCX from UCX_SRC against gdrmap installed in $BUILD/prefix,
#        checks that by default UCX lists gdr_copy where gdr_open serves
#        (gdrdrv or the rm backend: every kind of memory mapped) and leaves
#        it out where gdr_open steps aside (only the vulkan backend, which
#        cannot map cudaMalloc memory), runs tag_lat with gdr_copy in
#        UCX_TLS and gdr_open's default (UCX_MEMS x both allocators x
#        UCX_SIZES, perftest-default.csv), and that with
#        GDRMAP_BACKEND=$UCX_GDRMAP_BACKEND (default unset: gdr_open's
#        choice, for everything below; "any" takes the vulkan backend where
#        it is the only one) UCX's gdr_copy transport loads gdrmap's libgdrapi,
#        then runs ucx_perftest (two processes, one GPU) with and without
#        gdr_copy in UCX_TLS: tag_lat, tag_bw, ucp_put_lat, ucp_get,
#        ucp_put_bw, 8 B to 64 KiB, cuda<->host and cuda<->cuda, on the
#        cudaMalloc memory ucx_perftest allocates (which the module-free
#        backend pins copy-only) and on cuMemCreate memory (the same
#        program with vmm_cudamalloc.so preloaded: memory it maps), UCX_RUNS
#        runs of each, alternating; every pairing once more with -V (UCX
#        checks the data).  perftest.csv has every run, perftest.md the
#        medians, spreads and ratios (summarize_ucx.py).
#   calls which libgdrapi calls UCX makes per message (tag_lat, host<->cuda,
#        8 B to 64 KiB, both allocators, with gdr_copy), through
#        bench/probes/gdr_call_count.c preloaded, with the protocol UCX
#        chose (UCX_PROTO_INFO=y): OUTDIR/calls.md and calls/ (CALLS_MEMS,
#        CALLS_SIZES narrow it).
#   mpi  Open MPI (MPI_DEBS: a directory of Debian's openmpi-bin,
#        libopenmpi3 and their libraries, unpacked into $BUILD/ompi) with
#        pml ucx over that UCX, 2 ranks on GPU 0: mpi_pingpong D,D D,H H,D
#        on cuMemAlloc and cuMemCreate memory, with and without gdr_copy,
#        and once more with gdr_copy in UCX_TLS and gdr_open's default (no
#        GDRMAP_BACKEND: what a user gets; "gdr_copy=default");
#        the data checked both ways before each size is timed.
#
# Environment: UCX_SRC (an autogen'd UCX source tree, or a .tar.gz of one
# holding a single top directory), MPI_DEBS, BUILD (default
# /tmp/gdrmap-consumers-build), UCX_RUNS (default 3), UCX_ITERS
# (iterations of each run, default 5000), UCX_TESTS, UCX_MEMS and
# UCX_SIZES (the perftest matrix; defaults as above), UCX_VALIDATE (0: skip
# the -V runs), MPI_RUNS (default UCX_RUNS).  Exit 0 if every run passed, 1 if one
# failed, 77 if there is nothing to run (no GPU, no UCX_SRC).
set -u
out=${1:?usage: bench/consumers/ucx.sh OUTDIR [ucx|mpi]...}
shift
parts=${*:-ucx mpi}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
build=${BUILD:-/tmp/gdrmap-consumers-build}
mkdir -p "$build" && build=$(cd "$build" && pwd) || exit 1
runs=${UCX_RUNS:-3}
iters=${UCX_ITERS:-5000}
tests=${UCX_TESTS:-tag_lat tag_bw ucp_put_lat ucp_get ucp_put_bw}
mems=${UCX_MEMS:-cuda,host host,cuda cuda,cuda}
sizes=${UCX_SIZES:-8 1024 4096 65536}
prefix=$build/prefix
ucx=$build/ucx
with_gdr=sm,self,cuda_copy,gdr_copy
without_gdr=sm,self,cuda_copy
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
unset GDRCOPY_ENABLE_LOGGING GDRCOPY_LOG_LEVEL GDRMAP_BACKEND GDRMAP_COPY_ONLY

npass=0 nfail=0 nskip=0
note() {
	printf '%-5s %-4s %s\n' "$1" "$2" "$3" | tee -a "$out/ucx-summary.txt"
	case $2 in
	pass) npass=$((npass + 1)) ;;
	fail) nfail=$((nfail + 1)) ;;
	*) nskip=$((nskip + 1)) ;;
	esac
}
finish() {
	echo "$npass passed, $nfail failed, $nskip skipped" | tee -a "$out/ucx-summary.txt"
	[ $nfail -gt 0 ] && exit 1
	[ $npass = 0 ] && exit 77
	exit 0
}
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
: >"$out/ucx-summary.txt"

if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	note ucx skip "no GPU: nvidia-smi lists none; this part runs on the GPU machines"
	finish
fi
if [ -z "${UCX_SRC:-}" ] || [ ! -e "$UCX_SRC" ]; then
	note ucx skip "UCX_SRC names no UCX source tree (prepare one with autogen.sh where there is a network)"
	finish
fi
. scripts/gpu-machine-env.sh

# gdrmap, installed as a user would (make install), for UCX to build with.
if ! { make -j"$(nproc)" O="$build" lib tools >"$out/ucx-gdrmap-build.log" 2>&1 &&
	make O="$build" install PREFIX="$prefix" >>"$out/ucx-gdrmap-build.log" 2>&1; }; then
	tail -20 "$out/ucx-gdrmap-build.log"
	note ucx fail "gdrmap's make install failed: ucx-gdrmap-build.log"
	finish
fi

# UCX, release build, against that prefix.
src=$build/ucx-src
if [ ! -x "$ucx/bin/ucx_perftest" ]; then
	rm -rf "$src" && mkdir -p "$src"
	if [ -d "$UCX_SRC" ]; then
		cp -a "$UCX_SRC"/. "$src"/
	else
		tar xzf "$UCX_SRC" -C "$src" --strip-components=1
	fi
	(
		cd "$src" &&
		./configure --prefix="$ucx" --with-cuda=/usr/local/cuda \
			--with-gdrcopy="$prefix" \
			--with-nvcc-gencode=-gencode=arch=compute_90,code=sm_90 \
			--disable-logging --disable-debug --disable-assertions \
			--disable-params-check --without-java --without-go \
			--without-gda \
			--disable-doxygen-doc &&
		make -j"$(nproc)" install
	) >"$out/ucx-build.log" 2>&1
	if [ ! -x "$ucx/bin/ucx_perftest" ]; then
		tail -30 "$out/ucx-build.log"
		note ucx fail "UCX did not build: ucx-build.log"
		finish
	fi
fi
export LD_LIBRARY_PATH="$ucx/lib:$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
	"$ucx/bin/ucx_info" -v
	echo "== ldd of UCX's gdr_copy module"
	ldd "$ucx/lib/ucx/libuct_cuda_gdrcopy.so"
	echo "== ucx_info -d, gdr_copy"
	"$ucx/bin/ucx_info" -d | grep -B2 -A12 'Transport: gdr_copy'
} >"$out/ucx-info.txt" 2>&1
# gdr_open's rule (docs/copy-only.md): UCX gets gdr_copy by default only
# where a backend maps every kind of memory; where only the vulkan backend
# does, gdr_open steps aside, as GDRCopy's library, and UCX leaves
# gdr_copy out.  Doctor says which holds here.
"$prefix/bin/gdrmap" doctor >"$out/doctor-default.txt" 2>&1
default_tls=$("$ucx/bin/ucx_info" -d 2>/dev/null | grep -c 'Transport: gdr_copy')
if grep -q 'gdr_open (the GDRCopy API: UCX, MPI, NCCL) steps aside' "$out/doctor-default.txt"; then
	if [ "$default_tls" = 0 ]; then
		note ucx pass "by default UCX leaves gdr_copy out here, as with GDRCopy's library (gdr_open steps aside: only the vulkan backend, which cannot map cudaMalloc memory)"
	else
		note ucx fail "gdr_open steps aside here (doctor-default.txt), yet UCX lists gdr_copy"
	fi
elif [ "$default_tls" = 0 ]; then
	note ucx fail "UCX does not list gdr_copy over gdrmap's library, and doctor gives no reason: doctor-default.txt, ucx-info.txt"
	finish
fi
gcc -O2 -shared -fPIC -Iinclude -o "$build/vmm_cudamalloc.so" \
	bench/consumers/vmm_cudamalloc.c -L"$prefix/lib" -lgdrapi -ldl \
	2>"$out/ucx-preload-build.log" ||
	{ note ucx fail "vmm_cudamalloc.so did not build"; finish; }

port=13337
# pair TLS ALLOC ARGS...: one ucx_perftest server and client on GPU 0;
# the client's final CSV line in $line, its exit status in $rc.
# PAIR_PRELOAD: a library both processes preload as well.
pair() {
	local tls=$1 alloc=$2 pre=${PAIR_PRELOAD:-}
	shift 2
	[ "$alloc" = vmm ] && pre="$pre${pre:+ }$build/vmm_cudamalloc.so"
	port=$((port + 1))
	UCX_TLS=$tls LD_PRELOAD=$pre timeout 120 "$ucx/bin/ucx_perftest" \
		-p $port "$@" >"$out/ucx-last-server.txt" 2>&1 &
	local server=$!
	sleep 0.3
	line=$(UCX_TLS=$tls LD_PRELOAD=$pre timeout 120 \
		"$ucx/bin/ucx_perftest" localhost -p $port "$@" 2>"$out/ucx-last-client.err" |
		tee "$out/ucx-last-client.txt" | tail -n 1)
	rc=${PIPESTATUS[0]}
	wait $server || rc=1
}

# csv_row PREFIX: PREFIX and the typical and average latency and the
# average bandwidth of the client's last line ($line: iters, typical,
# avg, overall, bw avg, bw overall, ...), as perftest*.csv hold them.
csv_row() {
	echo "$line" | awk -F, -v p="$1" '{ printf "%s,%s,%s,%s\n", p, $2, $3, $6 }'
}

# What a user gets: gdr_copy in UCX_TLS, gdr_open left to its default.
# Where gdr_open steps aside UCX must run as without gdr_copy: every run
# passes, at those figures (perftest-default.csv).
if want ucx; then
	dcsv=$out/perftest-default.csv
	echo "test,mem,size,alloc,gdr_copy,run,typical_us,avg_us,bw_MBs" >"$dcsv"
	bad=0 total=0
	for mem in $mems; do
		for alloc in legacy vmm; do
			for size in $sizes; do
				total=$((total + 1))
				pair $with_gdr $alloc -t tag_lat -m $mem -s $size -n $iters -w $((iters / 10)) -f -v
				if [ "$rc" != 0 ] || [ -z "$line" ]; then
					bad=$((bad + 1))
					echo "default $mem $alloc $size: exit $rc" >>"$out/ucx-failures.txt"
					tail -3 "$out/ucx-last-client.err" >>"$out/ucx-failures.txt"
					continue
				fi
				csv_row "tag_lat,${mem/,/-},$size,$alloc,default,1" >>"$dcsv"
			done
		done
	done
	if [ $bad = 0 ]; then
		note ucx pass "gdr_open's default, gdr_copy in UCX_TLS: tag_lat, $total runs passed (perftest-default.csv)"
	else
		note ucx fail "gdr_open's default, gdr_copy in UCX_TLS: $bad of $total tag_lat runs failed (ucx-failures.txt)"
	fi
fi
# The rest measures gdr_copy over gdrmap: gdr_open's choice by default,
# another backend on request (UCX_GDRMAP_BACKEND, e.g. any).
if [ -n "${UCX_GDRMAP_BACKEND:-}" ]; then
	export GDRMAP_BACKEND=$UCX_GDRMAP_BACKEND
else
	unset GDRMAP_BACKEND
fi
"$ucx/bin/ucx_info" -d 2>&1 | grep -B2 -A12 'Transport: gdr_copy' >"$out/ucx-info-gdrmap-backend.txt"
if grep -q 'Transport: gdr_copy' "$out/ucx-info-gdrmap-backend.txt" &&
	grep -q "libgdrapi.so.2 => $prefix/lib/libgdrapi.so.2" "$out/ucx-info.txt"; then
	note ucx pass "UCX $("$ucx/bin/ucx_info" -v | sed -n 's/^# Library version: //p') lists gdr_copy with GDRMAP_BACKEND=${GDRMAP_BACKEND:-unset}, loading $prefix/lib/libgdrapi.so.2"
else
	note ucx fail "UCX does not list gdr_copy over gdrmap's library with GDRMAP_BACKEND=${GDRMAP_BACKEND:-unset}: ucx-info.txt"
	finish
fi
if want ucx; then
	csv=$out/perftest.csv
	echo "test,mem,size,alloc,gdr_copy,run,typical_us,avg_us,bw_MBs" >"$csv"
	bad=0
	# Every pairing, checked by UCX (-V: pingpong tests validate data).
	[ "${UCX_VALIDATE:-1}" = 1 ] || mems_checked=
	for mem in ${mems_checked-$mems}; do
		for alloc in legacy vmm; do
			for tls in $with_gdr $without_gdr; do
				for size in 8 4096 65536; do
					pair $tls $alloc -t tag_lat -m $mem -s $size -n 200 -w 10 -V -f -v
					if [ "$rc" != 0 ]; then
						bad=$((bad + 1))
						echo "validate $mem $alloc $tls $size: exit $rc" >>"$out/ucx-failures.txt"
						cat "$out/ucx-last-client.err" >>"$out/ucx-failures.txt"
					fi
				done
			done
		done
	done
	if [ "${UCX_VALIDATE:-1}" != 1 ]; then
		: # UCX_VALIDATE=0: not this time
	elif [ $bad = 0 ]; then
		note ucx pass "tag_lat -V (data checked by UCX): 3 memory pairings x 2 allocators x with/without gdr_copy x 8 B, 4 KiB, 64 KiB"
	else
		note ucx fail "tag_lat -V: $bad runs failed (ucx-failures.txt)"
	fi
	bad=0 total=0
	for run in $(seq 1 "$runs"); do
		for t in $tests; do
			n=$iters
			for mem in $mems; do
				for alloc in legacy vmm; do
					for size in $sizes; do
						for gdr in 1 0; do
							tls=$with_gdr
							[ $gdr = 0 ] && tls=$without_gdr
							total=$((total + 1))
							pair $tls $alloc -t $t -m $mem -s $size -n $n -w $((n / 10)) -f -v
							if [ "$rc" != 0 ] || [ -z "$line" ]; then
								echo "$t $mem $alloc $size gdr=$gdr run $run: exit $rc" >>"$out/ucx-failures.txt"
								tail -3 "$out/ucx-last-client.err" >>"$out/ucx-failures.txt"
								echo "$t,${mem/,/-},$size,$alloc,$gdr,$run,,," >>"$csv"
								bad=$((bad + 1))
								continue
							fi
							csv_row "$t,${mem/,/-},$size,$alloc,$gdr,$run" >>"$csv"
						done
					done
				done
			done
		done
	done
	python3 bench/consumers/summarize_ucx.py "$csv" >"$out/perftest.md" 2>&1
	rc=$?
	status_text="ucx_perftest: $total runs, $bad failed or unsupported; $(grep -c 'slower' "$out/perftest.md") pairings slower with gdr_copy"
	if [ $rc = 0 ]; then
		note ucx pass "$status_text"
	else
		note ucx fail "$status_text (perftest.md)"
	fi
fi

if want calls; then
	# Which libgdrapi calls UCX makes per message on cudaMalloc memory
	# (copy-only without a module) and on cuMemCreate memory (mapped),
	# and the protocol UCX chose (UCX_PROTO_INFO): a copy per message or
	# per fragment, pins cached or made anew.
	if gcc -O2 -shared -fPIC -Iinclude -o "$build/gdr_call_count.so" \
		bench/probes/gdr_call_count.c -ldl 2>"$out/calls-build.log"; then
		n=1000 w=100 cbad=0
		{
			echo "# libgdrapi calls per message (both processes; $((n + w)) messages each way), UCX $("$ucx/bin/ucx_info" -v | sed -n 's/^# Library version: //p')"
			echo "| test | memory (send,recv) | size | GPU memory | copies/message | copy sizes (2^k:count) | mean copy | pins | p50 |"
			echo "|---|---|---:|---|---:|---|---:|---:|---:|"
		} >"$out/calls.md"
		for mem in ${CALLS_MEMS:-host,cuda cuda,host}; do
			for alloc in legacy vmm; do
				for size in ${CALLS_SIZES:-8 4096 65536}; do
					d=$out/calls/tag_lat-${mem/,/-}-$size-$alloc
					rm -rf "$d" && mkdir -p "$d"
					GDR_CALL_COUNT_DIR=$d UCX_PROTO_INFO=y PAIR_PRELOAD=$build/gdr_call_count.so \
						pair $with_gdr $alloc -t tag_lat -m $mem -s $size -n $n -w $w -f -v
					cp "$out/ucx-last-server.txt" "$d/server.txt"
					cp "$out/ucx-last-client.txt" "$d/client.txt"
					cp "$out/ucx-last-client.err" "$d/client.err"
					[ "$alloc" = legacy ] && gm=cudaMalloc || gm=cuMemCreate
					cat "$d"/gdr-calls.* 2>/dev/null | awk -v t="tag_lat" -v m="${mem/,/-}" \
						-v s="$size" -v a="$gm" -v msgs=$((2 * (n + w))) \
						-v p50="$(echo "$line" | awk -F, '{ print $2 }')" '
						$1 ~ /^gdr_copy_/ { c += $3; ns += $3 * $5
							for (i = 7; i <= NF; i++) { split($i, kv, ":"); h[kv[1]] += kv[2] } }
						$1 == "gdr_pin_buffer" { pins += $3 }
						END { hs = ""
							for (k in h) hs = hs (hs ? " " : "") k ":" h[k]
							printf "| %s | %s | %s | %s | %.2f | %s | %s | %d | %s us |\n", t, m, s, a,
								c / msgs, hs, c ? sprintf("%.2f us", ns / c / 1000) : "-", pins, p50 }' \
						>>"$out/calls.md"
					[ "$rc" = 0 ] || { cbad=$((cbad + 1)); note calls fail "tag_lat $mem $size $alloc: exit $rc ($d)"; }
				done
			done
		done
		[ $cbad = 0 ] && note calls pass "libgdrapi calls per message: $out/calls.md"
	else
		note calls fail "gdr_call_count.so did not build: calls-build.log"
	fi
fi

if want mpi; then
	if [ -z "${MPI_DEBS:-}" ] || ! ls "$MPI_DEBS"/openmpi-bin_*.deb >/dev/null 2>&1; then
		note mpi skip "MPI_DEBS names no directory of Open MPI .debs"
		finish
	fi
	ompi=$build/ompi
	rm -rf "$ompi" && mkdir -p "$ompi"
	# Debian's UCX stays out: Open MPI must load the one built above.
	for f in "$MPI_DEBS"/*.deb; do
		case $f in */libucx0_*) continue ;; esac
		dpkg -x "$f" "$ompi"
	done
	olib=$ompi/usr/lib/x86_64-linux-gnu
	gcc -std=c11 -D_GNU_SOURCE -O2 -Icommon -I"$olib/openmpi/include" \
		-o "$build/mpi_pingpong" bench/consumers/mpi_pingpong.c \
		common/cuda_load.c \
		-L"$olib/openmpi/lib" -L"$olib" -lmpi -ldl -Wl,-rpath-link,"$olib" \
		2>"$out/mpi-build.log" ||
		{ note mpi fail "mpi_pingpong did not build: mpi-build.log"; finish; }
	export OPAL_PREFIX=$ompi/usr PMIX_INSTALL_PREFIX=$olib/pmix2
	# Debian's PMIx compression plugin does not load from another
	# prefix; nothing here needs it.
	export PMIX_MCA_pcompress_base_silence_warning=1
	export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$olib/openmpi/lib:$olib"
	mkdir -p "$out/mpi"
	for run in $(seq 1 "${MPI_RUNS:-$runs}"); do
		for b in D,D D,H H,D; do
			for alloc in legacy vmm; do
				# default: gdr_copy in UCX_TLS and gdr_open left to
				# its default (what a user gets; once, not timed).
				modes="1 0"
				[ "$run" = 1 ] && modes="default 1 0"
				for gdr in $modes; do
					tls=$with_gdr
					[ $gdr = 0 ] && tls=$without_gdr
					f=$out/mpi/pingpong-${b/,/}-$alloc-gdr$gdr-run$run.txt
					benv=${GDRMAP_BACKEND:+-x GDRMAP_BACKEND} unset=''
					[ $gdr = default ] && benv='' unset=GDRMAP_BACKEND
					env ${unset:+-u $unset} timeout 300 "$ompi/usr/bin/orterun" --allow-run-as-root \
						-np 2 --mca pml ucx --mca pml_ucx_tls any \
						--mca pml_ucx_devices any --mca btl ^openib \
						-x UCX_TLS=$tls -x LD_LIBRARY_PATH $benv \
						"$build/mpi_pingpong" -b $b -a $alloc >"$f" 2>&1
					rc=$?
					if [ $rc = 0 ] && grep -q '^# data checked both ways: right' "$f"; then
						[ "$run" = 1 ] && note mpi pass "$b $alloc gdr_copy=$gdr: 8 B $(awk '$1 == 8 { print $2 " us" }' "$f") p50"
					else
						note mpi fail "$b $alloc gdr_copy=$gdr run $run: exit $rc ($(basename "$f"))"
					fi
				done
			done
		done
	done
	python3 bench/consumers/summarize_ucx.py --mpi "$out/mpi" >"$out/mpi/pingpong.md" 2>&1 ||
		note mpi fail "summary: mpi/pingpong.md"
fi
finish
