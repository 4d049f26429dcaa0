#!/bin/sh
# Build gdrdrv (opensource and proprietary flavours; the latter's imports
# checked for GPL-only exports) and nvsim (also as the proprietary stand-in
# of nvidia.ko) with warnings as errors against every kernel of the matrix
# (kernels.conf), each where it builds: the host, or a chroot of its suite
# with the compiler its headers name (`make test-modules` there).
#
# usage: check-kernels.sh [-a ARCH] [-p] [-s SUMMARY_FILE] [-r RESULTS_FILE] [NAME...]
#   NAME  kernels to build (default: every kernel of ARCH, the host's)
#   -p    only make the chroots and fetch the kernels, with the images of
#         those the VM boots (`make check-all` runs this at its start, in the
#         background, so that the downloads overlap the other suites)
#   -s    append "passed failed skipped" to SUMMARY_FILE (make check-all)
#   -r    append one "build ..." and one "apis ..." line per kernel to
#         RESULTS_FILE (tests/kernels/report.sh turns them into tables)
# Environment: O (build directory), GDRMAP_VM_CACHE, MAKE.
# Each kernel's log: $O/kernel/check-NAME.log.  Exit 0 when all built.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kl_prog=check-kernels
. "$top/tests/kernels/matrix.sh"
usage() { kl_die "usage: $0 [-a ARCH] [-p] [-s SUMMARY_FILE] [-r RESULTS_FILE] [NAME...]"; }

arch=$kl_host_arch summary= results= prefetch=0
while getopts "a:ps:r:" opt; do
	case $opt in
	a) arch=$OPTARG ;;
	p) prefetch=1 ;;
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

# Chroots and package lists first, every context at once (downloads and
# mmdebstrap overlap); then each kernel's packages, contexts in parallel.
ctxs=$(for n in $names; do kl_kernel "$n" "$arch" && echo "$k_ctx"; done | sort -u)
t0=$(date +%s)
# (A context that fails here fails its kernels' fetch below, with the why.)
# shellcheck disable=SC2086
"$kernel_sh" prepare $ctxs 2>"$logdir/prepare.log" || true
if [ $prefetch = 1 ]; then
	for n in $(kl_names "$arch" yes) newest; do
		"$kernel_sh" -a "$arch" fetch -b "$n" >/dev/null &
	done
	for n in $(kl_names "$arch" no newest); do
		"$kernel_sh" -a "$arch" fetch "$n" >/dev/null &
	done
	wait
	echo "kernels of $arch fetched in $(($(date +%s) - t0))s"
	exit 0
fi
echo "== the kernel matrix ($arch): gdrdrv and nvsim built with -Werror"
for n in $names; do
	{ "$kernel_sh" -a "$arch" fetch "$n" && echo FETCHED=0 || echo "FETCHED=$?"; } \
		>"$logdir/fetch-$n.vars" 2>"$logdir/fetch-$n.log" &
done
wait
echo "   (suites and packages ready in $(($(date +%s) - t0))s)"
kl_prune

pass=0 fail=0 skip=0
for n in $names; do
	log=$logdir/check-$n.log
	if grep -q '^FETCHED=77$' "$logdir/fetch-$n.vars"; then
		echo "SKIP $n: $(tail -n 1 "$logdir/fetch-$n.log")"
		skip=$((skip + 1))
		continue
	fi
	if ! grep -q '^FETCHED=0$' "$logdir/fetch-$n.vars"; then
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
	# A newer pahole than the kernel's own is the toolchain's news, not ours.
	grep -Ei 'warning:|WARNING: modpost' "$log" |
		grep -vq 'pahole version differs' && ok=0
	# The import check must see GPL-only imports in this kernel's
	# Module.symvers: the opensource flavour has some (put_pid()...).
	ko=$($MAKE --no-print-directory -s print-gdrdrv-ko KDIR="$KDIR")
	# Flagged means its verdict, not any failure (no nm, no Module.symvers).
	if [ $ok = 1 ] && ! "$kernel_sh" -a "$arch" run "$n" kernel/check-imports.sh \
		"$ko" "$KDIR/Module.symvers" 2>&1 | tee -a "$log" |
		grep 'imports GPL-only kernel exports' >/dev/null; then
		echo "check-imports.sh did not flag the opensource $ko's GPL-only imports" >>"$log"
		ok=0
	fi
	where=${KCHROOT:+${KCHROOT##*/} chroot}
	what="$KVER ($KDEBVER, $KCC${where:+, $where}, $(($(date +%s) - t))s)"
	if [ $ok = 1 ]; then
		echo "PASS $n: gdrdrv (opensource, proprietary) and nvsim for $what"
		pass=$((pass + 1))
		verdict=PASS
	else
		echo "FAIL $n: $what (log: $log)"
		grep -Ei 'warning:|error|GPL-only|^    |check-imports' "$log" | head -n 20 | sed 's/^/    /'
		fail=$((fail + 1))
		verdict=FAIL
	fi
	if [ -n "$results" ]; then
		echo "build $n $arch $KPAGE $KVER $KCC $verdict" >>"$results"
		# The APIs its compile tests found (kernel/gdrdrv/README.md).
		echo "apis $n $arch $KVER $(sed -n 's/^#define \([A-Z0-9_]*\) 1$/\1/p' \
			"${ko%/*}/conftest.h" 2>/dev/null | tr '\n' ' ')" >>"$results"
	fi
done
[ -z "$summary" ] || echo "$pass $fail $skip" >>"$summary"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
