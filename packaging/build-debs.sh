#!/bin/sh
# Build the Debian packages from the working tree:
#   packaging/build-debs.sh [OUTDIR]        (default build/deb)
# The tree is copied (without .git and build outputs) to a scratch
# directory, packaging/debian becomes its debian/, and
# dpkg-buildpackage -us -uc -b runs there; the .debs land in OUTDIR, the
# debug symbols' packages (-dbgsym) in OUTDIR/dbgsym, so that
# `apt-get install ./build/deb/*.deb` installs the packages themselves.
# Needs the build dependencies of packaging/debian/control: from the top
# of the tree, sudo apt-get build-dep ./packaging installs them.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$top/build/deb}" && cd "${1:-$top/build/deb}" && pwd)
fix="install them with: sudo apt-get build-dep ./packaging (from the top of the tree, $top)"
command -v dpkg-checkbuilddeps >/dev/null && command -v dpkg-buildpackage >/dev/null ||
	{ echo "build-debs: dpkg-dev is missing, with the other build dependencies; $fix" >&2; exit 1; }
# dpkg-buildpackage would stop at the same check, after copying the tree,
# with "Unmet build dependencies" as its last word: say what to do.
if ! unmet=$(dpkg-checkbuilddeps "$top/packaging/debian/control" 2>&1); then
	unmet=$(echo "$unmet" | sed -n 's/.*Unmet build dependencies: //p')
	echo "build-debs: missing build dependencies: ${unmet:-see dpkg-checkbuilddeps packaging/debian/control}; $fix" >&2
	exit 1
fi
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
rm -rf "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/dbgsym
mkdir "$out/dbgsym"
for f in "$scratch"/*.deb "$scratch"/*.ddeb; do
	[ -e "$f" ] || continue
	case ${f##*/} in
	*-dbgsym_*) mv "$f" "$out/dbgsym/" ;;
	*) mv "$f" "$out/" ;;
	esac
done
mv "$scratch"/*.changes "$scratch"/*.buildinfo "$out"/
echo "Debian packages in $out (debug symbols in $out/dbgsym):"
ls "$out"/*.deb | sed 's|.*/|    |'
