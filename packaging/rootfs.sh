#!/bin/sh
# Unpack the Debian 12 root file system that the root-only packaging
# tests run in into the empty directory $1: minbase, as debian:12-slim
# is, plus the container Dockerfile's RUNTIME_PACKAGES.  It is built once
# with mmdebstrap from Debian's archive (minutes) and cached as a tarball
# in ~/.cache/gdrmap-rootfs; later calls only unpack it.  Progress goes to
# stdout.  The packages come from the Debian archive of this machine's apt
# sources (scripts/debian-mirror.sh); GDRMAP_DEBIAN_MIRROR overrides it.
# Exit 0 done, 1 failed, 77 when mmdebstrap is missing.
set -eu

if [ $# != 1 ] || [ ! -d "$1" ]; then echo "usage: $0 EMPTY-DIRECTORY" >&2; exit 1; fi
root=$1
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/debian-mirror.sh"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gdrmap-rootfs
die() { echo "FAIL: $*" >&2; exit 1; }

command -v mmdebstrap >/dev/null ||
	{ echo "SKIP: mmdebstrap is not installed (apt-get install mmdebstrap; scripts/deps.sh does)"; exit 77; }
mirror=$(debian_mirror) || die "no Debian archive to build the root file system from"
pkgs=$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' "$top/packaging/container/Dockerfile")
[ -n "$pkgs" ] || die "the Dockerfile names no RUNTIME_PACKAGES"
key=$(printf 'bookworm minbase %s %s\n' "$pkgs" "$mirror" | sha256sum | cut -c1-16)
tarball=$cache/rootfs-$key.tar
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 || die "cannot lock $cache/.lock"
if [ ! -f "$tarball" ]; then
	echo "building the Debian 12 root file system (mmdebstrap, once: cached in $cache)"
	rm -f "$cache"/rootfs-*.tar
	# shellcheck disable=SC2086
	nice mmdebstrap --variant=minbase --include="$(echo $pkgs | tr ' ' ,)" \
		bookworm "$cache/.part-$key.tar" "$mirror" >"$cache/mmdebstrap.log" 2>&1 ||
		{ tail -n 20 "$cache/mmdebstrap.log"; rm -f "$cache/.part-$key.tar"; die "mmdebstrap"; }
	mv "$cache/.part-$key.tar" "$tarball"
fi
tar -C "$root" -xf "$tarball" || die "unpacking $tarball"
