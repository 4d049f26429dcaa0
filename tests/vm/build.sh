#!/bin/sh
# Build what the VM runs, for one kernel: nvsim.ko and gdrdrv.ko against
# KDIR (gdrdrv resolving nvidia_p2p_* against nvsim's symbol CRCs), the
# libcuda shim, libgdrapi and the test cases; collect them in WORK/out.
#
# usage: build.sh KDIR WORK          (O and MAKE from the environment)
set -eu

die() { echo "vm build: $*" >&2; exit 1; }

[ $# = 2 ] || die "usage: $0 KDIR WORK"
kdir=$1 work=$2
O=${O:-build}
MAKE=${MAKE:-make}
krel=$(cat "$kdir/include/config/kernel.release") ||
	die "$kdir is not a configured kernel tree"

$MAKE --no-print-directory sim-modules KDIR="$kdir" ||
	die "make sim-modules KDIR=$kdir failed"
symvers=$O/sim/$krel/nvsim/Module.symvers
[ -f "$symvers" ] || die "sim-modules made no $symvers"
$MAKE --no-print-directory modules KDIR="$kdir" \
	KBUILD_EXTRA_SYMBOLS="$(cd "$(dirname "$symvers")" && pwd)/Module.symvers" ||
	die "make modules KDIR=$kdir failed"
$MAKE --no-print-directory vm-cases || die "make vm-cases failed"

rm -rf "$work/out"
mkdir -p "$work/out/lib" "$work/out/cases" "$work/out/sim" "$work/out/tools"
cp "$O/sim/$krel/nvsim/nvsim.ko" "$work/out/"
# nvsim's test client, for the simulator's own p2p test (optional).
if [ -f "$O/sim/$krel/nvsim/nvsim_selftest.ko" ]; then
	cp "$O/sim/$krel/nvsim/nvsim_selftest.ko" "$work/out/"
fi
# kernel.mk names its output directory after the headers package.
gdrdrv=$O/kernel/${kdir##*/linux-headers-}/gdrdrv/gdrdrv.ko
[ -f "$gdrdrv" ] || die "make modules made no $gdrdrv"
cp "$gdrdrv" "$work/out/"

manifest=$($MAKE --no-print-directory -s vm-manifest) ||
	die "make vm-manifest failed"
echo "$manifest" | while read -r kind path; do
	cp -P "$path" "$work/out/$kind/" || exit 1
done || die "copying the VM's programs failed"
[ -n "$(ls "$work/out/cases")" ] || die "no test cases under $O/tests/vm/cases"
