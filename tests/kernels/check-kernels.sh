#!/bin/sh
# Build gdrdrv (opensource and proprietary flavours; the latter's imports
# checked for GPL-only exports) and nvsim (also as the proprietary stand-in
# of nvidia.ko) with warnings as errors against every kernel of the matrix
# (kernels.conf), each where it builds: the host, or a chroot of its suite
# with the compiler its headers name (`make test-modules` there).
#
# usage: check-kernels.sh [-a ARCH] [-s SUMMARY_FILE] [-r RESULTS_FILE] [NAME...]
#   NAME  kernels to build (default: every kernel of ARCH, the host's)
#   -s    append "passed failed skipped" to SUMMARY_FILE (make check)
#   -r    append one "build ..." and one "apis ..." line per kernel to
#         RESULTS_FILE (tests/kernels/report.sh turns them into tables)
# Environment: O (build directory), GDRMAP_VM_CACHE, MAKE.
# Each kernel's log: $O/kernel/check-NAME.log.  Exit 0 when all built.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kl_prog=check-kernels
. "$top/tests/kernels/lib.sh"
usage() { kl_die "usage: $0 [-a ARCH] [-s SUMMARY_FILE] [-r RESULTS_FILE] [NAME...]"; }

arch=$kl_host_arch summary= results=
while getopts "a:s:r:" opt; do
	case $opt in
	a) arch=$OPTARG ;;
	s) summary=$OPTARG ;;
	r) results=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
cd "$top"
O=${O:-build}
MAKE=${MAKE:-make}
export O
names=${*:-$(kl_names "$arch")}
[ -n "$names" ] || kl_die "no kernels for $arch in $kl_conf"
kernel_sh=$top/tests/kernels/kernel.sh
logdir=$(kl_abs_o)/kernel
mkdir -p "$logdir"

echo "== the kernel matrix ($arch): gdrdrv and nvsim built with -Werror"
# Chroots and package lists first, every context at once (downloads and
# mmdebstrap overlap); then each kernel's packages, contexts in parallel.
ctxs=$(for n in $names; do kl_kernel "$n" "$arch" && echo "$k_ctx"; done | sort -u)
t0=$(date +%s)
# shellcheck disable=SC2086
"$kernel_sh" prepare $ctxs || kl_die "preparing the kernels' suites failed"
for n in $names; do
	"$kernel_sh" -a "$arch" fetch "$n" >"$logdir/fetch-$n.vars" 2>"$logdir/fetch-$n.log" &
done
wait
echo "   (suites and packages ready in $(($(date +%s) - t0))s)"

pass=0 fail=0
for n in $names; do
	log=$logdir/check-$n.log
	if ! grep -q '^KVER=' "$logdir/fetch-$n.vars"; then
		echo "FAIL $n: its packages could not be fetched:"
		sed 's/^/    /' "$logdir/fetch-$n.log" | tail -n 20
		fail=$((fail + 1))
		[ -z "$results" ] || echo "build $n $arch - - - FAIL" >>"$results"
		continue
	fi
	. "$logdir/fetch-$n.vars"
	t=$(date +%s)
	ok=1
	"$kernel_sh" -a "$arch" run "$n" $MAKE --no-print-directory \
		O="$O" CC="$KCC" KDIR="$KDIR" test-modules >"$log" 2>&1 || ok=0
	grep -Eiq 'warning:|WARNING: modpost' "$log" && ok=0
	where=${KCHROOT:+${KCHROOT##*/} chroot}
	what="$KVER ($KDEBVER, $KCC${where:+, $where}, $(($(date +%s) - t))s)"
	if [ $ok = 1 ]; then
		echo "PASS $n: gdrdrv (opensource, proprietary) and nvsim for $what"
		pass=$((pass + 1))
		verdict=PASS
	else
		echo "FAIL $n: $what (log: $log)"
		grep -Ei 'warning:|error|GPL-only|^    ' "$log" | head -n 20 | sed 's/^/    /'
		fail=$((fail + 1))
		verdict=FAIL
	fi
	if [ -n "$results" ]; then
		echo "build $n $arch $KPAGE $KVER $KCC $verdict" >>"$results"
		# The APIs its compile tests found (kernel/gdrdrv/README.md).
		conftest=$($MAKE --no-print-directory -s print-gdrdrv-ko KDIR="$KDIR")
		conftest=${conftest%/*}/conftest.h
		echo "apis $n $arch $KVER $(sed -n 's/^#define \([A-Z0-9_]*\) 1$/\1/p' \
			"$conftest" 2>/dev/null | tr '\n' ' ')" >>"$results"
	fi
done
[ -z "$summary" ] || echo "$pass $fail 0" >>"$summary"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
