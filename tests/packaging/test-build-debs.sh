#!/bin/sh
# packaging/build-debs.sh before it builds: with build dependencies
# missing it stops at once, names them and says the one command that
# installs them (apt-get build-dep ./packaging); without dpkg-dev it says
# the same.  (test-packages.sh and test-newcomer.sh build for real; the
# debug symbols' packages land in OUTDIR/dbgsym, checked there.)
# Exit 0 pass, 1 fail.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-bdeps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# A dpkg-checkbuilddeps that finds two packages missing, as on a fresh
# machine with debhelper alone, and a dpkg-buildpackage that must not run.
mkdir "$tmp/bin"
cat >"$tmp/bin/dpkg-checkbuilddeps" <<'EOS'
#!/bin/sh
[ "$1" = "${TOP}/packaging/debian/control" ] || { echo "called with $*" >&2; exit 3; }
echo "dpkg-checkbuilddeps: error: Unmet build dependencies: dh-python pybuild-plugin-pyproject" >&2
exit 1
EOS
printf '#!/bin/sh\necho called >"%s/built"\n' "$tmp" >"$tmp/bin/dpkg-buildpackage"
chmod +x "$tmp/bin/"*
rc=0
TOP=$top PATH=$tmp/bin:$PATH "$top/packaging/build-debs.sh" "$tmp/out" >"$tmp/missing.out" 2>&1 || rc=$?
[ $rc = 1 ] && ok || bad "missing dependencies: exit $rc, want 1"
grep -q "missing build dependencies: dh-python pybuild-plugin-pyproject; install them with: sudo apt-get build-dep ./packaging" "$tmp/missing.out" && ok ||
	bad "missing dependencies: named, with the fix: $(cat "$tmp/missing.out")"
[ ! -e "$tmp/built" ] && ok || bad "dpkg-buildpackage ran anyway"
[ -z "$(ls -A "$tmp/out" 2>/dev/null)" ] && ok || bad "build-debs left files in OUTDIR"

# No dpkg-dev at all: the same command.
mkdir "$tmp/empty"
for c in sh sed mkdir dirname pwd cat rm mktemp; do ln -s "$(command -v $c)" "$tmp/empty/$c"; done
rc=0
PATH=$tmp/empty "$top/packaging/build-debs.sh" "$tmp/out2" >"$tmp/nodev.out" 2>&1 || rc=$?
[ $rc = 1 ] && ok || bad "no dpkg-dev: exit $rc, want 1: $(cat "$tmp/nodev.out")"
grep -q "dpkg-dev is missing.*sudo apt-get build-dep ./packaging" "$tmp/nodev.out" && ok ||
	bad "no dpkg-dev: says what to install: $(cat "$tmp/nodev.out")"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
