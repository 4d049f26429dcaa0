#!/bin/sh
# The rpm spec: it parses (rpmspec), names the five packages, and the
# library's recommends the Vulkan loader and libglvnd; where
# rpmbuild exists, the rpms build from the working tree (--nodeps: the
# rpm database of a Debian machine knows no packages) and hold the files
# they should.  Exit 0 pass, 1 fail, 77 skip (no rpmspec).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
spec=$top/packaging/rpm/gdrmap.spec
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v rpmspec >/dev/null ||
	{ echo "SKIP: rpmspec is not installed (apt-get install rpm)"; exit 77; }

names=$(rpmspec -q --qf '%{NAME}\n' "$spec" 2>&1) || { echo "$names"; fail "rpmspec -q"; }
for p in gdrmap gdrmap-devel gdrmap-tools gdrmap-dkms python3-gdrmap; do
	echo "$names" | grep -qx "$p" || { echo "$names"; fail "the spec has no package $p"; }
done
rpmspec -P "$spec" >/dev/null || fail "rpmspec -P"
# The module-free backend's run-time needs come with a normal install.
rec=$(rpmspec -q --qf '%{NAME}: [%{RECOMMENDNAME} ]\n' "$spec" | grep '^gdrmap:')
for p in vulkan-loader libglvnd libglvnd-egl; do
	case " $rec " in *" $p "*) ;; *) fail "gdrmap does not recommend $p ($rec)" ;; esac
done
command -v rpmbuild >/dev/null || { echo "the rpm spec parses (no rpmbuild: not built)"; exit 0; }

unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES || true
out=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-rpm.XXXXXX")
trap 'rm -rf "$out"' EXIT
RPMBUILD_OPTS=--nodeps "$top/packaging/rpm/build-rpms.sh" "$out" >"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log"; fail "rpmbuild"; }
check() {	# package, files it must hold
	rpm=$(ls "$out"/RPMS/*/"$1"-[0-9]*.rpm 2>/dev/null | head -n 1)
	[ -n "$rpm" ] || fail "no $1 rpm was built"
	shift
	list=$(rpm -qlp "$rpm" 2>/dev/null)
	for f in "$@"; do
		echo "$list" | grep -q "$f\$" || fail "$(basename "$rpm") lacks $f"
	done
}
check gdrmap /libgdrapi.so /libgdrapi.so.2 /libgdrapi.so.2.6
check gdrmap-devel /include/gdrapi.h /pkgconfig/gdrapi.pc /man3/gdr_open.3
check gdrmap-tools /bin/gdrmap /man1/gdrmap.1
check python3-gdrmap /gdrmap/__init__.py /gdrmap/mapping.py
check gdrmap-dkms /dkms.conf /gdrdrv/Kbuild /modprobe.d/gdrdrv.conf /60-gdrdrv.rules /man4/gdrdrv.4
echo "the rpm spec parses and builds: $(echo $names)"
