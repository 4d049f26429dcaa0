#!/bin/sh
# make install into a DESTDIR: the files the issue asks for are there,
# the library links resolve, gdrapi.pc points at them, a program builds
# with pkg-config's flags from the staged tree, and make uninstall takes
# every file away again.  Exit 0 pass, 1 fail.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$top/build}
dest=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$top"

vars="O=$O DESTDIR=$dest PREFIX=/opt/gdrmap LIBDIR=/opt/gdrmap/lib64"
# shellcheck disable=SC2086
make --no-print-directory -s $vars install install-kmod-config install-dkms-src \
	>"$dest.log" 2>&1 || { cat "$dest.log"; rm -f "$dest.log"; fail "make install"; }
rm -f "$dest.log"
p=$dest/opt/gdrmap
for f in lib64/libgdrapi.so.2.6 lib64/libgdrapi.so.2 lib64/libgdrapi.so \
	include/gdrapi.h include/gdrconfig.h lib64/pkgconfig/gdrapi.pc \
	share/man/man3/gdrapi.3 share/man/man3/gdr_open.3 share/man/man4/gdrdrv.4 \
	share/man/man1/gdrmap.1; do
	[ -e "$p/$f" ] || fail "make install did not install $f"
done
[ "$(readlink "$p/lib64/libgdrapi.so")" = libgdrapi.so.2 ] || fail "libgdrapi.so link"
[ "$(readlink "$p/lib64/libgdrapi.so.2")" = libgdrapi.so.2.6 ] || fail "libgdrapi.so.2 link"
# The DKMS source is named by gdrmap's version (gdrapi.h's GDRMAP_VERSION_*).
v=$(sed -n 's/^#define GDRMAP_VERSION_MAJOR[[:space:]]*//p' "$top/include/gdrapi.h").$(sed -n \
	's/^#define GDRMAP_VERSION_MINOR[[:space:]]*//p' "$top/include/gdrapi.h")
for f in etc/modprobe.d/gdrdrv.conf etc/udev/rules.d/60-gdrdrv.rules \
	usr/src/gdrdrv-$v/dkms.conf usr/src/gdrdrv-$v/gdrdrv/Kbuild \
	usr/src/gdrdrv-$v/nvidia/nv-p2p.h usr/src/gdrdrv-$v/uapi/gdrdrv_ioctl.h; do
	[ -e "$dest/$f" ] || fail "make install-kmod-config install-dkms-src did not install $f"
done
grep -q 'GROUP="video", MODE="0660"' "$dest/etc/udev/rules.d/60-gdrdrv.rules" ||
	fail "the udev rule does not set group video, mode 0660"

# A consumer built against the staged tree, through its gdrapi.pc.
if command -v pkg-config >/dev/null; then
	export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$p/lib64/pkgconfig
	[ "$(pkg-config --modversion gdrapi)" = 2.6 ] || fail "gdrapi.pc version"
	printf '#include <gdrapi.h>\nint main(void) { int a, b; gdr_runtime_get_version(&a, &b); return !(a == 2 && b == 6); }\n' >"$dest/c.c"
	# shellcheck disable=SC2046
	cc -o "$dest/c" "$dest/c.c" $(pkg-config --cflags --libs gdrapi) ||
		fail "building with pkg-config --cflags --libs gdrapi"
	LD_LIBRARY_PATH=$p/lib64 "$dest/c" || fail "the consumer failed"
	rm -f "$dest/c" "$dest/c.c"
fi

# shellcheck disable=SC2086
make --no-print-directory -s $vars uninstall uninstall-dkms >/dev/null ||
	fail "make uninstall"
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || { echo "$left"; fail "make uninstall left files behind"; }
echo "make install and uninstall into DESTDIR work"
