#!/bin/sh
# One kernel of the matrix (tests/kernels/kernels.conf), by name:
#
#   kernel.sh [-a ARCH] fetch [-b] NAME   resolve, download and unpack it (with -b
#                                         its image too); prints KNAME= KARCH= KVER=
#                                         KDEBVER= KDIR= VMLINUZ= KCHROOT= KCC= KPAGE=
#                                         KPKGS= (its packages, name=version)
#   kernel.sh [-a ARCH] run NAME CMD...   run CMD in the tree where NAME's modules
#                                         build: its suite's chroot, or the host
#   kernel.sh [-a ARCH] names [VM...]     the kernel names (whose VM field is one of VM)
#   kernel.sh prepare CONTEXT...          make the contexts' chroots and update their
#                                         lists, all at once (check-kernels.sh)
#
# NAME `newest` is the newest of the kernels marked "newest" for ARCH.  ARCH
# defaults to the host's.  Messages go to stderr; exit 1 on failure, 77
# when the kernel builds in a chroot and this is not root.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kl_prog=kernel.sh
. "$top/tests/kernels/matrix.sh"

usage() { kl_die "usage: $0 [-a ARCH] fetch [-b] NAME | run NAME CMD... | names [VM...] | prepare CONTEXT..."; }

arch=$kl_host_arch
while getopts "a:" opt; do
	case $opt in
	a) arch=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
cmd=$1
shift

# kernel NAME: load its entry (resolving `newest`).
kernel() {
	name=$1
	if [ "$name" = newest ]; then
		name=$(newest) || {
			# Their chroots need root (kl_prepare said so).
			[ "$(id -u)" = 0 ] || exit 77
			kl_die "no kernel marked newest for $arch could be resolved"
		}
	fi
	kl_kernel "$name" "$arch" ||
		kl_die "no kernel '$1' for $arch in $kl_conf (known: $(kl_names "$arch" | tr '\n' ' ')newest)"
}

# The name of the newest bootable kernel among those marked "newest".
newest() {
	best= bestv=
	for n in $(kl_names "$arch" newest); do
		kl_kernel "$n" "$arch"
		kl_prepare "$k_ctx" "$k_arch" || continue
		KL_IMAGE=1 kl_resolve || continue
		if [ -z "$bestv" ] || dpkg --compare-versions "$kdebver" gt "$bestv"; then
			best=$n bestv=$kdebver
		fi
	done
	[ -n "$best" ] && echo "$best"
}

case $cmd in
fetch)
	KL_IMAGE=0
	[ "${1:-}" = -b ] && { KL_IMAGE=1; shift; }
	[ $# = 1 ] || usage
	kernel "$1"
	kl_fetch
	echo "KNAME=$k_name"
	echo "KARCH=$k_arch"
	echo "KVER=$kver"
	echo "KDEBVER=$kdebver"
	echo "KDIR=$kdir"
	echo "VMLINUZ=$vmlinuz"
	echo "KCHROOT=$kchroot"
	echo "KCC=$kcc"
	echo "KPAGE=$kpage"
	echo "KPKGS='$kpkgs'"
	;;
run)
	[ $# -ge 2 ] || usage
	kernel "$1"
	shift
	root=$(kl_chroot_of "$k_ctx")
	if [ -z "$root" ]; then
		cd "$top" && exec "$@"
	fi
	[ -e "$root/.ready" ] || kl_die "no chroot for $k_name yet: run '$0 fetch $k_name' first"
	kl_in_chroot "$root" sh -c 'cd "$1" && shift && exec "$@"' sh "$top" "$@"
	;;
names)
	kl_names "$arch" "$@"
	;;
prepare)
	pids=
	for c in "$@"; do
		kl_prepare "$c" &
		pids="$pids $!"
	done
	status=0
	for p in $pids; do wait "$p" || status=1; done
	exit $status
	;;
*) usage ;;
esac
