#!/bin/sh
# Pack a staging directory into a gzip'd initramfs for the test VM, adding
# busybox and the host's shared libraries (and ld-linux) that the staged
# programs need, so the test programs run unchanged inside the VM.
#
# usage: mkinitramfs.sh STAGING_DIR OUTPUT.cpio.gz
# STAGING_DIR must hold /init; libraries staged under /usr/lib/gdrmap are
# found there first.
set -eu

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[ $# = 2 ] || die "usage: $0 STAGING_DIR OUTPUT"
stage=$1 out=$2
[ -x "$stage/init" ] || die "$stage/init missing or not executable"
for t in cpio gzip ldd readelf; do
	command -v $t >/dev/null || die "$t not found (install cpio, gzip, libc-bin, binutils)"
done
busybox=$(command -v busybox) || die "busybox not found: apt-get install busybox-static"
! readelf -l "$busybox" | grep -q INTERP ||
	die "$busybox is not static: apt-get install busybox-static"

mkdir -p "$stage/bin" "$stage/sbin" "$stage/proc" "$stage/sys" \
	"$stage/dev" "$stage/tmp" "$stage/lib64" "$stage/usr/lib/gdrmap"
cp "$busybox" "$stage/bin/busybox"

# Copy every library a staged dynamic ELF needs, at the path ldd found it.
# ldd skips scripts and static programs with a message on stderr.
libs=$(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \) |
	LD_LIBRARY_PATH="$stage/usr/lib/gdrmap" xargs -r ldd 2>/dev/null |
	awk '/=> \// {print $3} /^\t\/[^ ]*ld-linux/ {print $1}' | sort -u)
for lib in $libs; do
	case $lib in "$stage"/*) continue ;; esac
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done
# The dynamic loader is looked up at the path written in the binaries.
if [ -e /lib64/ld-linux-x86-64.so.2 ] && [ ! -e "$stage/lib64/ld-linux-x86-64.so.2" ]; then
	cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib64/"
fi

(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
