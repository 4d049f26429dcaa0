#!/bin/sh
# Pack a staging directory into a gzip'd initramfs for the test VM, adding
# busybox and the shared libraries (and the dynamic loader) that the staged
# programs need, so the test programs run unchanged inside the VM.
#
# usage: mkinitramfs.sh [-b BUSYBOX] [-L LIBDIR]... STAGING_DIR OUTPUT.cpio.gz
#   -b  a static busybox for the guest's architecture [the host's]
#   -L  where the guest's libraries are found, in order [the host's
#       multiarch directories]; for a cross-built guest its sysroot, e.g.
#       /usr/aarch64-linux-gnu/lib
# STAGING_DIR must hold /init; libraries staged under /usr/lib/gdrmap are
# found there first.  The programs' libraries are read from their ELF
# headers (readelf), not by running ldd, so programs of another
# architecture are packed the same way.
set -eu

die() { echo "mkinitramfs: $*" >&2; exit 1; }
usage="usage: $0 [-b BUSYBOX] [-L LIBDIR]... STAGING_DIR OUTPUT"

busybox= libdirs=
while getopts "b:L:" opt; do
	case $opt in
	b) busybox=$OPTARG ;;
	L) libdirs="$libdirs $OPTARG" ;;
	*) die "$usage" ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || die "$usage"
stage=$1 out=$2
[ -x "$stage/init" ] || die "$stage/init missing or not executable"
for t in cpio gzip readelf; do
	command -v $t >/dev/null || die "$t not found (install cpio, gzip, binutils)"
done
if [ -z "$busybox" ]; then
	busybox=$(command -v busybox) ||
		die "busybox not found: apt-get install busybox-static"
fi
[ -f "$busybox" ] || die "no busybox at $busybox"
! readelf -l "$busybox" | grep -q INTERP ||
	die "$busybox is not static: apt-get install busybox-static"
if [ -z "$libdirs" ]; then
	multiarch=$(gcc -print-multiarch 2>/dev/null) || multiarch=
	libdirs="/lib/$multiarch /usr/lib/$multiarch /lib64 /lib"
fi

mkdir -p "$stage/bin" "$stage/sbin" "$stage/proc" "$stage/sys" \
	"$stage/dev" "$stage/tmp" "$stage/lib" "$stage/usr/lib/gdrmap"
cp "$busybox" "$stage/bin/busybox"

# The first of the library directories holding $1.
find_lib() {
	for d in "$stage/usr/lib/gdrmap" $libdirs; do
		[ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
	done
	return 1
}

# What one ELF file asks for: its loader (by path) and its libraries.
interp_of() {
	readelf -l "$1" 2>/dev/null |
		sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p'
}
needed_of() {
	readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

# Every staged dynamic ELF, then every library copied in, until nothing new
# is needed.  Libraries go to /lib, which every dynamic loader searches; the
# loader goes where the programs name it.
todo=$(find "$stage" -type f \( -perm -u+x -o -name '*.so*' \))
while [ -n "$todo" ]; do
	next=
	for f in $todo; do
		head -c 4 "$f" | grep -q 'ELF' || continue
		loader=$(interp_of "$f")
		if [ -n "$loader" ] && [ ! -e "$stage$loader" ]; then
			src=$(find_lib "${loader##*/}") ||
				die "no ${loader##*/} (loader of $f) in:$libdirs"
			mkdir -p "$stage${loader%/*}"
			cp -L "$src" "$stage$loader"
		fi
		for lib in $(needed_of "$f"); do
			[ -e "$stage/usr/lib/gdrmap/$lib" ] && continue
			[ -e "$stage/lib/$lib" ] && continue
			src=$(find_lib "$lib") ||
				die "no $lib (needed by ${f#"$stage"}) in:$libdirs"
			cp -L "$src" "$stage/lib/$lib"
			next="$next $stage/lib/$lib"
		done
	done
	todo=$next
done

(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
