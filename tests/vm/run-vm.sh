#!/bin/sh
# Test the kernel half of gdrmap in a QEMU VM (TCG, no KVM needed) running
# a Debian kernel of the matrix (tests/kernels/kernels.conf): build nvsim.ko
# and gdrdrv.ko for that kernel (in a chroot of its suite where the host
# cannot), pack them with the test cases into an initramfs, boot, and judge
# the serial log.
#
# usage: run-vm.sh [-s SUMMARY_FILE] [-c CACHE_DIR] [-a ARCH] KERNEL
#   KERNEL  a kernel name of kernels.conf (5.10, 6.1, 6.12, ...) or newest
#   -a  its architecture [the host's]
#   -s  append "passed failed skipped" to SUMMARY_FILE (for make check-all)
#   -c  where kernel packages and chroots are kept (default $GDRMAP_VM_CACHE,
#       else $HOME/.cache/gdrmap-vm)
# Environment (defaults in brackets):
#   O                    build directory of the tree [build]
#   GDRMAP_KERNEL_RESULTS  append the run's result line to this file (the
#                        README's kernel table, tests/kernels/report.sh) []
#   GDRMAP_STRESS_SECS   duration of the multi-threaded stress case [5;
#                        the fuzzer races the same paths for a minute]
#   GDRMAP_FUZZ_SECS     duration of the fuzzer (cases/ioctl_fuzz.c), per pass [20;
#                        60 s per kernel over the three passes]
#   GDRMAP_FUZZ_SEED     the fuzzer's seed, to replay a run [random]
#   GDRMAP_FUZZ_FAILURES 0: the fuzzer arms none of NVIDIA's failures [1]
#   GDRMAP_CASE_TIMEOUT  limit on one test inside the VM, seconds [120]
#   GDRMAP_VM_TIMEOUT    hard limit on the whole VM run, seconds [900]
#   GDRMAP_VM_MEM        guest RAM [1G]
#   GDRMAP_VM_GPUS       simulated GPUs, one ivshmem-plain device each [2]
#   GDRMAP_VM_GPUMEM     memory of each simulated GPU (its ivshmem BAR);
#                        host memory, not guest RAM [256M]
#   GDRMAP_VM_SMP        guest CPUs [2]
#   GDRMAP_VM_MODES      gdrdrv use_persistent_mapping values, one pass each [1 0]
#   GDRMAP_VM_PROPRIETARY_MODES  the same for the proprietary flavour against
#                        the proprietary stand-in of nvidia.ko, run last [1]
#   GDRMAP_VM_ACCEL      QEMU accelerator [tcg]; kvm is faster where it exists
#   GDRMAP_VM_GDRDRV_PARAMS  extra gdrdrv insmod parameters []
#   GDRMAP_VM_NVSIM_PARAMS   nvsim insmod parameters [poison=1: freed GPU pages
#                        read 0x6b, so use after free shows]
#   GDRMAP_VM_ONLY       extended regex: run only the tests whose path
#                        matches (the module steps always run) []
#   VERBOSE              non-empty: show every test's output, not only
#                        a failing one's []
#   MAKE                 [make]
# (GDRMAP_VM_MEM, _SMP, _GPUMEM and _ACCEL are read by tests/vm/boot.sh,
# which boots the VM.)
# Exit status: 0 when every check passed and the kernel log is clean.
set -eu

die() { echo "run-vm: $*" >&2; exit 1; }
usage="usage: $0 [-s SUMMARY_FILE] [-c CACHE_DIR] [-a ARCH] KERNEL"

summary='' arch=''
cache=${GDRMAP_VM_CACHE:-${HOME:-/tmp}/.cache/gdrmap-vm}
while getopts "s:c:a:" opt; do
	case $opt in
	s) summary=$OPTARG ;;
	c) cache=$OPTARG ;;
	a) arch=$OPTARG ;;
	*) die "$usage" ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || die "$usage"
kernel=$1

top=$(cd "$(dirname "$0")/../.." && pwd)
vmdir=$top/tests/vm
cd "$top"
O=${O:-build}
MAKE=${MAKE:-make}
export O MAKE
stress=${GDRMAP_STRESS_SECS:-5}
vm_timeout=${GDRMAP_VM_TIMEOUT:-900}
gpus=${GDRMAP_VM_GPUS:-2}
case $gpus in
[1-9] | 1[0-6]) ;;
*) die "GDRMAP_VM_GPUS=$gpus: give 1 to 16 simulated GPUs" ;;
esac
arch=${arch:-$(dpkg --print-architecture)}
results=${GDRMAP_KERNEL_RESULTS:-}

# Before anything is built: this architecture's QEMU is there.
"$vmdir/boot.sh" -a "$arch" -c || exit 1

# The guest's programs: built by the host's compiler into $O for the
# host's architecture; for another, by Debian's cross compiler into
# $O-ARCH (as `make check-arm64` does) and packed with the libraries of
# its cross sysroot and Debian's busybox of that architecture.
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
	GUEST_O=$O GUEST_CC=${CC:-cc} guest_libdirs=
else
	gnu=$(dpkg-architecture -a "$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null) ||
		die "dpkg-architecture does not know $arch (apt-get install dpkg-dev)"
	GUEST_O=$O-$arch GUEST_CC=$gnu-gcc guest_libdirs=/usr/$gnu/lib
	command -v "$GUEST_CC" >/dev/null ||
		die "$GUEST_CC not found: apt-get install gcc-$gnu"
fi
export GUEST_O GUEST_CC

# A failure before the VM's own verdict still counts as one failed test.
fail_early() {
	[ -n "$summary" ] && echo "0 1 0" >>"$summary"
	[ -n "$results" ] &&
		echo "vm $kernel $arch ${KPAGE:--} ${KVER:--} 0 1 0" >>"$results"
	die "$*"
}

# (eval of a failed command substitution would succeed: keep them apart.)
kvars=$("$vmdir/fetch-kernel.sh" -a "$arch" "$kernel" "$cache") || {
	if [ $? = 77 ]; then	# its modules build in a chroot: root only
		[ -n "$summary" ] && echo "0 0 1" >>"$summary"
		echo "SKIP vm-$kernel: its modules build in a chroot, which needs root"
		exit 0
	fi
	fail_early "could not get the $kernel kernel for $arch"
}
eval "$kvars"
export KNAME KARCH KDIR KCC
work=$(mkdir -p "$O/vm/$KVER" && cd "$O/vm/$KVER" && pwd)
log=$work/serial.log

echo "== VM test on Linux $KVER ($KNAME, $KARCH, $KPAGE pages; log: $log)"
"$vmdir/build.sh" "$work" || fail_early "build for $KVER failed"

stage=$work/initramfs
rm -rf "$stage"
mkdir -p "$stage/vm" "$stage/lib/gdrmap" "$stage/usr/lib"
cp "$vmdir/init" "$stage/init"
cp "$top/tests/run-tests.sh" "$top/tests/kernel-log-bad.ere" "$stage/vm/"
cp "$vmdir/fuzz-seeds" "$stage/vm/fuzz-seeds"
cp -R "$vmdir/steps" "$work/out/cases" "$work/out/sim" "$work/out/tools" \
	"$stage/vm/"
cp "$work"/out/*.ko "$stage/lib/gdrmap/"
cp -R "$work/out/proprietary" "$stage/lib/gdrmap/"
cp -R "$work/out/lib" "$stage/usr/lib/gdrmap"
cat >"$stage/vm/vm.conf" <<CONF
GDRMAP_STRESS_SECS=$stress
GDRMAP_FUZZ_SECS=${GDRMAP_FUZZ_SECS:-20}
GDRMAP_FUZZ_SEED=${GDRMAP_FUZZ_SEED:-}
GDRMAP_FUZZ_FAILURES=${GDRMAP_FUZZ_FAILURES:-1}
GDRMAP_FUZZ_REPLAY=/vm/fuzz-seeds
GDRMAP_CASE_TIMEOUT=${GDRMAP_CASE_TIMEOUT:-120}
GDRMAP_VM_MODES="${GDRMAP_VM_MODES:-1 0}"
GDRMAP_VM_PROPRIETARY_MODES="${GDRMAP_VM_PROPRIETARY_MODES-1}"
GDRMAP_VM_NVSIM_PARAMS="${GDRMAP_VM_NVSIM_PARAMS-poison=1}"
GDRMAP_VM_GDRDRV_PARAMS="${GDRMAP_VM_GDRDRV_PARAMS:-}"
GDRMAP_VM_ONLY="${GDRMAP_VM_ONLY:-}"
GDRMAP_VM_GPUS=$gpus
VERBOSE="${VERBOSE:-}"
CONF
busybox=$("$vmdir/busybox.sh" "$arch") || fail_early "no busybox for $arch"
"$vmdir/mkinitramfs.sh" -b "$busybox" ${guest_libdirs:+-L "$guest_libdirs"} \
	"$stage" "$work/initramfs.cpio.gz" || fail_early "initramfs failed"

start=$(date +%s)
# The stock kernel's own checkers on (-d); init adds the hung task check.
# The line init prints first says it started (tests/vm/init).
set +e
"$vmdir/boot.sh" -a "$arch" -g "$gpus" -t "$vm_timeout" -d "$VMLINUZ" \
	"$work/initramfs.cpio.gz" "$log" '== gdrmap VM: Linux '
qrc=$?
set -e
secs=$(( $(date +%s) - start ))

"$vmdir/judge.sh" "$log" "$summary" "$qrc" "$KVER" "$secs" \
	${results:+"vm $KNAME $KARCH $KPAGE $KVER" "$results"}
