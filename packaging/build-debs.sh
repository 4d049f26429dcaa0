#!/bin/sh
# Build the Debian packages from the working tree:
#   packaging/build-debs.sh [OUTDIR]        (default build/deb)
# The tree is copied (without .git and build outputs) to a scratch
# directory, packaging/debian becomes its debian/, and
# dpkg-buildpackage -us -uc -b runs there; the .debs land in OUTDIR.
# Needs dpkg-dev and debhelper (apt-get install debhelper).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/build/deb}" && cd "${1:-$top/build/deb}" && pwd)
for c in dpkg-buildpackage dh; do
	command -v $c >/dev/null ||
		{ echo "build-debs: $c is missing: apt-get install debhelper" >&2; exit 1; }
done
# Nothing from a calling make (O=, CC=, its jobserver) reaches the build.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES || true

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-debs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/gdrmap"
tar -C "$top" --exclude=./.git --exclude='./build' --exclude='./build-*' \
	--exclude=./bench/results --exclude=./debian -cf - . | tar -C "$scratch/gdrmap" -xf -
cp -r "$top/packaging/debian" "$scratch/gdrmap/debian"
if ! (cd "$scratch/gdrmap" && dpkg-buildpackage -us -uc -b -j"$(nproc)") \
	>"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "build-debs: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$scratch"/*.deb "$scratch"/*.changes "$scratch"/*.buildinfo "$out"/
echo "Debian packages in $out:"
ls "$out"/*.deb | sed 's|.*/|    |'
