#!/bin/sh
# Fetch one kernel of the matrix (tests/kernels/kernels.conf) for a VM:
# image and headers, from Debian's archive into a cache directory, unpacked
# there (the host's /boot, /lib/modules and apt sources are never touched),
# with what builds modules for it: the host, or a chroot of its suite.
#
# usage: fetch-kernel.sh [-a ARCH] KERNEL CACHEDIR
#   KERNEL  a name of kernels.conf (5.10, 6.1, 6.12, trixie, sid, ...) or
#           newest; ARCH defaults to the host's
# Prints the shell assignments KNAME= KARCH= KVER= KDEBVER= KDIR= VMLINUZ=
# KCHROOT= KCC= KPAGE= on stdout (tests/kernels/kernel.sh says what they
# are); everything else goes to stderr.
set -eu
arch=
while getopts "a:" opt; do
	case $opt in
	a) arch=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || { echo "usage: $0 [-a ARCH] KERNEL CACHEDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
GDRMAP_VM_CACHE=$2 exec "$top/tests/kernels/kernel.sh" ${arch:+-a "$arch"} fetch -b "$1"
