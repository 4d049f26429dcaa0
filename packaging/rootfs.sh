#!/bin/sh
# Unpack a Debian root file system for the root-only packaging tests into
# the empty directory DIR:
#   packaging/rootfs.sh [-s SUITE] [-p PACKAGES] [-v VARIANT] DIR
# By default the container's: Debian 12 (bookworm) minbase, as
# debian:12-slim is, plus the container Dockerfile's RUNTIME_PACKAGES;
# -s another suite, -p other packages (space-separated; "" for none), -v
# another mmdebstrap variant.  Each is built once with mmdebstrap
# (minutes) and cached as a tarball in ~/.cache/gdrmap-rootfs; later calls
# only unpack it.  Progress goes to stdout.  The packages come from the
# Debian archive of this machine's apt sources (scripts/debian-mirror.sh);
# GDRMAP_DEBIAN_MIRROR overrides it.
# Exit 0 done, 1 failed, 77 when mmdebstrap is missing.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "FAIL: $*" >&2; exit 1; }
usage() { echo "usage: $0 [-s SUITE] [-p PACKAGES] [-v VARIANT] EMPTY-DIRECTORY" >&2; exit 1; }
suite=bookworm variant=minbase pkgs=
pkgs_given=0
while getopts "s:p:v:" opt; do
	case $opt in
	s) suite=$OPTARG ;;
	p) pkgs=$OPTARG pkgs_given=1 ;;
	v) variant=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] && [ -d "$1" ] || usage
root=$1
. "$top/scripts/debian-mirror.sh"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gdrmap-rootfs

command -v mmdebstrap >/dev/null ||
	{ echo "SKIP: mmdebstrap is not installed (apt-get install mmdebstrap; scripts/deps.sh does)"; exit 77; }
mirror=$(debian_mirror) || die "no Debian archive to build the root file system from"
if [ $pkgs_given = 0 ]; then
	pkgs=$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' "$top/packaging/container/Dockerfile")
	[ -n "$pkgs" ] || die "the Dockerfile names no RUNTIME_PACKAGES"
fi
# One tarball per suite and variant, replaced when its packages or mirror
# change; other kinds stay cached.
kind=$suite-$variant
key=$(printf '%s %s %s %s\n' "$suite" "$variant" "$pkgs" "$mirror" | sha256sum | cut -c1-16)
tarball=$cache/rootfs-$kind-$key.tar
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 || die "cannot lock $cache/.lock"
if [ ! -f "$tarball" ]; then
	echo "building the $suite root file system ($variant${pkgs:+ + $pkgs}; mmdebstrap, once: cached in $cache)"
	rm -f "$cache/rootfs-$kind-"*.tar
	# shellcheck disable=SC2086
	nice mmdebstrap --variant="$variant" ${pkgs:+--include="$(echo $pkgs | tr ' ' ,)"} \
		"$suite" "$cache/.part-$key.tar" "$mirror" >"$cache/mmdebstrap-$kind.log" 2>&1 ||
		{ tail -n 20 "$cache/mmdebstrap-$kind.log"; rm -f "$cache/.part-$key.tar"; die "mmdebstrap"; }
	mv "$cache/.part-$key.tar" "$tarball"
fi
tar -C "$root" -xf "$tarball" || die "unpacking $tarball"
