#!/bin/bash
# UCX's own gtest for its gdr_copy transport and memory
# domain (filter *gdr_copy*) against gdrmap, under each rule gdr_open has.
#
# Needs $UCX_GTEST_TAR (default .dev/ucx-gtest.tar.gz): UCX built on a
# machine with the CUDA toolkit, `./configure --prefix=/opt/ucx-gt
# --with-cuda=/usr/local/cuda --with-gdrcopy=/opt/gdrmap-gt
# --with-nvcc-gencode=-gencode=arch=compute_90,code=sm_90 --enable-gtest
# --disable-static` (UCX's configure also wants nvml.h and
# libnvidia-ml.so.1), `make install`, `make -C test/gtest gtest`, the
# stripped test binary copied to /opt/ucx-gt/gtest/gtest with its RPATH set
# to /opt/ucx-gt/lib:/opt/ucx-gt/lib/ucx (patchelf), libcudart.so.13 and
# libgomp.so.1 in /opt/ucx-gt/cuda, and `tar czf` of /opt/ucx-gt.  Builds gdrmap from this tree and installs
# it in /opt/gdrmap-gt, the prefix UCX was built against.
#
# Everything lands in $OUT/gtest: env.txt, build.log, probe-RULE.txt
# (ucx_info -d with gdrmap's debug log: which backend gdr_open took),
# list-RULE.txt, RULE.log (the full gtest output), RULE.xml, summary.txt.
#
# Run on a GPU machine from the repository root, carrying the tarball and
# .gl (the Vulkan loader for the vulkan rule):
#   bash bench/consumers/ucx-gtest.sh            (about 2-7 minutes; at most ~GT_DEADLINE+60 s)
# Rules: default (gdr_open's own choice), vulkan (GDRMAP_BACKEND=vulkan),
# pcie-yes (UCX_GDR_COPY_USE_PCIE=yes for every gdr_copy test; UCX's
# test_gdr_copy cases set USE_PCIE themselves, so under every rule
# gdr_copy/test_gdr_copy.gdr_copy_reg_cuda_pcie_pin_fail is the known case:
# on a GPU without C2C UCX expects the FORCE_PCIE pin to fail), rm (skipped
# when the default took rm), dmabuf, ucp (shm_ib/test_ucp_tag_mem_type.*:
# UCP tag messages over shm + gdr_copy + cuda_copy, not part of *gdr_copy*).
# Environment: GT_RULES (default "default vulkan pcie-yes rm dmabuf ucp"),
# GT_DEADLINE (seconds for all the gtest runs, default 420), GT_FILTER
# (default *gdr_copy*), GT_WATCHDOG (UCX gtest's per-test watchdog, default 60).
set -u
t0=$(date +%s)
top=$PWD
O=${OUT:-/tmp/gt-out}/gtest
mkdir -p "$O"
B=/tmp/gtb
GP=/opt/gdrmap-gt
UP=/opt/ucx-gt
GT=$UP/gtest/gtest
filter=${GT_FILTER:-*gdr_copy*}
rules=${GT_RULES:-default vulkan pcie-yes rm dmabuf ucp}
deadline=$((t0 + ${GT_DEADLINE:-420}))
wd=${GT_WATCHDOG:-60}
unset GDRMAP_BACKEND GDRMAP_COPY_ONLY GDRCOPY_USE_DMABUF_MMAP GDRCOPY_ENABLE_LOGGING GDRCOPY_LOG_LEVEL
export NCCL_NVLS_ENABLE=0

# shellcheck source=/dev/null
. scripts/gpu-machine-env.sh

{
	date -u
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
	head -1 /proc/driver/nvidia/version
	uname -r
	echo "commit: $(git rev-parse HEAD 2>/dev/null) $(git status --short 2>/dev/null | grep -vc '^??') files changed"
	echo "== nvidia-smi -q, C2C / fabric"
	nvidia-smi -q 2>/dev/null | grep -iE "c2c|fabric|addressing mode" | head
	echo "== libgdrapi in ldconfig (a stock GDRCopy would show here)"
	ldconfig -p | grep -i gdrapi || echo "none"
	ls -l /dev/gdrdrv 2>&1
} >"$O/env.txt" 2>&1
head -3 "$O/env.txt"

# gdrmap, installed where UCX was configured to find it
if ! { make -j"$(nproc)" O=$B lib tools >"$O/build.log" 2>&1 &&
	make O=$B install PREFIX=$GP >>"$O/build.log" 2>&1; }; then
	tail -20 "$O/build.log"; echo "gdrmap build failed"; exit 1
fi
rm -rf $UP && tar xzf "${UCX_GTEST_TAR:-.dev/ucx-gtest.tar.gz}" -C / || { echo "untar failed"; exit 1; }
[ -x $GT ] || { echo "no $GT"; exit 1; }

# The library path: gdrmap's libgdrapi.so.2 first, UCX, CUDA's runtime (bundled).
# The gtest binary's RPATH names its build tree (/tmp/ucxgt/...), absent here.
export LD_LIBRARY_PATH=$GP/lib:$UP/lib:$UP/lib/ucx:$UP/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GTEST_REPORT_LONGEST_TESTS=10 UCX_HANDLE_ERRORS=bt UCX_LOG_LEVEL=warn UCX_LOG_PRINT_ENABLE=y UCX_WARN_UNUSED_ENV_VARS=n
{
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	echo "== ldd gtest"; ldd $GT
	echo "== ldd libuct_cuda_gdrcopy.so"; ldd $UP/lib/ucx/libuct_cuda_gdrcopy.so.0
	$UP/bin/ucx_info -v
} >>"$O/env.txt" 2>&1
echo "libgdrapi UCX loads: $(ldd $UP/lib/ucx/libuct_cuda_gdrcopy.so.0 | awk '/libgdrapi/ {print $3}')" \
	"-> $(readlink -f "$(ldd $UP/lib/ucx/libuct_cuda_gdrcopy.so.0 | awk '/libgdrapi/ {print $3}')")"

# rule_env RULE: the environment of one rule, as NAME=VALUE words
rule_env() {
	case $1 in
	default|ucp) ;;
	vulkan|rm|dmabuf|any) echo "GDRMAP_BACKEND=$1" ;;
	pcie-yes) echo "UCX_GDR_COPY_USE_PCIE=yes" ;;
	vulkan-pcie-yes) echo "GDRMAP_BACKEND=vulkan UCX_GDR_COPY_USE_PCIE=yes" ;;
	esac
}
rule_filter() {
	case $1 in
	ucp) echo "shm_ib/test_ucp_tag_mem_type.*" ;;	# UCP over shm + gdr_copy (no IB here)
	*) echo "$filter" ;;
	esac
}
rule_cap() {
	case $1 in
	default) echo 150 ;;
	*) echo 90 ;;
	esac
}

: >"$O/summary.txt"
say() { echo "$*" | tee -a "$O/summary.txt"; }
default_backend=
for r in $rules; do
	now=$(date +%s)
	left=$((deadline - now))
	renv=$(rule_env "$r")
	f=$(rule_filter "$r")
	# which backend gdr_open takes under this rule (gdrmap's debug log;
	# a stock libgdrapi would print no "using the ... backend" line)
	env $renv GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1 timeout 30 $UP/bin/ucx_info -d \
		>"$O/probe-$r.txt" 2>&1
	backend=$(grep -o 'using the [a-z]* backend' "$O/probe-$r.txt" | head -1 | awk '{print $3}')
	tl=$(grep -c 'Transport: gdr_copy' "$O/probe-$r.txt")
	[ "$r" = default ] && default_backend=$backend
	if [ "$r" = rm ] && [ "$default_backend" = rm ]; then
		say "== rule rm: the default rule took the rm backend already; not run again"
		continue
	fi
	if [ $left -lt 30 ]; then
		say "== rule $r: skipped, out of time (${left}s left)"
		continue
	fi
	cap=$(rule_cap "$r")
	[ $cap -gt $left ] && cap=$left
	env $renv timeout 30 $GT --gtest_list_tests --gtest_filter="$f" >"$O/list-$r.txt" 2>&1
	nlisted=$(grep -c '^  ' "$O/list-$r.txt")
	say "== rule $r: env [${renv:-none}] filter $f; gdr_open backend: ${backend:-none (gdr_open failed? see probe-$r.txt)}; ucx_info lists gdr_copy: $tl; tests listed: $nlisted; time cap ${cap}s"
	s=$(date +%s)
	env $renv timeout -k 5 $cap stdbuf -o0 -e0 $GT -t $wd --gtest_filter="$f" \
		--gtest_output=xml:"$O/$r.xml" >"$O/$r.log" 2>&1
	rc=$?
	e=$(date +%s)
	# per test: pass, skip (UCX's "[     SKIP ]" then "[       OK ]"), fail, or
	# unfinished (the run was cut short or crashed in it)
	awk '/^\[ RUN      \] / {if (cur != "") print "unfinished", cur; cur = $4; skip = 0; next}
	     cur != "" && /^\[     SKIP \]/ {skip = 1; next}
	     cur != "" && /^\[       OK \] / {print (skip ? "skip" : "pass"), cur; cur = ""; next}
	     cur != "" && /^\[  FAILED  \] / {print "fail", cur; cur = ""; next}
	     END {if (cur != "") print "unfinished", cur}' "$O/$r.log" >"$O/$r.results"
	n() { grep -c "^$1 " "$O/$r.results"; }
	note=""
	{ [ $rc = 124 ] || [ $rc = 137 ]; } && note=" TIMED OUT at ${cap}s"
	[ -z "$note" ] && ! grep -q '^\[==========\] .* ran\.' "$O/$r.log" && note=" (no closing line: crashed? see $r.log)"
	say "   rc $rc, $((e - s))s: $(n pass) passed, $(n fail) failed, $(n skip) skipped, $(n unfinished) unfinished$note"
	grep -E '^(fail|unfinished) ' "$O/$r.results" | sed 's/^/   /' | head -40 | tee -a "$O/summary.txt"
	grep 'pcie_pin' "$O/$r.results" | sed 's/^/   pcie case: /' | tee -a "$O/summary.txt"
	# distinct skip reasons, counted
	grep -o '^\[     SKIP \].*' "$O/$r.log" | sort | uniq -c | sort -rn | head -8 | sed 's/^/   /' | tee -a "$O/summary.txt"
done
say "gtest.sh done in $(($(date +%s) - t0))s"
exit 0
