#!/bin/bash
# libfabric 2.6.0's CUDA hmem support (src/hmem_cuda_gdrcopy.c: dlopens
# libgdrapi.so, gdr_open in fi_ini, gdr_pin_buffer + gdr_map per
# registration, gdr_copy_{to,from}_mapping for small copies) against gdrmap.
#
# Needs $LF_TARBALL (default .dev/libfabric.tar.gz): libfabric v2.6.0 and
# its fabtests installed in /opt/lf and packed from / (tar czf ... opt/lf),
# built on a machine with the CUDA toolkit and gdrmap installed in
# /opt/gdrmap-lf (make install PREFIX=/opt/gdrmap-lf):
#   libfabric: ./autogen.sh && ./configure --prefix=/opt/lf
#     --with-cuda=/usr/local/cuda --enable-cuda-dlopen
#     --with-gdrcopy=/opt/gdrmap-lf --enable-gdrcopy-dlopen --enable-only
#     --enable-shm --enable-sm2 --enable-tcp --enable-sockets --enable-rxm
#     --enable-rxd --enable-udp --enable-static && make install
#     (CPPFLAGS=-I... a directory with nvml.h where the toolkit lacks it)
#   fabtests (fabtests/ of the same tree): ./autogen.sh && ./configure
#     --prefix=/opt/lf --with-libfabric=/opt/lf --with-cuda=/usr/local/cuda
#     && make install
#   bin/lf_gdr_probe: gcc -O2 -I/opt/lf/include
#     bench/consumers/lf_gdr_probe.c /opt/lf/lib/libfabric.a
#     -Wl,--wrap=cuda_gdrcopy_to_dev,--wrap=cuda_gdrcopy_from_dev
#     -latomic -lpthread -ldl -lrt -o /opt/lf/bin/lf_gdr_probe
# Builds gdrmap from this tree and installs it in /opt/gdrmap-lf.
#
# Which provider reaches gdrcopy (v2.6.0): only efa (efa_rdm_mr.c), cxi
# (cxip_iomm.c) and rxm over a core provider with FI_HMEM (rxm_domain.c;
# tcp has no FI_HMEM), and shm only when efa hands it MRs flagged
# OFI_HMEM_DATA_DEV_REG_HANDLE.  None of them runs on a machine without an
# EFA/CXI/RDMA NIC, so:
#  - fabtests (-D cuda over shm and sm2, gdrcopy on and off) show that
#    libgdrapi is loaded and gdr_open/gdr_close run in every process
#    (gdrmap's debug log) and that CUDA transfers stay correct (-v) and as
#    fast with gdrmap's library in the process;
#  - lf_gdr_probe (statically linked against the same libfabric build)
#    calls libfabric's internal ofi_hmem_dev_register / _dev_reg_copy_* /
#    _dev_unregister as rxm and efa do, and runs shm with MRs registered as
#    efa registers them for its shm peer, so shm's inline/inject protocol
#    copies through gdr_copy_{from,to}_mapping; it counts those copies
#    (--wrap of cuda_gdrcopy_{to,from}_dev) and checks every byte.
#
# Everything lands in $OUT/lf (and $OUT/lf.tar.gz): env.txt, build.log,
# init-*.txt (fi_info with FI_LOG_LEVEL=info and gdrmap's debug log),
# probe-*.txt, ft-NAME-{srv,cli}.txt per fabtest run, summary.txt.
#
# Run on a GPU machine from the repository root, with the tarball:
#   bash bench/consumers/libfabric.sh   (about 2-5 minutes)
# Environment: LF_DEADLINE (seconds for the whole script, default 330),
# LF_CAP (seconds per fabtest run, default 40), LF_PROBE_ITERS (default 20),
# LF_DEV (fabtests' device option, default "-D cuda"; empty: host memory,
# with LF_PROBE_HOST=1 the probe's self-test: a check of this script on a
# machine without a GPU).
set -u
t0=$(date +%s)
OUTD=${OUT:-/tmp/lf-out}
O=$OUTD/lf
rm -rf "$O"
mkdir -p "$O"
B=/tmp/lfb
GP=/opt/gdrmap-lf
LP=/opt/lf
deadline=$((t0 + ${LF_DEADLINE:-330}))
cap=${LF_CAP:-40}
iters=${LF_PROBE_ITERS:-20}
dev=${LF_DEV--D cuda}	# LF_DEV= : host memory (a test of this script without a GPU)
unset GDRMAP_BACKEND GDRMAP_COPY_ONLY GDRCOPY_USE_DMABUF_MMAP GDRCOPY_ENABLE_LOGGING GDRCOPY_LOG_LEVEL
unset FI_HMEM_CUDA_USE_GDRCOPY FI_PROVIDER FI_HMEM FI_LOG_LEVEL FI_SHM_MAX_GDRCOPY_SIZE
export NCCL_NVLS_ENABLE=0

: >"$O/summary.txt"
say() { echo "$*" | tee -a "$O/summary.txt"; }
left() { echo $((deadline - $(date +%s))); }
tl() {	# SECONDS: a timeout of at most SECONDS that ends by the deadline (5 s at least)
	local l
	l=$(left)
	[ "$l" -lt 5 ] && l=5
	[ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
finish() {
	say "lf.sh done in $(($(date +%s) - t0))s"
	timeout 30 tar czf "$OUTD/lf.tar.gz" -C "$OUTD" lf 2>/dev/null
	echo "== summary ($O/summary.txt, all files in $OUTD/lf.tar.gz)"
	cat "$O/summary.txt"
	exit "${1:-0}"
}

# shellcheck source=/dev/null
[ -f scripts/gpu-machine-env.sh ] && . scripts/gpu-machine-env.sh

{
	date -u
	timeout 20 nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
	head -1 /proc/driver/nvidia/version
	uname -r
	echo "commit: $(timeout 20 git rev-parse HEAD 2>/dev/null) $(timeout 20 git status --short 2>/dev/null | grep -vc '^??') files changed"
	echo "== libgdrapi in ldconfig (a stock GDRCopy would show here)"
	timeout 20 ldconfig -p | grep -i gdrapi || echo "none"
	ls -l /dev/gdrdrv 2>&1
	echo "== CUDA libraries libfabric and fabtests dlopen (libcudart.so, libcuda.so.1, libnvidia-ml.so.1)"
	timeout 20 ldconfig -p | grep -E 'libcuda\.so|libcudart|libnvidia-ml' 
	ls -l /usr/local/cuda/lib64/libcudart.so* 2>&1
} >"$O/env.txt" 2>&1
head -3 "$O/env.txt"

# gdrmap, installed where libfabric was configured to find it
if ! { timeout "$(tl 240)" make -j"$(nproc)" O=$B lib tools >"$O/build.log" 2>&1 &&
	timeout "$(tl 60)" make O=$B install PREFIX=$GP >>"$O/build.log" 2>&1; }; then
	tail -20 "$O/build.log"; say "gdrmap build failed"; finish 1
fi
rm -rf $LP && timeout "$(tl 60)" tar xzf "${LF_TARBALL:-.dev/libfabric.tar.gz}" -C / || { say "untar failed"; finish 1; }
[ -x $LP/bin/fi_rdm_pingpong ] && [ -x $LP/bin/lf_gdr_probe ] || { say "no $LP/bin binaries"; finish 1; }

# libfabric and fabtests dlopen "libcudart.so" (no version): where only
# libcudart.so.13 is found, point a private directory at it
cudart_dir=
if ! timeout 20 ldconfig -p | grep -q 'libcudart\.so ' && [ ! -e /usr/local/cuda/lib64/libcudart.so ]; then
	real=$(ls /usr/local/cuda/lib64/libcudart.so.[0-9]* 2>/dev/null | head -1)
	if [ -n "$real" ]; then
		cudart_dir=/tmp/lf-cudart
		mkdir -p $cudart_dir && ln -sf "$real" $cudart_dir/libcudart.so
		echo "libcudart.so: none; using $cudart_dir/libcudart.so -> $real" >>"$O/env.txt"
	fi
fi
# gdrmap's libgdrapi.so first (libfabric dlopens "libgdrapi.so", then
# "libgdrapi.so.2"), libfabric, CUDA's runtime
export LD_LIBRARY_PATH=$GP/lib:$LP/lib:${cudart_dir:+$cudart_dir:}/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	cat $LP/share/BUILD-INFO
	echo "== ldd fi_rdm_pingpong"; timeout 20 ldd $LP/bin/fi_rdm_pingpong
	echo "== ldd libfabric.so.1"; timeout 20 ldd $LP/lib/libfabric.so.1
	echo "== ldd lf_gdr_probe"; timeout 20 ldd $LP/bin/lf_gdr_probe
	echo "== fi_info --version"; timeout "$(tl 20)" $LP/bin/fi_info --version
	echo "== fi_info -l"; timeout "$(tl 20)" $LP/bin/fi_info -l
	echo "== gdrmap doctor"; timeout "$(tl 30)" $GP/bin/gdrmap doctor
} >>"$O/env.txt" 2>&1

GLOG="GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1"

# 1. init: which libgdrapi libfabric loads and what gdr_open did, gdrcopy
# on and off; and which providers offer FI_HMEM here
for g in 1 0; do
	env FI_HMEM_CUDA_USE_GDRCOPY=$g FI_LOG_LEVEL=info $GLOG timeout "$(tl 60)" \
		$LP/bin/fi_info -p shm -c 'FI_MSG|FI_HMEM' >"$O/init-gdr$g.txt" 2>&1
	echo "rc $?" >>"$O/init-gdr$g.txt"
done
loaded=$(grep -o 'Loaded GDRCopy library: [^ ]*' "$O/init-gdr1.txt" | head -1 | sed 's/.*: //')
backend=$(grep -o 'using the [a-z]* backend' "$O/init-gdr1.txt" | head -1 | awk '{print $3}')
say "== init (fi_info -p shm, FI_HMEM_CUDA_USE_GDRCOPY=1): libfabric loaded ${loaded:-NO libgdrapi} -> $(readlink -f "${loaded:-/none}" 2>/dev/null); gdr_open backend: ${backend:-none}"
grep -E 'gdr|GDR|hmem_cuda|FI_HMEM_CUDA' "$O/init-gdr1.txt" | grep -v 'variable ' | head -12 | sed 's/^/   /' | tee -a "$O/summary.txt"
say "   gdrcopy off: $(grep -c -E 'Loaded GDRCopy|libgdrapi|gdr_open|using the [a-z]* backend' "$O/init-gdr0.txt") libgdrapi/gdrmap lines (expected 0: libgdrapi not loaded)"
hm=
for p in shm sm2 'tcp;ofi_rxm' tcp sockets udp; do
	n=$(timeout "$(tl 30)" $LP/bin/fi_info -p "$p" -c 'FI_MSG|FI_HMEM' 2>/dev/null | grep -c '^provider:')
	echo "fi_info -p '$p' -c FI_MSG|FI_HMEM: $n entries" >>"$O/env.txt"
	hm="$hm $p:$n"
done
say "   providers offering FI_HMEM (fi_info entries):$hm"

# 2. lf_gdr_probe: libfabric's gdrcopy code itself
probe() {	# NAME ENV...
	local name=$1; shift
	env "$@" timeout -k 5 "$(tl 90)" $LP/bin/lf_gdr_probe "$iters" >"$O/probe-$name.txt" 2>"$O/probe-$name.err"
	local rc=$?
	local res pins
	res=$(grep '^RESULT' "$O/probe-$name.txt" | tail -1)
	pins=$(grep -c 'pinned \[' "$O/probe-$name.err")
	say "== probe $name [$*]: rc $rc: ${res:-no RESULT line (crashed? see probe-$name.err)}"
	say "   gdrmap log: $pins pins, backend $(grep -o 'using the [a-z]* backend' "$O/probe-$name.err" | head -1 | awk '{print $3}')"
	grep -E '^(devreg|shm|libgdrapi|gdrcopy|FAIL)' "$O/probe-$name.txt" | head -20 | sed 's/^/   /' | tee -a "$O/summary.txt"
}
probe gdr1 FI_HMEM_CUDA_USE_GDRCOPY=1 GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1
probe gdr0 FI_HMEM_CUDA_USE_GDRCOPY=0 GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1
# informational: gdrmap's other backends under libfabric (dmabuf is refused
# by some drivers: then gdr_open fails and libfabric runs without gdrcopy)
[ "$(left)" -gt 200 ] && probe dmabuf FI_HMEM_CUDA_USE_GDRCOPY=1 GDRMAP_BACKEND=dmabuf GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1

# 3. fabtests, server and client on this host (out-of-band address exchange
# on 127.0.0.1), -D cuda: every buffer in GPU memory, gdrcopy on then off
port=9300
listening() {	# PORT: a socket listens on it (/proc/net/tcp{,6}, state 0A)
	local hex
	hex=$(printf '%04X' "$1")
	grep -qiE "^ *[0-9]+: [0-9A-F]+:$hex [0-9A-F]+:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
ft() {	# GDR PROV NAME PROG ARGS...
	local g=$1 prov=$2 name=$3 prog=$4; shift 4
	local tag="$name-gdr$g" l s e crc src lat=
	l=$(left)
	if [ "$l" -lt 15 ]; then
		say "$(printf '%-40s gdrcopy=%s  SKIPPED (out of time)' "$prov $name" "$g")"
		return
	fi
	local c=$cap
	[ $c -gt $((l - 5)) ] && c=$((l - 5))
	port=$((port + 1))
	s=$(date +%s.%N)
	env FI_HMEM_CUDA_USE_GDRCOPY=$g $GLOG timeout -k 3 $c $LP/bin/$prog -p "$prov" $dev -E=$port "$@" \
		>"$O/ft-$tag-srv.txt" 2>&1 &
	local spid=$!
	for _ in $(seq 150); do	# up to 15 s for the server's out-of-band listen
		listening $port && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	env FI_HMEM_CUDA_USE_GDRCOPY=$g $GLOG timeout -k 3 $c $LP/bin/$prog -p "$prov" $dev -E=$port "$@" 127.0.0.1 \
		>"$O/ft-$tag-cli.txt" 2>&1
	crc=$?
	if [ $crc != 0 ]; then	# the server may wait for a peer that is gone
		for _ in $(seq 50); do kill -0 $spid 2>/dev/null || break; sleep 0.1; done
		kill $spid 2>/dev/null
	fi
	wait $spid
	src=$?
	e=$(date +%s.%N)
	case " $* " in
	*" -S 8 "*) lat=$(awk '$1 == "8" && NF >= 7 {print $6}' "$O/ft-$tag-cli.txt" | tail -1) ;;
	esac
	local res=PASS
	[ $crc = 0 ] && [ $src = 0 ] || res=FAIL
	{ [ $crc = 124 ] || [ $src = 124 ] || [ $crc = 137 ] || [ $src = 137 ]; } && res="FAIL(timeout ${c}s)"
	# gdrmap's debug log: gdr_open's backend line in each process
	local opened
	opened=$(cat "$O/ft-$tag-srv.txt" "$O/ft-$tag-cli.txt" | grep -c 'using the [a-z]* backend')
	say "$(printf '%-40s gdrcopy=%s  %-6s rc %s/%s  %5.1fs  gdr_open in %s of 2 processes%s' \
		"$prov $name" "$g" "$res" "$src" "$crc" "$(awk -v a="$s" -v b="$e" 'BEGIN {print b - a}')" "$opened" "${lat:+  8 B latency ${lat} us}")"
	[ "$res" = PASS ] || { tail -3 "$O/ft-$tag-cli.txt"; tail -3 "$O/ft-$tag-srv.txt"; } | sed 's/^/     /' | tee -a "$O/summary.txt"
}
say "== fabtests ${dev:-(host memory)} (server + client on 127.0.0.1); PASS = both exit 0; -v = data verified"
both() { ft 1 "$@"; ft 0 "$@"; }
both shm rdm fi_rdm
both shm rdm_pingpong-lat fi_rdm_pingpong -S 8 -I 10000
both shm rdm_tagged_pingpong-lat fi_rdm_tagged_pingpong -S 8 -I 10000
both shm 'rdm_pingpong-all-v' fi_rdm_pingpong -S all -I 20 -v
both shm 'rdm_tagged_pingpong-all-v' fi_rdm_tagged_pingpong -S all -I 20 -v
both shm 'rdm_tagged_bw-all-v' fi_rdm_tagged_bw -S all -I 10 -v
both shm 'rma_bw-write-v' fi_rma_bw -e rdm -o write -S all -I 10 -v
both shm 'rma_bw-read-v' fi_rma_bw -e rdm -o read -S all -I 10 -v
both shm 'rdm-U' fi_rdm -U
both sm2 'rdm_pingpong-lat' fi_rdm_pingpong -S 8 -I 10000
both sm2 'rdm_pingpong-all-v' fi_rdm_pingpong -S all -I 20 -v
finish 0
