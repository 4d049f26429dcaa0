#!/bin/sh
# Packages built on a newer distribution install and run on Debian 12, as
# docs/containers.md's image (debian:12-slim) needs: the .debs are built
# by build-debs.sh in a Debian 13 root file system (glibc 2.38 or newer,
# whose headers turn strtol and kin into __isoc23_* symbols under
# _GNU_SOURCE: common/glibc_compat.h keeps the old ones), then
#   - libgdrapi2's and gdrmap-tools' libc6 dependency is at most Debian
#     12's glibc, and no symbol of the library or the command needs more;
#   - both install with dpkg into the container's Debian 12 root file
#     system (packaging/rootfs.sh), where gdrmap runs.
# Both roots are cached by rootfs.sh (the build root with the build
# dependencies of packaging/debian/control); a run unpacks them and builds
# once: about a minute on 2 cores.
# Exit 0 pass, 1 fail, 77 skip (not root, no mmdebstrap).  -k keeps the
# work directory.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$top/build}
jsonq=$O/tests/tools/jsonq
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES LD_LIBRARY_PATH || true
name=newer-glibc
. "$top/tests/packaging/roottest.sh"
[ -x "$jsonq" ] || die "$jsonq is missing: make tools first"
debian12_glibc=2.36

# The build dependencies, as names mmdebstrap installs (the virtual
# debhelper-compat and dh-sequence-python3 are provided by these).
deps=$(sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*:/p' "$top/packaging/debian/control" |
	sed '1s/^Build-Depends://; /^[A-Z][A-Za-z-]*:/d' | tr ',' '\n' |
	sed 's/([^)]*)//g; s/^[[:space:]]*//; s/[[:space:]]*$//' |
	sed 's/^debhelper-compat$/debhelper/; s/^dh-sequence-python3$/dh-python/' |
	grep . | sort -u | tr '\n' ' ')
step "the Debian 13 build root (build-essential $deps)"
build=$work/build-root
make_root "$build" -s trixie -p "build-essential $deps"
glibc=$(chroot "$build" dpkg-query -W -f='${Version}' libc6)
expect "the build root's glibc ($glibc) redirects to __isoc23_* (2.38 or newer)" \
	dpkg --compare-versions "$glibc" ge 2.38

step "build-debs.sh there"
mkdir "$build/src"
tar -C "$top" --exclude=./.git --exclude='./build' --exclude='./build-*' -cf - . |
	tar -C "$build/src" -xf -
unshare --mount --propagation private sh -c '
	mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" &&
	exec chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		sh -c "cd /src && packaging/build-debs.sh /debs"' sh "$build" \
	>"$work/build.out" 2>&1 || { cat "$work/build.out"; die "build-debs.sh in the Debian 13 root"; }
debs=$build/debs

for p in libgdrapi2 gdrmap-tools; do
	dep=$(dpkg-deb -f "$debs/${p}_"*.deb Depends | tr ',' '\n' | sed -n 's/^ *libc6 (>= \(.*\))$/\1/p')
	expect "$p depends on libc6 >= $dep, at most Debian 12's $debian12_glibc" \
		dpkg --compare-versions "${dep:-0}" le $debian12_glibc
	mkdir -p "$work/x/$p"
	dpkg-deb -x "$debs/${p}_"*.deb "$work/x/$p"
done
need=$(find "$work/x" -type f \( -name 'libgdrapi.so.*' -o -name gdrmap \) -exec readelf --dyn-syms -W {} + |
	grep -oE '(GLIBC_[0-9.]+|__isoc23_[a-z]+)' | sort -u -V)
newest=$(echo "$need" | sed -n 's/^GLIBC_//p' | sort -V | tail -n 1)
expect "no __isoc23_ symbol in the library or the command ($(echo $need))" \
	sh -c "! echo '$need' | grep -q __isoc23_"
expect "the newest glibc symbol version is at most $debian12_glibc ($newest)" \
	dpkg --compare-versions "$newest" le $debian12_glibc

step "install them in the container's Debian 12 root and run gdrmap"
mkdir -p "$root/tmp/debs"
cp "$debs"/libgdrapi2_*.deb "$debs"/gdrmap-tools_*.deb "$root/tmp/debs/"
if chroot "$root" sh -c 'dpkg -i /tmp/debs/*.deb' >"$work/dpkg.log" 2>&1; then
	ok
	chroot=$(command -v chroot)
	run() { env -i PATH=/usr/bin:/bin HOME=/root "$chroot" "$root" "$@"; }
	expect "gdrmap --version runs on Debian 12" sh -c "'$chroot' '$root' gdrmap --version | grep -q '^gdrmap '"
	run gdrmap doctor --json >"$work/doctor.json" 2>"$work/doctor.err" || true
	expect "gdrmap doctor --json runs there: $(head -c 300 "$work/doctor.err")" "$jsonq" "$work/doctor.json"
else
	bad "dpkg -i of packages built on Debian 13 into Debian 12: $(tail -n 5 "$work/dpkg.log")"
fi

step "done"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
