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
#   -s  append "passed failed skipped" to SUMMARY_FILE (for make check)
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

# The QEMU of each architecture: the command, its machine and console.
case $arch in
amd64)
	qemu=qemu-system-x86_64 qemu_pkg=qemu-system-x86
	qemu_machine="-machine q35,accel=${GDRMAP_VM_ACCEL:-tcg} -cpu max"
	# tsc=unstable: under multi-threaded TCG the switch to the refined
	# TSC clocksource, 4.3 s into boot, rewrites live code through int3
	# and a timer interrupt on the other vCPU can hit the breakpoint:
	# 6.12 and 7.3.4 died of it ("Oops: int3" in
	# ktime_get_update_offsets_now from tsc_refine_calibration_work).
	# The guest stays on HPET, as 6.1 does of itself under TCG (it finds
	# the vCPUs' TSCs unsynchronized); gdrdrv does not read the clock.
	console=ttyS0 karch="tsc=unstable" ;;
arm64)
	# The virt machine: a PCIe host bridge (the ivshmem devices sit on
	# it; Linux assigns their BARs, no firmware is needed) and a GICv3,
	# as on Grace.  TCG's default pointer authentication (QARMA) costs
	# much emulation time (a boot measured 22 s with it, 13 s without);
	# the implementation-defined one behaves the same for the guest.
	qemu=qemu-system-aarch64 qemu_pkg=qemu-system-arm
	qemu_machine="-machine virt,gic-version=3,accel=${GDRMAP_VM_ACCEL:-tcg} -cpu max,pauth-impdef=on"
	console=ttyAMA0 karch= ;;
*) die "no VM for $arch kernels (amd64 and arm64 are known)" ;;
esac
command -v $qemu >/dev/null || die "$qemu not found: apt-get install $qemu_pkg"

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

# One ivshmem-plain device per simulated GPU, each with its own memory;
# nvsim numbers them in PCI order, as CUDA's ordinals.
gpuargs='' i=0
while [ $i -lt "$gpus" ]; do
	gpuargs="$gpuargs -object memory-backend-ram,id=gpumem$i,size=${GDRMAP_VM_GPUMEM:-256M},share=on"
	gpuargs="$gpuargs -device ivshmem-plain,memdev=gpumem$i"
	i=$((i + 1))
done

start=$(date +%s)
# -no-reboot turns the guest's panic (panic=-1) or reboot into an exit;
# timeout bounds a hung guest; the serial console is the only output.
# The stock kernel's own checkers, switched on: SLUB red zones and
# poisoning, page poisoning, KFENCE (6.12); init adds the hung task check.
kdebug="slub_debug=FZPU page_poison=1 kfence.sample_interval=10"
boot() {
	set +e
	# shellcheck disable=SC2086
	timeout -k 10 "$vm_timeout" $qemu $qemu_machine \
		-smp "${GDRMAP_VM_SMP:-2}" -m "${GDRMAP_VM_MEM:-1G}" \
		-nographic -no-reboot -nodefaults -serial stdio -monitor none \
		-kernel "$VMLINUZ" -initrd "$work/initramfs.cpio.gz" \
		-append "console=$console panic=-1 quiet log_buf_len=4M printk.devkmsg=on $kdebug $karch" \
		$gpuargs \
		</dev/null >"$log" 2>&1
	qrc=$?
	set -e
}
boot
# A guest kernel that dies before init's first line ran no gdrmap code
# (init loads every module), so it is the emulator's fault, not the
# tree's: under TCG stock 6.12 and 7.3 kernels took an int3 Oops while
# patching their own code 4 s into boot (twice in the 2026-11-23 runs,
# before tsc=unstable above removed the patching that was seen to die).
# Boot once more, say so, and keep the first log.  A death after init
# started always counts.  The line is init's first (tests/vm/init).
if ! grep -aq '== gdrmap VM: Linux ' "$log"; then
	cp "$log" "$log.boot1"
	echo "run-vm: the guest kernel died before init started (qemu exit $qrc; no gdrmap code had run; log kept as $log.boot1); booting once more"
	boot
fi
secs=$(( $(date +%s) - start ))

"$vmdir/judge.sh" "$log" "$summary" "$qrc" "$KVER" "$secs" \
	${results:+"vm $KNAME $KARCH $KPAGE $KVER" "$results"}
