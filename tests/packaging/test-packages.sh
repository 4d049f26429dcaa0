#!/bin/sh
# The Debian packages, end to end, on this machine (as root):
#   1. build them with dpkg-buildpackage from a copy of the tree (or take
#      those in GDRMAP_DEBS, which check-packages builds once for this
#      test and test-container.sh);
#   2. install them with apt-get over stand-ins for NVIDIA's libgdrapi and
#      gdrdrv-dkms, which they must replace, and check a package depending
#      on libgdrapi (>= 2.6-1) installs on them (DKMS builds gdrdrv for
#      every kernel with headers; a running kernel without headers must
#      not matter);
#   3. compile a consumer found through `pkg-config gdrapi` and run it
#      (no GPU needed: version query, gdr_open failing cleanly), run
#      the installed `gdrmap doctor` (exit 0 without a GPU), and use the
#      Python package with Debian's python3 (the installed library,
#      command and compiled flag helper; gdr_open failing with its
#      explanation);
#   4. check gdrdrv.ko was built by DKMS for the newest installed
#      /usr/src/linux-headers-* (built with -k if the postinst had not);
#   5. purge them and check /usr /etc /lib /var/lib/dkms hold exactly the
#      files they held before and that DKMS knows no gdrdrv any more.
# Packages left by an earlier, interrupted run are purged first, and they
# are purged on the way out whatever happens.
#
# Exit 0 pass, 1 fail, 77 skip (not root, not Debian).  -k keeps the
# work directory.  Needs debhelper, dkms, pkgconf, gcc, make, man-db (installed
# with apt-get when missing).
set -eu

keep=0
[ "${1:-}" = -k ] && keep=1
top=$(cd "$(dirname "$0")/../.." && pwd)
PKGS="gdrmap gdrmap-tools gdrmap-tools-dbgsym gdrmap-dkms libgdrapi-dev libgdrapi2 libgdrapi2-dbgsym python3-gdrmap python3-gdrmap-dbgsym"
# Stand-ins for NVIDIA's packages of these names, made by this test.
NV_PKGS="gdrcopy-tests libgdrapi gdrdrv-dkms"
DEPS="debhelper dkms pkgconf gcc make libc6-dev man-db dh-python pybuild-plugin-pyproject python3-all python3-all-dev"
SNAP_DIRS="/usr /etc /lib /var/lib/dkms"
# Another apt or dpkg at work on this machine is waited for, not failed on.
APT="apt-get -o DPkg::Lock::Timeout=600"

if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root (apt-get, dpkg, dkms)"; exit 77; fi
for c in dpkg apt-get dpkg-query; do
	command -v $c >/dev/null || { echo "SKIP: not a Debian system (no $c)"; exit 77; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-pkgtest.XXXXXX")
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
# A clean build: nothing from a calling make (O=, CC=, jobserver) or loader paths.
unset LD_LIBRARY_PATH PKG_CONFIG_PATH MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES || true

installed_pkgs() {
	for p in $NV_PKGS $PKGS; do
		dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$p" 2>/dev/null |
			awk '$2 !~ /^un/ && $2 !~ /^pn/ {print $1}'
	done
}
purge_all() {
	p=$(installed_pkgs)
	[ -z "$p" ] || $APT purge -y $p >"$work/purge.log" 2>&1 ||
		{ cat "$work/purge.log"; return 1; }
}
snapshot() {
	find $SNAP_DIRS -xdev 2>/dev/null | LC_ALL=C sort >"$1"
}
cleanup() {
	rc=$?
	purge_all || rc=1
	if [ $keep = 1 ]; then echo "work directory: $work"; else rm -rf "$work"; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

step "purge what an earlier run left"
purge_all || fail "could not purge an earlier run's packages"

missing=
for p in $DEPS; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	step "install build dependencies:$missing"
	{ $APT update -qq && $APT install -y -qq --no-install-recommends $missing; } \
		>"$work/deps.log" 2>&1 || { tail -n 20 "$work/deps.log"; fail "apt-get install$missing"; }
fi

snapshot "$work/before.list"

if [ -n "${GDRMAP_DEBS:-}" ]; then
	step "the packages check-packages built ($GDRMAP_DEBS)"
	ln -s "$GDRMAP_DEBS" "$work/debs"
else
	step "build the packages (build-debs.sh: dpkg-buildpackage -us -uc -b)"
	"$top/packaging/build-debs.sh" "$work/debs" >"$work/build.out" 2>&1 ||
		{ cat "$work/build.out"; fail "building the packages"; }
fi
grep -E '^(dpkg-gensymbols|dh_missing): (warning|error)' "$work/debs/build.log" &&
	fail "the build warned about symbols or files no package installs"
ls "$work"/debs/*.deb | sed 's|.*/|    |'
# What the README installs (build/deb/*.deb): the packages, not their
# debug symbols, which wait in dbgsym/.
ls "$work"/debs/*-dbgsym_*.deb >/dev/null 2>&1 &&
	fail "debug symbol packages among the packages (build-debs.sh puts them in dbgsym/)"
ls "$work"/debs/dbgsym/libgdrapi2-dbgsym_*.deb >/dev/null 2>&1 ||
	fail "no libgdrapi2-dbgsym in $work/debs/dbgsym"

# Packages with the names, versions and files of NVIDIA's (nothing else
# of theirs): ours must replace them and satisfy what depends on them.
fake_deb() {	# name, extra control lines, files (path=content)...
	d=$work/fake/$1; mkdir -p "$d/DEBIAN"
	printf 'Package: %s\nVersion: 2.6-1\nArchitecture: %s\nMaintainer: test <test@invalid>\nDescription: stand-in for NVIDIA %s (test)\n%s' \
		"$1" "$(dpkg --print-architecture)" "$1" "$2" >"$d/DEBIAN/control"
	n=$1; shift 2
	for f in "$@"; do
		mkdir -p "$d/$(dirname "${f%%=*}")"; echo "${f#*=}" >"$d/${f%%=*}"
	done
	dpkg-deb -b "$d" "$work/fake/$n.deb" >/dev/null
}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
fake_deb libgdrapi "" "usr/lib/$ma/libgdrapi.so.2.6=nvidia" "usr/include/gdrapi.h=nvidia"
fake_deb gdrdrv-dkms "" "usr/src/gdrdrv-2.6/dkms.conf=nvidia"
fake_deb gdrcopy-tests "Depends: libgdrapi (>= 2.6-1)
" "usr/bin/copylat=nvidia"
step "install stand-ins for NVIDIA's libgdrapi and gdrdrv-dkms"
$APT install -y "$work/fake/libgdrapi.deb" "$work/fake/gdrdrv-dkms.deb" >"$work/fake.log" 2>&1 ||
	{ cat "$work/fake.log"; fail "installing the stand-ins"; }

step "install ours with apt-get: they must replace those"
$APT install -y --no-install-recommends "$work"/debs/*.deb >"$work/install.log" 2>&1 ||
	{ tail -n 40 "$work/install.log"; fail "apt-get install (log: $work/install.log)"; }
grep '^gdrdrv ' "$work/install.log" | sed 's/^/    /' || true
for p in gdrmap gdrmap-tools gdrmap-dkms libgdrapi-dev libgdrapi2 python3-gdrmap; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" | grep -q '^ii' || fail "$p is not installed"
done

for p in libgdrapi gdrdrv-dkms; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' &&
		fail "NVIDIA's $p is still installed next to ours"
done
grep -q gdrmap /usr/include/gdrapi.h || fail "/usr/include/gdrapi.h is not gdrmap's"
$APT install -y --no-remove "$work/fake/gdrcopy-tests.deb" >"$work/fake.log" 2>&1 ||
	{ cat "$work/fake.log"; fail "gdrcopy-tests (Depends: libgdrapi (>= 2.6-1)) cannot be installed on ours"; }

step "compile and run a consumer found through pkg-config"
[ "$(pkg-config --modversion gdrapi)" = 2.6 ] ||
	fail "pkg-config --modversion gdrapi says '$(pkg-config --modversion gdrapi)', not 2.6"
cat >"$work/consumer.c" <<'CEOF'
#include <errno.h>
#include <stdio.h>
#include <gdrapi.h>
#include <gdrconfig.h>

int main(void)
{
	int major = -1, minor = -1, v = 0;
	gdr_t g;

	gdr_runtime_get_version(&major, &minor);
	if (major != GDR_API_MAJOR_VERSION || minor != GDR_API_MINOR_VERSION) {
		printf("runtime version %d.%d, header %d.%d\n", major, minor,
		       GDR_API_MAJOR_VERSION, GDR_API_MINOR_VERSION);
		return 1;
	}
	g = gdr_open();
	if (!g) {
		printf("version %d.%d; gdr_open: NULL (no GPU here), errno %d\n",
		       major, minor, errno);
		return 0;
	}
	/* A GPU host: the instance must answer and close. */
	if (gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v) != 0 &&
	    gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v) != 0)
		return 1;
	printf("version %d.%d; gdr_open worked\n", major, minor);
	return gdr_close(g) == 0 ? 0 : 1;
}
CEOF
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -o "$work/consumer" "$work/consumer.c" \
	$(pkg-config --cflags gdrapi) $(pkg-config --libs gdrapi) ||
	fail "the consumer does not compile with pkg-config's flags"
lib=$(ldd "$work/consumer" | awk '$1 == "libgdrapi.so.2" {print $3}')
real=$(readlink -f "$lib" 2>/dev/null || true)
owner=$(dpkg -S "${real#/usr}" "$real" 2>/dev/null | cut -d: -f1 | head -n 1 || true)
[ "$owner" = libgdrapi2 ] ||
	fail "the consumer links libgdrapi.so.2 from '$lib', not libgdrapi2's"
"$work/consumer" | sed 's/^/    /' || fail "the consumer failed"
man -w gdr_open gdr_copy_to_mapping gdrdrv >/dev/null 2>&1 || fail "man pages missing"
# The installed command, on the installed library (it has no run path).
[ -x /usr/bin/gdrmap ] || fail "gdrmap-tools installed no /usr/bin/gdrmap"
/usr/bin/gdrmap doctor >"$work/doctor.log" 2>&1 ||
	{ cat "$work/doctor.log"; fail "gdrmap doctor failed"; }
grep -E '^\[(ok  |warn|fail)\] library ' "$work/doctor.log" | sed 's/^/    /' || true

step "the Python package, on the installed library and command"
cat >"$work/use.py" <<'PYEOF'
import os, gdrmap
lib = gdrmap.library_path()
print("library", lib)
print("module", os.path.dirname(gdrmap.__file__))
print("helper", gdrmap.helper_path())
report = gdrmap.doctor()
print("doctor", report["tool"], report["command"], report["library"]["path"])
try:
    print("backend", gdrmap.backend())
except gdrmap.GdrmapError as e:
    print("opening failed, errno", e.errno, e.function)
    print(e.strerror.splitlines()[0])
PYEOF
# From /, with nothing of the tree or a local Python on the way.
(cd / && env -u PYTHONPATH -u GDRMAP_LIBRARY -u GDRMAP_COMMAND \
	/usr/bin/python3 "$work/use.py") >"$work/python.log" 2>&1 ||
	{ cat "$work/python.log"; fail "the installed Python package failed"; }
sed 's/^/    /' "$work/python.log"
lib=$(sed -n 's/^library //p' "$work/python.log")
[ "$(dpkg -S "$lib" 2>/dev/null | cut -d: -f1)" = libgdrapi2 ] ||
	fail "the Python package loaded '$lib', not libgdrapi2's"
grep -qx "module /usr/lib/python3/dist-packages/gdrmap" "$work/python.log" ||
	fail "python3 imported gdrmap from elsewhere than python3-gdrmap"
helper=$(sed -n 's/^helper //p' "$work/python.log")
[ "$(dpkg -S "$helper" 2>/dev/null | cut -d: -f1)" = python3-gdrmap ] ||
	fail "the Python package's flag helper is '$helper', not python3-gdrmap's"
grep -q "^doctor gdrmap doctor " "$work/python.log" ||
	fail "gdrmap.doctor() did not return the installed command's report"
grep -Eq '^(backend |gdrmap_open: no backend is usable)' "$work/python.log" ||
	fail "neither a backend nor gdrmap_open's explanation"

ver=$(dpkg-query -W -f='${Version}' gdrmap-dkms); ver=${ver%-*}
hdr=$(ls -d /usr/src/linux-headers-*-amd64 /usr/src/linux-headers-*-arm64 2>/dev/null |
	grep -Ev -- '-(cloud|rt)-' | sort -V | tail -n 1 || true)
if [ -z "$hdr" ]; then
	step "SKIP the DKMS build: no /usr/src/linux-headers-* here"
else
	kver=${hdr#/usr/src/linux-headers-}
	step "gdrdrv $ver built by DKMS for $kver"
	if ! dkms status -m gdrdrv -v "$ver" -k "$kver" 2>/dev/null | grep -q ': installed'; then
		echo "    (the postinst did not build it: dkms build -k $kver)"
		dkms build -m gdrdrv -v "$ver" -k "$kver" >"$work/dkms.log" 2>&1 &&
			dkms install -m gdrdrv -v "$ver" -k "$kver" >>"$work/dkms.log" 2>&1 ||
			{ tail -n 30 "$work/dkms.log"; cat /var/lib/dkms/gdrdrv/"$ver"/build/make.log 2>/dev/null | tail -n 30
			  fail "dkms could not build gdrdrv for $kver"; }
	fi
	dkms status -m gdrdrv 2>/dev/null | sed 's/^/    /'
	ko=$(modinfo -k "$kver" -F filename gdrdrv 2>/dev/null) ||
		fail "modinfo -k $kver finds no gdrdrv"
	case $ko in */updates/dkms/*) ;; *) fail "gdrdrv for $kver is $ko, not DKMS's" ;; esac
	magic=$(modinfo -F vermagic "$ko"); [ "${magic%% *}" = "$kver" ] ||
		fail "$ko has vermagic '$magic', not $kver"
	[ "$(modinfo -F version "$ko")" = 2.6 ] || fail "$ko does not say version 2.6"
fi

# What the packages and DKMS put on the machine, for judging differences.
for p in $(installed_pkgs); do dpkg -L "$p" 2>/dev/null; done |
	LC_ALL=C sort -u >"$work/owned.list"

step "purge them"
purge_all || fail "apt-get purge failed"
[ -z "$(installed_pkgs)" ] || fail "still installed: $(installed_pkgs)"
[ -z "$(dkms status -m gdrdrv 2>/dev/null)" ] ||
	fail "DKMS still knows gdrdrv: $(dkms status -m gdrdrv)"
snapshot "$work/after.list"
# A difference is ours if the packages owned that path, it lies where DKMS,
# modprobe or udev work, or its name says gdr; anything else was changed by another program
# meanwhile (this machine may run other jobs) and is only reported.
diff "$work/before.list" "$work/after.list" | sed -n 's/^[<>] //p' >"$work/changed.list" || true
ours=$(grep -Fx -f "$work/changed.list" "$work/owned.list" 2>/dev/null; \
	grep -E '^(/lib/modules/|/var/lib/dkms|/usr/src/|/etc/modprobe\.d/|/etc/udev/|/lib/udev/rules\.d/)|gdr' \
		"$work/changed.list") || true
if [ -n "$ours" ]; then
	diff "$work/before.list" "$work/after.list" | grep -E '^[<>]' | head -n 40 | sed 's/^/    /'
	fail "purging did not give back the same files (> left behind, < gone)"
fi
if [ -s "$work/changed.list" ]; then
	echo "    not ours, changed meanwhile by another program:"
	head -n 10 "$work/changed.list" | sed 's/^/      /'
fi

step "packages built, installed, used and purged without a trace"
