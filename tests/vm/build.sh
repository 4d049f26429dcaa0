#!/bin/sh
# Build what the VM runs, for one kernel: `make test-modules` (nvsim.ko and
# gdrdrv.ko against KDIR, gdrdrv resolving nvidia_p2p_* against nvsim's
# symbol CRCs; the proprietary stand-in of nvidia.ko, nvsim built for it +
# nvsim_prop.ko, and gdrdrv's proprietary flavour against it); the libcuda
# shim, libgdrapi and the test cases; collect them in WORK/out (the
# stand-in's three modules in WORK/out/proprietary).
#
# usage: build.sh WORK    with tests/kernels/kernel.sh fetch's KNAME, KARCH,
#                         KDIR and KCC in the environment (O and MAKE too,
#                         and run-vm.sh's GUEST_O and GUEST_CC: where and
#                         with what the guest's programs are built)
# The modules build where the kernel's do (kernel.sh run: a chroot of its
# suite, or the host); everything else on the host.
set -eu

die() { echo "vm build: $*" >&2; exit 1; }

[ $# = 1 ] || die "usage: $0 WORK"
work=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
export O	# kernel.sh mounts it in chroots
MAKE=${MAKE:-make}
: "${KNAME:?} ${KARCH:?} ${KDIR:?} ${KCC:?} ${GUEST_O:=$O} ${GUEST_CC:=${CC:-cc}}"
krel=$(cat "$KDIR/include/config/kernel.release") ||
	die "$KDIR is not a configured kernel tree"

# make in the tree, where this kernel's modules build.
kmake() {
	"$top/tests/kernels/kernel.sh" -a "$KARCH" run "$KNAME" \
		$MAKE --no-print-directory O="$O" CC="$KCC" KDIR="$KDIR" "$@"
}
ko_of() {	# gdrdrv.ko's path for make variables $@
	$MAKE --no-print-directory -s print-gdrdrv-ko O="$O" KDIR="$KDIR" "$@"
}

sim=$O/sim/$krel
# (Made already when check-kbuild ran: then only checked.)
kmake test-modules || die "make test-modules KDIR=$KDIR failed"
# The guest's programs, of its architecture.
umake() {
	$MAKE --no-print-directory O="$GUEST_O" CC="$GUEST_CC" "$@"
}
umake vm-cases || die "make vm-cases O=$GUEST_O CC=$GUEST_CC failed"

rm -rf "$work/out"
mkdir -p "$work/out/lib" "$work/out/cases" "$work/out/sim" "$work/out/tools" \
	"$work/out/proprietary"
cp "$sim/nvsim/nvsim.ko" "$(ko_of)" "$work/out/"
# nvsim's test client, for the simulator's own p2p test (optional).
if [ -f "$sim/nvsim/nvsim_selftest.ko" ]; then
	cp "$sim/nvsim/nvsim_selftest.ko" "$work/out/"
fi
cp "$sim/nvsim-standin/nvsim.ko" "$sim/nvsim-standin/nvsim_prop.ko" \
	"$(ko_of GDRDRV_NV_FLAVOR=proprietary)" "$work/out/proprietary/"

manifest=$(umake -s vm-manifest) ||
	die "make vm-manifest failed"
echo "$manifest" | while read -r kind path; do
	cp -P "$path" "$work/out/$kind/" || exit 1
done || die "copying the VM's programs failed"
[ -n "$(ls "$work/out/cases")" ] || die "no test cases under $GUEST_O/tests/vm/cases"
