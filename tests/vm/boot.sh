#!/bin/sh
# Boot a VM of gdrmap's (the test suite's, tests/vm/run-vm.sh, or the
# demo's, tools/demo.sh) and wait for it to power off: QEMU for the guest's
# architecture (TCG unless GDRMAP_VM_ACCEL says otherwise, no KVM needed),
# the kernel and initramfs given, each simulated GPU an ivshmem-plain
# device with memory of its own, the serial console the only output.
# A guest kernel that dies before its init printed MARKER ran no gdrmap
# code (init loads every module): that is the emulator's fault, not the
# tree's, so it boots once more, says so and keeps the first log.
#
# usage: boot.sh [-a ARCH] [-g GPUS] [-t SECONDS] [-d] KERNEL INITRAMFS LOG MARKER
#        boot.sh [-a ARCH] -c     only check that ARCH's QEMU is installed
#   -a  the guest's architecture, amd64 or arm64 [the host's]
#   -g  simulated GPUs [1]
#   -t  hard limit on the run, seconds [900]
#   -d  the stock kernel's own checkers on: SLUB red zones and poisoning,
#       page poisoning, KFENCE (6.12); the test suite's runs
# Environment: GDRMAP_VM_ACCEL (QEMU accelerator) [tcg], GDRMAP_VM_MEM
# (guest RAM) [1G], GDRMAP_VM_SMP (guest CPUs) [2], GDRMAP_VM_GPUMEM (each
# GPU's memory, host memory) [256M].
# Exit status: QEMU's (124 or 137: the limit was reached).
set -eu

die() { echo "boot: $*" >&2; exit 1; }
usage="usage: $0 [-a ARCH] [-g GPUS] [-t SECONDS] [-d] KERNEL INITRAMFS LOG MARKER | [-a ARCH] -c"
arch='' gpus=1 limit=900 kdebug='' check=''
while getopts "a:g:t:dc" opt; do
	case $opt in
	c) check=1 ;;
	a) arch=$OPTARG ;;
	g) gpus=$OPTARG ;;
	t) limit=$OPTARG ;;
	d) kdebug="slub_debug=FZPU page_poison=1 kfence.sample_interval=10" ;;
	*) die "$usage" ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$check" ] || [ $# = 4 ] || die "$usage"
arch=${arch:-$(dpkg --print-architecture)}

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
[ -z "$check" ] || exit 0
kernel=$1 initrd=$2 log=$3 marker=$4

# One ivshmem-plain device per simulated GPU, each with its own memory;
# nvsim numbers them in PCI order, as CUDA's ordinals.
gpuargs='' i=0
while [ $i -lt "$gpus" ]; do
	gpuargs="$gpuargs -object memory-backend-ram,id=gpumem$i,size=${GDRMAP_VM_GPUMEM:-256M},share=on"
	gpuargs="$gpuargs -device ivshmem-plain,memdev=gpumem$i"
	i=$((i + 1))
done

# -no-reboot turns the guest's panic (panic=-1) or reboot into an exit;
# timeout bounds a hung guest.
boot() {
	set +e
	# shellcheck disable=SC2086
	timeout -k 10 "$limit" $qemu $qemu_machine \
		-smp "${GDRMAP_VM_SMP:-2}" -m "${GDRMAP_VM_MEM:-1G}" \
		-nographic -no-reboot -nodefaults -serial stdio -monitor none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=$console panic=-1 quiet log_buf_len=4M printk.devkmsg=on $kdebug $karch" \
		$gpuargs \
		</dev/null >"$log" 2>&1
	qrc=$?
	set -e
}
boot
# Under TCG stock 6.12 and 7.3 kernels took an int3 Oops while patching
# their own code 4 s into boot (twice in the 2026-11-23 runs, before
# tsc=unstable above removed the patching that was seen to die).
if ! grep -aqF -- "$marker" "$log"; then
	cp "$log" "$log.boot1"
	echo "boot: the guest kernel died before init started (qemu exit $qrc; no gdrmap code had run; log kept as $log.boot1); booting once more"
	boot
fi
exit $qrc
