#!/bin/sh
# Build the rpms from the working tree: packaging/rpm/build-rpms.sh [OUTDIR]
# (default build/rpm).  Needs rpmbuild, gcc and make; RPMBUILD_OPTS is
# passed to rpmbuild.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$top/build/rpm}" && cd "${1:-$top/build/rpm}" && pwd)
ver=$(sed -n 's/^Version:[[:space:]]*//p' "$top/packaging/rpm/gdrmap.spec")
command -v rpmbuild >/dev/null || { echo "build-rpms: rpmbuild is not installed" >&2; exit 1; }

mkdir -p "$out/SOURCES"
# S: the links' targets keep their paths (python/gdrmap/fence.h).
tar -C "$top" --exclude=./.git --exclude='./build' --exclude='./build-*' \
	--exclude=./bench/results --transform "s,^\.,gdrmap-$ver,S" \
	-czf "$out/SOURCES/gdrmap-$ver.tar.gz" .
# RPMBUILD_OPTS=--nodeps where the rpm database knows no packages (Debian).
rpmbuild ${RPMBUILD_OPTS:-} --define "_topdir $out" -ba "$top/packaging/rpm/gdrmap.spec"
echo "rpms in $out/RPMS"
