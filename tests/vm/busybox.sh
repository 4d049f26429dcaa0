#!/bin/sh
# The static busybox that the test VM's initramfs gets for guest
# architecture ARCH: the host's (busybox-static, scripts/deps.sh) for the
# host's own architecture; for another, Debian's busybox-static of that
# architecture from the host's suite (the context of kernels.conf whose
# first suite it is), downloaded with that context's private apt lists and
# unpacked into the cache once, never installed.
#
# usage: busybox.sh ARCH      prints the program's path
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kl_prog=busybox.sh
. "$top/tests/kernels/matrix.sh"

[ $# = 1 ] || kl_die "usage: $0 ARCH"
arch=$1
if [ "$arch" = "$kl_host_arch" ]; then
	command -v busybox || kl_die "busybox not found: apt-get install busybox-static"
	exit 0
fi

ctx=$(awk -v s="$kl_host_suite" '$1 == "context" && $3 == s { print $2; exit }' "$kl_conf")
[ -n "$ctx" ] || kl_die "no context of $kl_conf has this host's suite ($kl_host_suite) first"
kl_prepare "$ctx" "$arch"
pkg=busybox-static:$arch
ver=$(kl_version "$ctx" "$pkg")
[ -n "$ver" ] || kl_die "no $pkg in the lists of $ctx"
dir=$kl_cache/guest/$arch/busybox-$(echo "$ver" | tr : _)

unpack() {
	[ -x "$dir/bin/busybox" ] && return 0
	kl_download "$ctx" "$pkg=$ver" || return 1
	rm -rf "$dir.new"
	mkdir -p "$dir.new"
	dpkg-deb -x "$(kl_deb_of "$ctx" "$pkg=$ver")" "$dir.new" || return 1
	rm -rf "$dir"
	mv "$dir.new" "$dir"
}
kl_locked "ctx-$ctx" unpack || kl_die "could not get $pkg $ver"
echo "$dir/bin/busybox"
