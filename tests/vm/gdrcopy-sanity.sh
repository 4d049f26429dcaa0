#!/bin/sh
# GDRCopy's own sanity suite (tests/sanity.cpp of a GDRCopy source tree,
# which the tree does not carry) in the test VM over nvsim, against each
# pairing of gdrdrv and libgdrapi: GDRCopy's gdrdrv.ko with GDRCopy's
# library (the reference), gdrmap's gdrdrv with GDRCopy's library, gdrmap's
# gdrdrv with gdrmap's library, and GDRCopy's gdrdrv with gdrmap's library;
# each in both gdrdrv modes.  Every case must give the reference's verdict
# (passed, failed or waived) and leave a clean kernel log, but for the
# differences of gdrmap's library that gdrcopy-sanity.expected lists and
# explains (counted as skipped).
#
# usage: gdrcopy-sanity.sh [-c CACHE_DIR] [KERNEL...]     [6.1]
#   KERNEL  kernels of tests/kernels/kernels.conf (x86-64 only)
# Environment:
#   GDRCOPY_SRC   a GDRCopy source tree (2.5 or later); without it: skip
#   NVIDIA_SRC    where NVIDIA's nv-p2p.h is (its directory, or the driver
#                 source or open-gpu-kernel-modules checkout above it) for
#                 GDRCopy's gdrdrv; without it, the tree's
#                 kernel/nvidia/nv-p2p.h with the typedef names GDRCopy uses
#   CUDA          a CUDA toolkit, for cuda.h only [/usr/local/cuda]; the
#                 program is linked with, and runs over, the libcuda shim
#   GDRCOPY_SANITY_MODES    gdrdrv use_persistent_mapping values [1 0]
#   GDRCOPY_SANITY_CONFIGS  DRIVER+LIBRARY pairs, the reference first
#                 [gdrcopy+gdrcopy gdrmap+gdrcopy gdrmap+gdrmap gdrcopy+gdrmap]
#   GDRCOPY_SANITY_CASES    extended regex: only the cases it matches [all,
#                 the extended one included]
#   GDRCOPY_SANITY_GDRCOPY_PARAMS  insmod parameters of GDRCopy's gdrdrv []
#                 (dbg_enabled=1 makes the /proc file that the extended case
#                 reads, which gdrmap's gdrdrv always has; see
#                 gdrcopy-sanity.expected)
#   O, MAKE, GDRMAP_VM_TIMEOUT [1800], GDRMAP_CASE_TIMEOUT [120], VERBOSE,
#   GDRMAP_VM_NVSIM_PARAMS [poison=1]: as for run-vm.sh
# Prints one table per kernel (one row per case, one column per pairing
# and mode) into build/vm/<kver>/gdrcopy-sanity.txt and on stdout; closes
# with "N passed, N failed, N skipped", counting each case of each
# pairing but the reference as passed when its verdict is the reference's.
# Exit status: 0 all the same, 1 a difference or a failure, 77 skipped.
set -eu

die() { echo "gdrcopy-sanity: $*" >&2; exit 1; }
skip() { echo "SKIP gdrcopy-sanity: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }

cache=${GDRMAP_VM_CACHE:-${HOME:-/tmp}/.cache/gdrmap-vm}
while getopts "c:" opt; do
	case $opt in
	c) cache=$OPTARG ;;
	*) die "usage: $0 [-c CACHE_DIR] [KERNEL...]" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 6.1

top=$(cd "$(dirname "$0")/../.." && pwd)
vmdir=$top/tests/vm
cd "$top"
O=${O:-build}
MAKE=${MAKE:-make}
export O MAKE
CUDA=${CUDA:-/usr/local/cuda}
modes=${GDRCOPY_SANITY_MODES:-1 0}
configs=${GDRCOPY_SANITY_CONFIGS:-gdrcopy+gdrcopy gdrmap+gdrcopy gdrmap+gdrmap gdrcopy+gdrmap}

[ -n "${GDRCOPY_SRC:-}" ] || skip "GDRCOPY_SRC names no GDRCopy source tree"
src=$(cd "$GDRCOPY_SRC" && pwd) || die "no $GDRCOPY_SRC"
[ -f "$src/tests/sanity.cpp" ] && [ -f "$src/src/gdrdrv/gdrdrv.c" ] ||
	die "$src is not a GDRCopy source tree (no tests/sanity.cpp)"
[ -f "$src/tests/testsuites/testsuite.cpp" ] ||
	die "$src: GDRCopy before 2.5 (its sanity suite needs libcheck): not supported"
[ -f "$CUDA/include/cuda.h" ] || skip "no $CUDA/include/cuda.h (set CUDA)"
[ "$(dpkg --print-architecture)" = amd64 ] || skip "x86-64 hosts only"
command -v g++ >/dev/null || die "g++ not found: apt-get install g++"
"$vmdir/boot.sh" -c || exit 1

nv_h=
if [ -n "${NVIDIA_SRC:-}" ]; then
	for d in "$NVIDIA_SRC" "$NVIDIA_SRC/nvidia" "$NVIDIA_SRC/kernel-open/nvidia"; do
		[ -f "$d/nv-p2p.h" ] && { nv_h=$d/nv-p2p.h; break; }
	done
	[ -n "$nv_h" ] || die "no nv-p2p.h under NVIDIA_SRC=$NVIDIA_SRC"
fi

gversion=$(awk '/#define GDR_API_(MAJOR|MINOR)_VERSION/ {printf "%s%s", s, $3; s="."}' \
	"$src/include/gdrapi.h")
gcommit=$(git -C "$src" rev-parse HEAD 2>/dev/null) || gcommit="(not a git tree)"
echo "== GDRCopy $gversion from $src, commit $gcommit"

# GDRCopy's library and sanity program, built as its Makefiles build them,
# in a copy of its tree (its Makefiles write next to their sources), the
# program linked with the libcuda shim instead of the toolkit's stubs.
$MAKE --no-print-directory O="$O" sim-shim >/dev/null || die "make sim-shim failed"
shim=$(cd "$O/sim/libcuda" && pwd)
user=$(mkdir -p "$O/gdrcopy-sanity" && cd "$O/gdrcopy-sanity" && pwd)
rm -rf "$user/gdrcopy"
cp -R "$src" "$user/gdrcopy"
(cd "$user/gdrcopy/src" && $MAKE CC="${CC:-cc}" lib) >"$user/build.log" 2>&1 ||
	die "building GDRCopy's libgdrapi failed: $user/build.log"
(cd "$user/gdrcopy/tests" && $MAKE CUDA="$CUDA" \
	LDFLAGS="-L$shim -L$user/gdrcopy/src" gdrcopy_sanity) >>"$user/build.log" 2>&1 ||
	die "building GDRCopy's gdrcopy_sanity failed: $user/build.log"

status=0 tp=0 tf=0 ts=0
for kernel in "$@"; do
	kvars=$("$vmdir/fetch-kernel.sh" "$kernel" "$cache") || {
		[ $? = 77 ] && { ts=$((ts + 1)); echo "SKIP $kernel: needs a chroot (root)"; continue; }
		die "could not get the $kernel kernel"
	}
	eval "$kvars"
	export KNAME KARCH KDIR KCC
	[ "$KARCH" = amd64 ] || die "$kernel: x86-64 kernels only"
	work=$(mkdir -p "$O/vm/$KVER" && cd "$O/vm/$KVER" && pwd)
	echo "== GDRCopy sanity on Linux $KVER"
	GUEST_O=$O GUEST_CC=${CC:-cc} "$vmdir/build.sh" "$work" ||
		die "build for $KVER failed"

	# GDRCopy's gdrdrv.ko (and its build-only nv-p2p-dummy.ko, which
	# gives the nvidia_p2p_* symbol CRCs) where the kernel's modules
	# build: its Makefile's own build target, with what its scripts would
	# find out from /lib/modules given instead, from compile tests
	# against KDIR.
	gk=$work/gdrcopy
	rm -rf "$gk"
	mkdir -p "$gk/nvidia" "$gk/conftest"
	cp -R "$src/src/gdrdrv" "$gk/gdrdrv"
	if [ -n "$nv_h" ]; then
		cp "$nv_h" "$gk/nvidia/nv-p2p.h"
	else
		cp "$top/kernel/nvidia/nv-p2p.h" "$gk/nvidia/gdrmap-nv-p2p.h"
		cat >"$gk/nvidia/nv-p2p.h" <<-'EOF'
		/* The tree's nv-p2p.h with the typedef names of NVIDIA's. */
		#include "gdrmap-nv-p2p.h"
		typedef struct nvidia_p2p_page nvidia_p2p_page_t;
		typedef struct nvidia_p2p_page_table nvidia_p2p_page_table_t;
		typedef struct nvidia_p2p_dma_mapping nvidia_p2p_dma_mapping_t;
		struct nvidia_p2p_params;
		EOF
	fi
	kdo() {
		"$top/tests/kernels/kernel.sh" -a "$KARCH" run "$KNAME" \
			env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "$@"
	}
	have() {	# have NAME STATEMENTS: y if a module using them builds
		mkdir -p "$gk/conftest/$1"
		printf '%s\n' '#include <linux/module.h>' '#include <linux/mm.h>' \
			'#include <linux/proc_fs.h>' \
			"static int __init t_init(void) { $2 return 0; }" \
			'module_init(t_init);' 'MODULE_LICENSE("GPL");' >"$gk/conftest/$1/t.c"
		echo 'obj-m := t.o' >"$gk/conftest/$1/Makefile"
		kdo $MAKE -C "$KDIR" M="$gk/conftest/$1" CC="$KCC" modules \
			>/dev/null 2>&1 && echo y || echo n
	}
	vmf=$(have vm_flags_set 'struct vm_area_struct v = {}; vm_flags_set(&v, 0);')
	pops=$(have proc_ops 'static const struct proc_ops p; (void)p;')
	echo "   GDRCopy's gdrdrv: HAVE_VM_FLAGS_SET=$vmf HAVE_PROC_OPS=$pops" \
		"nv-p2p.h ${nv_h:-of the tree}"
	kdo sh -c 'cd "$1" && shift && exec "$@"' sh "$gk/gdrdrv" \
		$MAKE KVER="$KVER" KDIR="$KDIR" NVIDIA_SRC_DIR="$gk/nvidia" \
		NVIDIA_IS_OPENSOURCE=y HAVE_VM_FLAGS_SET="$vmf" \
		HAVE_PROC_OPS="$pops" MAKE_PARAMS="CC=$KCC" build \
		>"$gk/build.log" 2>&1 ||
		die "building GDRCopy's gdrdrv for $KVER failed: $gk/build.log"
	# Its CRCs of nvidia_p2p_* must be nvsim's, or it would not load.
	for s in $(awk '{print $2}' "$gk/gdrdrv/Module.symvers"); do
		want=$(awk -v s="$s" '$2 == s {print $1}' "$O"/sim/*/nvsim/Module.symvers | head -n 1)
		got=$(awk -v s="$s" '$2 == s {print $1}' "$gk/gdrdrv/Module.symvers")
		[ -z "$want" ] || [ "$want" = "$got" ] ||
			die "$s: GDRCopy's build gives CRC $got, nvsim's is $want"
	done

	stage=$work/gdrcopy-initramfs
	rm -rf "$stage"
	mkdir -p "$stage/vm" "$stage/lib/gdrmap" "$stage/lib/gdrcopy" \
		"$stage/usr/lib/gdrcopy"
	cp "$vmdir/gdrcopy-sanity-init" "$stage/init"
	cp -R "$vmdir/steps" "$stage/vm/"
	cp "$top/tests/kernel-log-bad.ere" "$stage/vm/"
	cp "$user/gdrcopy/tests/gdrcopy_sanity" "$stage/vm/"
	cp "$work/out/nvsim.ko" "$work/out/gdrdrv.ko" "$stage/lib/gdrmap/"
	cp "$gk/gdrdrv/gdrdrv.ko" "$stage/lib/gdrcopy/"
	cp -R "$work/out/lib" "$stage/usr/lib/gdrmap"
	cp -P "$user/gdrcopy/src"/libgdrapi.so.* "$stage/usr/lib/gdrcopy/"
	cat >"$stage/vm/vm.conf" <<-CONF
	GCS_MODES="$modes"
	GCS_CONFIGS="$configs"
	GCS_GDRCOPY_PARAMS="${GDRCOPY_SANITY_GDRCOPY_PARAMS:-}"
	GCS_CASES="${GDRCOPY_SANITY_CASES:-}"
	GCS_CASE_TIMEOUT=${GDRMAP_CASE_TIMEOUT:-120}
	GDRMAP_VM_NVSIM_PARAMS="${GDRMAP_VM_NVSIM_PARAMS-poison=1}"
	GDRMAP_VM_GPUS=1
	VERBOSE="${VERBOSE:-}"
	CONF
	busybox=$("$vmdir/busybox.sh" amd64) || die "no busybox"
	"$vmdir/mkinitramfs.sh" -b "$busybox" "$stage" "$work/gdrcopy-initramfs.cpio.gz" ||
		die "initramfs failed"

	log=$work/gdrcopy-sanity.log
	echo "   booting (log: $log)"
	start=$(date +%s)
	set +e
	"$vmdir/boot.sh" -g 1 -t "${GDRMAP_VM_TIMEOUT:-1800}" -d "$VMLINUZ" \
		"$work/gdrcopy-initramfs.cpio.gz" "$log" '== gdrmap VM: Linux '
	qrc=$?
	set -e
	echo "   VM ran $(($(date +%s) - start)) s (qemu exit $qrc)"

	out=$work/gdrcopy-sanity.txt
	tr -d '\r' <"$log" | awk -v configs="$configs" -v modes="$modes" \
		-v kver="$KVER" -v gv="$gversion" \
		-v expected="$vmdir/gdrcopy-sanity.expected" -f "$vmdir/gdrcopy-sanity.awk" >"$out" ||
		status=1
	cat "$out"
	read -r p f s <<-EOF
	$(tail -n 1 "$out" | sed 's/[^0-9 ]//g')
	EOF
	tp=$((tp + ${p:-0})) tf=$((tf + ${f:-1})) ts=$((ts + ${s:-0}))
	grep -q '^GCS-DONE' "$log" || { echo "FAIL: the VM stopped before the end"; tf=$((tf + 1)); }
	if grep -q '^GCS-SETUP' "$log"; then
		grep '^GCS-SETUP' "$log"
		tf=$((tf + 1))
	fi
	bad=$(grep -v -e '^#' -e '^$' "$top/tests/kernel-log-bad.ere" | tr '\n' '|' | sed 's/|$//')
	if sed -n '/^GDRMAP-VM-DMESG-BEGIN/,/^GDRMAP-VM-DMESG-END/p' "$log" |
		grep -E "$bad"; then
		echo "FAIL: the kernel log of the run is not clean"
		tf=$((tf + 1))
	fi
done
[ $tf = 0 ] || status=1
echo "$tp passed, $tf failed, $ts skipped"
exit $status
