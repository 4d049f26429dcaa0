#!/bin/sh
# The DKMS source tree (make install-dkms-src) builds gdrdrv.ko without
# DKMS, as `dkms build` would, against the newest installed Debian kernel
# headers, with nv-p2p.h from:
#   1. an NVIDIA open-module source found by itself under the source root
#      (NVIDIA_SRC_ROOT stands in for /usr/src): opensource flavour;
#   2. a proprietary NVIDIA source named by NVIDIA_SRC: proprietary flavour,
#      its imports checked for GPL-only kernel exports.
# (The in-tree nv-p2p.h is what test-packages.sh's DKMS builds use.)
# The stand-in sources hold gdrmap's own nv-p2p.h and one licence line.
# Exit 0 pass, 1 fail, 77 skip (no kernel headers).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
hdr=$(ls -d /usr/src/linux-headers-*-amd64 /usr/src/linux-headers-*-arm64 2>/dev/null |
	grep -Ev -- '-(cloud|rt)-' | sort -V | tail -n 1 || true)
[ -n "$hdr" ] || { echo "SKIP: no /usr/src/linux-headers-* here"; exit 77; }
kver=${hdr#/usr/src/linux-headers-}
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES NVIDIA_SRC || true

w=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-dkmstree.XXXXXX")
trap 'rm -rf "$w"' EXIT
make -s -C "$top" O="$w/o" DESTDIR="$w/dest" DKMSSRCDIR=/src install-dkms-src >/dev/null ||
	fail "make install-dkms-src"
tree=$(ls -d "$w"/dest/src/gdrdrv-*)

nvsrc() {	# dir, licence
	mkdir -p "$1/nvidia"
	cp "$top/kernel/nvidia/nv-p2p.h" "$1/nvidia/"
	echo "MODULE_LICENSE(\"$2\");" >"$1/nvidia/nv-frontend.c"
}
build() {	# name, expected flavour, make arguments...
	name=$1 want=$2; shift 2
	rm -rf "$w/b"; cp -r "$tree" "$w/b"
	(cd "$w/b" && make KVER="$kver" KDIR="$hdr" "$@") >"$w/$name.log" 2>&1 ||
		{ tail -n 20 "$w/$name.log"; fail "$name: the build failed"; }
	grep -m1 '^gdrdrv: kernel' "$w/$name.log" | sed 's/^/    /'
	desc=$(modinfo -F description "$w/b/gdrdrv/gdrdrv.ko")
	case $desc in *"for the $want NVIDIA driver"*) ;;
	*) fail "$name: built as '$desc', not for the $want driver" ;; esac
	[ "$(modinfo -F vermagic "$w/b/gdrdrv/gdrdrv.ko" | cut -d' ' -f1)" = "$kver" ] ||
		fail "$name: vermagic is not $kver"
}

nvsrc "$w/usr-src/nvidia-999.1" "Dual MIT/GPL"
nvsrc "$w/usr-src/nvidia-998.1" "NVIDIA"
build found-open opensource NVIDIA_SRC_ROOT="$w/usr-src"
grep -q "nv-p2p.h from $w/usr-src/nvidia-999.1/nvidia" "$w/found-open.log" ||
	fail "found-open: the newest source under the root was not used"
nvsrc "$w/proprietary" "NVIDIA"
build named-proprietary proprietary NVIDIA_SRC="$w/proprietary"
grep -q "none of them GPL-only" "$w/named-proprietary.log" ||
	fail "named-proprietary: the module's imports were not checked for GPL-only exports"
echo "the DKMS tree builds for $kver against found and named NVIDIA sources"
